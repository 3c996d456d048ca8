#!/bin/bash
# Dev Kafka image: one KRaft broker + controller, data under KAFKA_DATA_DIR (a volume).
#   KAFKA_ADVERTISED_HOST  address clients are sent to (default: this container's, `hostname -i`)
#   KAFKA_CLIENT_PORT / KAFKA_CONTROLLER_PORT   9092 / 9093 (not KAFKA_PORT: Kubernetes sets that
#                          for a Service named "kafka")
#   KAFKA_HEAP_MB          512
#   KAFKA_CLUSTER_ID       used when the data directory is not formatted yet (default: random)
#   KAFKA_TOPICS           topics to create once the broker answers, e.g. "journal:8,other:4"
set -euo pipefail

home=/opt/kafka
data="${KAFKA_DATA_DIR:-/var/lib/kafka/data}"
port="${KAFKA_CLIENT_PORT:-9092}"
controller_port="${KAFKA_CONTROLLER_PORT:-9093}"
advertised="${KAFKA_ADVERTISED_HOST:-$(hostname -i | awk '{print $1}')}"
conf=/tmp/kafka
mkdir -p "${conf}" "${data}"

sed -e "s|@PORT@|${port}|g" \
    -e "s|@CONTROLLER_PORT@|${controller_port}|g" \
    -e "s|@ADVERTISED_HOST@|${advertised}|g" \
    -e "s|@DATA_DIR@|${data}|g" \
    "${home}/config/server.properties" > "${conf}/server.properties"

classpath="${home}/libs/*"
log_config="-Dlog4j2.configurationFile=file:${home}/config/log4j2.xml"
if [ ! -f "${data}/meta.properties" ]; then
  cluster_id="${KAFKA_CLUSTER_ID:-$(java -cp "${classpath}" kafka.tools.StorageTool random-uuid)}"
  java "${log_config}" -cp "${classpath}" kafka.tools.StorageTool format \
    -t "${cluster_id}" -c "${conf}/server.properties" --ignore-formatted
fi

if [ -n "${KAFKA_TOPICS:-}" ]; then
  # A subshell that exits at once: the topic step is orphaned to tini, which reaps it.
  ( java "${log_config}" -cp "${classpath}:${home}/classes" CreateTopics "127.0.0.1:${port}" \
      ${KAFKA_TOPICS//,/ } & )
fi

heap="${KAFKA_HEAP_MB:-512}"
exec java "-Xms${heap}m" "-Xmx${heap}m" -XX:+UseG1GC "${log_config}" \
  -cp "${classpath}" kafka.Kafka "${conf}/server.properties"
