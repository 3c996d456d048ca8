# kind's node base image (sigs.k8s.io/kind images/base) rebuilt with nothing pulled: kind's own
# files from its Go module (copied into files/ by kjournal-dev), Debian 12's containerd 1.6, runc
# and CNI plugins instead of ones built from git, and crictl built from Go modules. No `# syntax`
# line and no `COPY --chmod`: both would need a newer Dockerfile frontend, i.e. a pull.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}

COPY files/ /kind-files/
RUN set -eu; src=/kind-files; \
    mkdir -p /kind/bin /LICENSES /etc/containerd /etc/default /etc/sysctl.d \
             /etc/systemd/system/kubelet.service.d /etc/kubernetes/manifests /opt/cni/bin; \
    install -m 0755 "$src"/usr/local/bin/* /usr/local/bin/; \
    install -m 0755 "$src"/kind/bin/* /kind/bin/; \
    install -m 0644 "$src"/kind/README.txt /kind/; \
    install -m 0644 "$src"/LICENSES/* /LICENSES/; \
    install -m 0644 "$src"/etc/crictl.yaml /etc/; \
    install -m 0644 "$src"/etc/containerd/* /etc/containerd/; \
    install -m 0644 "$src"/etc/default/* /etc/default/; \
    install -m 0644 "$src"/etc/sysctl.d/* /etc/sysctl.d/; \
    find "$src"/etc/systemd/system -maxdepth 1 -type f -exec install -m 0644 {} /etc/systemd/system/ \; ; \
    install -m 0644 "$src"/etc/systemd/system/kubelet.service.d/* /etc/systemd/system/kubelet.service.d/; \
    rm -rf "$src"

# --force-confold keeps kind's /etc/containerd/config.toml over the package's.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      -o Dpkg::Options::=--force-confold \
      systemd conntrack iptables nftables iproute2 ethtool util-linux mount kmod \
      libseccomp2 pigz bash ca-certificates curl jq procps \
      containerd runc containernetworking-plugins \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log /tmp/* /var/tmp/* \
 && find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete \
 && rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
          /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
          /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/* \
 && echo "ReadKMsg=no" >> /etc/systemd/journald.conf \
 && ln -sf "$(command -v systemd)" /sbin/init

# kind's units start /usr/local/bin/containerd; the CRI plugin looks for CNI plugins in /opt/cni/bin.
# restrict_oom_score_adj: on hosts whose capability bounding set lacks CAP_SYS_RESOURCE runc cannot
# lower a sandbox's oom_score_adj ("can't get final child's PID from pipe: EOF"); clamping it, as
# kind does for rootless nodes, only stops containers from asking for a lower score than containerd.
COPY 10-bridge.conflist /etc/cni/net.d/10-bridge.conflist
COPY crictl /usr/local/bin/crictl
RUN set -eu; \
    sed -i 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' /etc/containerd/config.toml; \
    grep -q 'restrict_oom_score_adj = true' /etc/containerd/config.toml; \
    ln -sf /usr/bin/containerd /usr/local/bin/containerd; \
    for plugin in bridge host-local loopback portmap ptp; do cp /usr/lib/cni/$plugin /opt/cni/bin/; done; \
    ctr oci spec \
      | jq '.hooks.createContainer[.hooks.createContainer | length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
      | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json; \
    chmod 0755 /usr/local/bin/crictl; \
    systemctl enable kubelet.service containerd.service undo-mount-hacks.service; \
    systemctl mask systemd-binfmt.service; \
    containerd --version; runc --version

ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
