"""What the kjournal HTTP services (writer, reader) share: the FastAPI and uvicorn glue.

`kjournal` itself stays framework-free; each service keeps only what is its own (settings,
lifespan, routes) and builds on this:

- `app.service_app`: the FastAPI app with problem handlers, OpenAPI, middleware and metrics;
- `hot_routes.HotRoutes`: serves a service's hot routes (the writer's append) past FastAPI's
  routing and dependency solving;
- `runner.run_service`: `python -m kjournal_<service>` (settings, logging, uvicorn);
- `deps` and `params`: request dependencies and path parameters;
- `health.health_router`: `/healthz`, `/readyz` and `/metrics`;
- `problems`: errors → `application/problem+json`.
"""
