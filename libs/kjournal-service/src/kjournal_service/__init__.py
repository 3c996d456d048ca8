"""What the kjournal HTTP services (writer, reader) share: the FastAPI and uvicorn glue.

`kjournal` itself stays framework-free; each service keeps only what is its own (settings,
lifespan, routes) and builds on this:

- `app.service_app`: the FastAPI app with problem handlers, OpenAPI, middleware and metrics;
- `runner.run_service`: `python -m kjournal_<service>` (settings, logging, uvicorn);
- `deps` and `params`: request dependencies and path parameters;
- `health.health_router`: `/healthz`, `/readyz` and `/metrics`;
- `problems`: errors → `application/problem+json`.
"""
