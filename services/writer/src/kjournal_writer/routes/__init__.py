"""The writer's routers: journal actions, and health/readiness/metrics."""
