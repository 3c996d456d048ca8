"""`kjournal-dev kind` and `kjournal-dev images`: kjournal's container images and a real kind
cluster on this machine, with nothing pulled when no container registry is reachable.

    settings.py    where things live (cache vs state), KJOURNAL_DEV_KIND_* variables
    versions.py    pinned versions
    progress.py    long steps with a heartbeat and one-line failures
    packages.py    Debian packages installed on demand
    engine.py      our own dockerd (+ the runtime wrapper for the CAP_SYS_RESOURCE quirk)
    hostnet.py     the host network state before dockerd, restored after it
    toolchain.py   Kubernetes, etcd, kind, crictl, coredns, helm, ... built from Go modules
    base_image.py  debian:bookworm-slim, pulled or debootstrapped
    node_image.py  the kind node image assembled offline
    cluster.py     kind create / delete / load
    images.py      kjournal's own images
    tool.py        the commands, composed from the above
    helm.py        helm from the toolchain, with its own config and cache
    cli.py         their argparse wiring
"""
