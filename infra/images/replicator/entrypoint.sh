#!/bin/bash
# The replicator image's entrypoint (under tini). The first argument picks the role:
#
#   replicator         (default) python -m kjournal_replicator: Spark in this container, local[N]
#                      by default (KJOURNAL_SPARK__MASTER), or a client-mode driver when
#                      KJOURNAL_SPARK__MASTER is k8s://...
#   driver ARGS        what Spark on Kubernetes runs in a driver pod (spark-submit in cluster mode
#                      hands the pod `driver --properties-file ... --class ... <app>`): spark-submit
#                      in client mode bound to the pod's address
#   executor           what Spark on Kubernetes runs in an executor pod: the executor backend,
#                      configured by the SPARK_* variables the driver sets on the pod
#   anything else      run as given (spark-submit, python, bash, ...)
#
# SPARK_HOME is the pyspark package; PYSPARK_PYTHON the image's virtualenv.
set -euo pipefail

spark_classpath() {
  local classpath="${SPARK_HOME}/jars/*"
  [ -n "${SPARK_EXTRA_CLASSPATH:-}" ] && classpath="${classpath}:${SPARK_EXTRA_CLASSPATH}"
  if [ -n "${SPARK_CONF_DIR:-}" ]; then
    classpath="${SPARK_CONF_DIR}:${classpath}"
  elif [ -d "${SPARK_HOME}/conf" ]; then
    classpath="${SPARK_HOME}/conf:${classpath}"
  fi
  [ -n "${HADOOP_CONF_DIR:-}" ] && classpath="${HADOOP_CONF_DIR}:${classpath}"
  [ -n "${SPARK_DIST_CLASSPATH:-}" ] && classpath="${classpath}:${SPARK_DIST_CLASSPATH}"
  # Files the driver ships (spark.jars, --py-files) land in the executor's working directory.
  printf '%s:%s' "${classpath}" "${PWD}"
}

role="${1:-replicator}"
[ $# -gt 0 ] && shift

case "${role}" in
  replicator)
    exec python -m kjournal_replicator "$@"
    ;;
  driver)
    : "${SPARK_DRIVER_BIND_ADDRESS:?the driver pod must set SPARK_DRIVER_BIND_ADDRESS (Spark does)}"
    exec "${SPARK_HOME}/bin/spark-submit" \
      --conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS}" \
      --deploy-mode client \
      "$@"
    ;;
  executor)
    # SPARK_JAVA_OPT_0, _1, ... in numeric order (Spark's spark.executor.extraJavaOptions).
    java_opts=()
    while IFS= read -r option; do
      java_opts+=("${option}")
    done < <(env | grep '^SPARK_JAVA_OPT_' | sort -t_ -k4 -n | cut -d= -f2-)
    exec "${JAVA_HOME}/bin/java" \
      "${java_opts[@]}" \
      "-Xms${SPARK_EXECUTOR_MEMORY}" "-Xmx${SPARK_EXECUTOR_MEMORY}" \
      -cp "$(spark_classpath)" \
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "${SPARK_DRIVER_URL}" \
      --executor-id "${SPARK_EXECUTOR_ID}" \
      --cores "${SPARK_EXECUTOR_CORES}" \
      --app-id "${SPARK_APPLICATION_ID}" \
      --hostname "${SPARK_EXECUTOR_POD_IP}" \
      --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID}" \
      --podName "${SPARK_EXECUTOR_POD_NAME}"
    ;;
  *)
    exec "${role}" "$@"
    ;;
esac
