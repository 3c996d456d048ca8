"""kjournal-dev: fetch and run real Kafka and Cassandra on loopback for development and tests.

One subpackage per tool, over a few shared modules:

    platform/   the loopback platform: Kafka, Cassandra, the collector and the services
    security/   the secured platform's credentials, TLS, ACLs, roles and dev tokens
    generate/   files generated from the code: docs tables, chart values, plain manifests
    traces/     the collector's spans as a waterfall
    kind/       images and a kind cluster, built offline
    artifacts/  what is fetched or built into the build cache: jars, Go builds, the collector
    cli.py      the `kjournal-dev` command, composed from each tool's own cli.py

    config.py, errors.py, build_cache.py, process.py, java.py: shared by the tools
"""
