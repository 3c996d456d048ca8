#!/bin/bash
# Dev Cassandra image: one Cassandra 5.0 node, data under CASSANDRA_DATA_DIR (a volume), that
# requires authentication (PasswordAuthenticator, CassandraAuthorizer).
#   CASSANDRA_LISTEN_ADDRESS  this node's address (default: this container's, `hostname -i`)
#   CASSANDRA_HEAP_MB         1024
#   CASSANDRA_ROLES_DIR       /etc/cassandra-roles: admin/{username,password} (required; a
#                             superuser that replaces the default `cassandra`), and the login
#                             roles ddl/, write/, read/ (optional), each {username,password}
#   CASSANDRA_KEYSPACE        journal: created by the role step, the roles' grants are on it
# Once the role step is done, /tmp/cassandra/roles-ready exists (the pod's readiness).
set -euo pipefail

home=/opt/cassandra
data="${CASSANDRA_DATA_DIR:-/var/lib/cassandra}"
address="${CASSANDRA_LISTEN_ADDRESS:-$(hostname -i | awk '{print $1}')}"
conf=/tmp/cassandra
roles="${CASSANDRA_ROLES_DIR:-/etc/cassandra-roles}"
ready="${conf}/roles-ready"
if [ ! -s "${roles}/admin/username" ] || [ ! -s "${roles}/admin/password" ]; then
  echo "dev-cassandra: no admin credentials in ${roles}/admin/{username,password}:" \
    "this node requires authentication; mount its roles' Secrets there" >&2
  exit 2
fi
mkdir -p "${conf}/logs" "${data}"/{data,commitlog,saved_caches,hints,cdc_raw}
rm -f "${ready}"  # /tmp outlives a restarted container: ready only once this start made the roles

sed -e "s|@LISTEN_ADDRESS@|${address}|g" -e "s|@DATA_DIR@|${data}|g" \
  "${home}/conf/cassandra.yaml" > "${conf}/cassandra.yaml"

module_flags=()
while IFS= read -r flag; do
  [[ -z "${flag}" || "${flag}" == \#* ]] || module_flags+=("${flag}")
done < "${home}/conf/jvm17-server.options"
jamm=$(ls "${home}"/lib/jamm-*.jar | tail -n 1)
heap="${CASSANDRA_HEAP_MB:-1024}"

# A subshell that exits at once: the role step is orphaned to tini, which reaps it.
( java -Xmx96m "-Dlogback.configurationFile=file://${home}/conf/logback.xml" \
    -cp "${home}/lib/*:${home}/classes" CreateRoles 127.0.0.1 9042 "${roles}" \
    "${CASSANDRA_KEYSPACE:-journal}" "${ready}" & )

exec java "-Xms${heap}m" "-Xmx${heap}m" -Xss512k \
  -XX:+UseG1GC -XX:+ParallelRefProcEnabled -XX:MaxGCPauseMillis=300 \
  "${module_flags[@]}" \
  "-javaagent:${jamm}" \
  -Djdk.attach.allowAttachSelf=true \
  -Dio.netty.tryReflectionSetAccessible=true \
  -Dcassandra-foreground=yes \
  "-Dcassandra.config=file://${conf}/cassandra.yaml" \
  "-Dcassandra.storagedir=${data}" \
  "-Dcassandra.logdir=${conf}/logs" \
  "-Dlogback.configurationFile=file://${home}/conf/logback.xml" \
  -Dcassandra.skip_wait_for_gossip_to_settle=0 \
  -Dcassandra.ring_delay_ms=1000 \
  -Dcassandra.superuser_setup_delay_ms=0 \
  -Dcassandra.disable_max_map_count_check=true \
  -cp "${home}/lib/*" \
  org.apache.cassandra.service.CassandraDaemon
