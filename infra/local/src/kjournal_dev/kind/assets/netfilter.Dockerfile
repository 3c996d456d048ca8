# kube-proxy and kube-router program the node's iptables and ipsets: they need the userspace
# tools, not just their binary. BINARY names the one binary of the image.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      iptables nftables conntrack ipset kmod \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log
ARG BINARY
COPY ${BINARY} /usr/local/bin/${BINARY}
