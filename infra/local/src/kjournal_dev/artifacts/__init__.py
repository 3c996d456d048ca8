"""What is fetched or built into the per-machine build cache (kjournal_dev/build_cache.py).

maven.py      JVM bundles from Maven Central
gobuild.py    Go builds: which `go`, its environment and caches
collector.py  the OpenTelemetry Collector, built from Go modules
"""
