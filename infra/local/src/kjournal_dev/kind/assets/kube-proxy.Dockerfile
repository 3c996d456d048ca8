# kube-proxy programs the node's iptables: it needs their userspace tools, not just its binary.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      iptables nftables conntrack ipset kmod \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log
COPY kube-proxy /usr/local/bin/kube-proxy
