"""The reader's routers: journals, topics, and health/readiness/metrics."""
