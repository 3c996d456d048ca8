"""The writer's routers: journal actions (health/readiness/metrics: kjournal_service.health)."""
