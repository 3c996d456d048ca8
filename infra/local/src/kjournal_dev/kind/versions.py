"""Pinned versions of everything the kind toolchain builds from Go modules and Debian packages.

kind v0.30.0 is the newest kind whose base image keeps containerd's `version = 2` config, which
Debian 12's containerd 1.6 reads; Kubernetes v1.34 is the last minor whose kubelet runs on cgroup
v1 without `failCgroupV1: false`. etcd and coredns are newer than what kubeadm v1.34 asks for
(3.6.5 / v1.12.1): the Go module proxy serves only these, so the cluster config patches their tags.
kube-router enforces NetworkPolicies in the offline cluster (node_image.py says why not
kube-network-policies); v2.1.0 is the one version the Go module proxy serves.
"""

from __future__ import annotations

from typing import Final

KIND: Final = "v0.30.0"
KUBERNETES: Final = "v1.34.4"
ETCD: Final = "v3.6.16"
COREDNS: Final = "v1.14.7"
CRICTL: Final = "v1.34.0"
HELM: Final = "v3.21.4"
LOCAL_PATH_PROVISIONER: Final = "v0.0.30"
KUBE_ROUTER: Final = "v2.1.0"
SKAFFOLD: Final = "v2.24.0"
PAUSE: Final = "3.10.1"
# kind v0.30.0's containerd config names this sandbox image; kubeadm v1.34 names PAUSE.
KIND_SANDBOX_PAUSE: Final = "3.10"

DEBIAN_SUITE: Final = "bookworm"
BASE_IMAGE: Final = "debian:bookworm-slim"
