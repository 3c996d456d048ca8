"""Files generated from the code, each checked by a test and regenerated with `--write`.

settings_docs.py  docs/configuration.md from the settings classes
metrics_docs.py   docs/observability.md's metric table from the metrics catalogue
chart_values.py   helm/kjournal's settings values from the settings classes
k8s_manifests.py  k8s/ from helm template of helm/kjournal
cli.py            settings-docs | metrics-docs | chart-values | chart-manifests
"""
