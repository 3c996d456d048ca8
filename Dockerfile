# kjournal's images: one file, one target per component (docs/images.md).
#
#   DOCKER_BUILDKIT=1 docker build --target writer -t kjournal/writer:dev \
#       --secret id=ca,src=/etc/ssl/certs/ca-certificates.crt .
#
# Targets: writer, reader, replicator (Spark driver, executor and local[N]), migrate (schema job).
# They share the Python runtime and the builder stages below. `kjournal-dev images build` builds
# them all and passes the build arguments; the replicator also needs the Spark Kafka source jars
# as an image (SPARK_KAFKA_JARS_IMAGE), which that command makes from kjournal-dev's Maven cache.
#
# No `# syntax=` line: the Dockerfile frontend built into the engine is used, nothing is pulled.
# The CA bundle (for an HTTPS proxy that re-signs PyPI) is a build secret, never a layer.

ARG BASE_IMAGE=debian:bookworm-slim
ARG SPARK_KAFKA_JARS_IMAGE=kjournal.local/jars-spark-sql-kafka:4.0.0

FROM ${SPARK_KAFKA_JARS_IMAGE} AS spark-kafka-jars

# --- runtime: Debian's Python 3.11 and a non-root user --------------------------------------------
FROM ${BASE_IMAGE} AS python-runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 ca-certificates \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log /var/cache/debconf/*-old \
 && groupadd --system --gid 10001 kjournal \
 && useradd --system --uid 10001 --gid kjournal --home-dir /nonexistent --no-create-home \
      --shell /usr/sbin/nologin kjournal
# HOME on the /tmp volume: the root file system may be read-only.
ENV PATH=/opt/venv/bin:$PATH \
    HOME=/tmp \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1

# --- runtime + Java 17 (the replicator's Spark) -----------------------------------------------------
FROM python-runtime AS jvm-runtime
# openjdk's postinst links its man pages: the slim base has no /usr/share/man/man1.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openjdk-17-jre-headless tini \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log /var/cache/debconf/*-old \
 && ln -s "/usr/lib/jvm/java-17-openjdk-$(dpkg --print-architecture)" /usr/lib/jvm/java-17
ENV JAVA_HOME=/usr/lib/jvm/java-17

# --- builder: uv, the workspace's manifests and lock ------------------------------------------------
FROM python-runtime AS builder
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-venv \
 && rm -rf /var/lib/apt/lists/* \
 && printf '%s\n' '#!/bin/sh' \
      '# run "$@" trusting the CA bundle given as the build secret "ca", if any' \
      'if [ -f /run/secrets/ca ]; then export SSL_CERT_FILE=/run/secrets/ca PIP_CERT=/run/secrets/ca; fi' \
      'exec "$@"' > /usr/local/bin/with-ca \
 && chmod 0755 /usr/local/bin/with-ca
ARG UV_VERSION=0.13.9
RUN --mount=type=secret,id=ca \
    with-ca sh -c 'python3 -m venv /opt/uv && /opt/uv/bin/pip install --no-cache-dir "uv==${UV_VERSION}"' \
 && ln -s /opt/uv/bin/uv /usr/local/bin/uv
ENV UV_PYTHON=/usr/bin/python3.11 \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/opt/venv \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy
WORKDIR /src
COPY pyproject.toml uv.lock ./
COPY libs/kjournal/pyproject.toml libs/kjournal/
COPY libs/kjournal-service/pyproject.toml libs/kjournal-service/
COPY libs/kjournal-eventsourcing/pyproject.toml libs/kjournal-eventsourcing/
COPY services/writer/pyproject.toml services/writer/
COPY services/reader/pyproject.toml services/reader/
COPY services/replicator/pyproject.toml services/replicator/
COPY services/migrate/pyproject.toml services/migrate/
COPY infra/local/pyproject.toml infra/local/

# Third-party dependencies of one component, exactly as locked: a layer that only a change of
# uv.lock rebuilds. Then the workspace members it needs, as wheels, into /opt/app (a small layer).
FROM builder AS writer-deps
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca uv sync --frozen --no-dev --no-install-workspace --package kjournal-writer
FROM builder AS reader-deps
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca uv sync --frozen --no-dev --no-install-workspace --package kjournal-reader
FROM builder AS replicator-deps
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca uv sync --frozen --no-dev --no-install-workspace --package kjournal-replicator
FROM builder AS migrate-deps
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca uv sync --frozen --no-dev --no-install-workspace --package kjournal-migrate

FROM builder AS sources
COPY libs/ libs/
COPY services/ services/
COPY infra/images/install-members infra/images/install-members

FROM writer-deps AS writer-app
COPY --from=sources /src/ /src/
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /src/infra/images/install-members kjournal-writer
FROM reader-deps AS reader-app
COPY --from=sources /src/ /src/
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /src/infra/images/install-members kjournal-reader
FROM replicator-deps AS replicator-app
COPY --from=sources /src/ /src/
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /src/infra/images/install-members kjournal-replicator
FROM migrate-deps AS migrate-app
COPY --from=sources /src/ /src/
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.cache/uv \
    with-ca /src/infra/images/install-members kjournal-migrate

# Only the Kafka source jars Spark itself lacks (the replicator's own rule, kjournal_replicator.jars).
FROM replicator-app AS replicator-jars
COPY --from=spark-kafka-jars /jars/ /tmp/spark-kafka-jars/
COPY infra/images/replicator/select_jars.py /tmp/select_jars.py
RUN PYTHONPATH=/opt/app/lib/python3.11/site-packages /opt/venv/bin/python /tmp/select_jars.py \
      /tmp/spark-kafka-jars /opt/spark-kafka-jars

# --- writer ----------------------------------------------------------------------------------------
FROM python-runtime AS writer
COPY --from=writer-deps /opt/venv /opt/venv
COPY --from=writer-app /opt/app/ /opt/venv/
ENV KJOURNAL_HTTP__HOST=0.0.0.0 KJOURNAL_HTTP__PORT=8080
VOLUME ["/tmp"]
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["python", "-m", "kjournal_writer"]
ARG VERSION=0.0.0 REVISION=unknown SOURCE_URL=unknown
LABEL org.opencontainers.image.title="kjournal-writer" \
      org.opencontainers.image.description="kjournal writer: appends events to Kafka over HTTP" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE_URL}"

# --- reader ----------------------------------------------------------------------------------------
FROM python-runtime AS reader
COPY --from=reader-deps /opt/venv /opt/venv
COPY --from=reader-app /opt/app/ /opt/venv/
ENV KJOURNAL_HTTP__HOST=0.0.0.0 KJOURNAL_HTTP__PORT=8080
VOLUME ["/tmp"]
USER 10001:10001
EXPOSE 8080
ENTRYPOINT ["python", "-m", "kjournal_reader"]
ARG VERSION=0.0.0 REVISION=unknown SOURCE_URL=unknown
LABEL org.opencontainers.image.title="kjournal-reader" \
      org.opencontainers.image.description="kjournal reader: Cassandra merged with the Kafka head, over HTTP" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE_URL}"

# --- migrate (the schema job) ----------------------------------------------------------------------
FROM python-runtime AS migrate
COPY --from=migrate-deps /opt/venv /opt/venv
COPY --from=migrate-app /opt/app/ /opt/venv/
VOLUME ["/tmp"]
USER 10001:10001
ENTRYPOINT ["python", "-m", "kjournal_migrate"]
ARG VERSION=0.0.0 REVISION=unknown SOURCE_URL=unknown
LABEL org.opencontainers.image.title="kjournal-migrate" \
      org.opencontainers.image.description="kjournal schema job: applies the Cassandra schema and exits" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE_URL}"

# --- replicator: Spark driver, executor, or local[N] in one container ------------------------------
FROM jvm-runtime AS replicator
COPY --from=replicator-deps /opt/venv /opt/venv
COPY --from=replicator-app /opt/app/ /opt/venv/
# Into Spark's own jars: on the classpath of a driver pod's JVM (spark-submit started it before
# the application could add spark.jars) and of every executor, in any deploy mode.
COPY --from=replicator-jars /opt/spark-kafka-jars/ /opt/venv/lib/python3.11/site-packages/pyspark/jars/
COPY infra/images/replicator/entrypoint.sh infra/images/replicator/replicator.py /opt/kjournal/
RUN install -d -o 10001 -g 10001 -m 0750 /var/lib/kjournal
ENV SPARK_HOME=/opt/venv/lib/python3.11/site-packages/pyspark \
    PYSPARK_PYTHON=/opt/venv/bin/python \
    PYSPARK_DRIVER_PYTHON=/opt/venv/bin/python \
    SPARK_USER=kjournal \
    KJOURNAL_SPARK__CHECKPOINT_LOCATION=/var/lib/kjournal/checkpoint \
    KJOURNAL_HTTP__HOST=0.0.0.0 \
    KJOURNAL_HTTP__PORT=9400
ENV PATH=$PATH:$SPARK_HOME/bin
VOLUME ["/tmp", "/var/lib/kjournal"]
USER 10001:10001
WORKDIR /tmp
EXPOSE 9400
ENTRYPOINT ["/usr/bin/tini", "-s", "--", "/opt/kjournal/entrypoint.sh"]
CMD ["replicator"]
ARG VERSION=0.0.0 REVISION=unknown SOURCE_URL=unknown
LABEL org.opencontainers.image.title="kjournal-replicator" \
      org.opencontainers.image.description="kjournal replicator: Kafka to Cassandra on PySpark (driver and executor image)" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="${SOURCE_URL}"
