"""The expiry job: `python -m kjournal_replicator.expiry` (or `kjournal expire`), run by the chart's
CronJob and by `kjournal-dev expire` (docs/operations.md).

`settings.py` (its `KJOURNAL_*` variables), `log.py` (the journal log over Kafka: scans and
purges), `job.py` (one run over the topics, metrics out), `__main__.py` (the command).
"""
