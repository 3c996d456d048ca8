"""The Spark Kafka source jars to pass as `spark.jars` (never `--packages`, which resolves at run time).

The folder comes from `KJOURNAL_SPARK__JARS_DIR`, else from kjournal-dev's cache
(`scripts/dev up` fetches `spark-sql-kafka-0-10_2.13` with its runtime dependencies there). Maven
copies the whole dependency tree, including jars Spark already ships (scala-library, hadoop
client, slf4j, ...) sometimes at other versions: only the artifacts Spark lacks are passed, so two
versions of one library never meet on the classpath.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

__all__ = ["JarsNotFound", "default_jars_dir", "kafka_source_jars", "spark_jars_dir"]

# "spark-sql-kafka-0-10_2.13-4.0.0.jar" → "spark-sql-kafka-0-10_2.13": the version is the last
# "-<digit>..." suffix (qualifiers like "-jre" included).
_ARTIFACT = re.compile(r"^(?P<name>.+)-\d+(?:\.\d+)*(?:[-.][A-Za-z0-9]+)*\.jar$")
_REQUIRED = "spark-sql-kafka-0-10"


class JarsNotFound(RuntimeError):
    """The Kafka source jars are not where the settings say."""


def default_jars_dir(spark_version: str) -> Path | None:
    """kjournal-dev's folder for this Spark version, when kjournal-dev is installed (dev, CI)."""
    try:
        from kjournal_dev.config import DevConfig
        from kjournal_dev.maven import spark_kafka_bundle
    except ImportError:  # a production image has no dev tooling: the setting is required there
        return None
    return spark_kafka_bundle(spark_version).folder(DevConfig.from_env())


def spark_jars_dir() -> Path | None:
    """The jars Spark itself runs with: $SPARK_HOME/jars, else the pyspark package's."""
    home = os.environ.get("SPARK_HOME")
    if home and (Path(home) / "jars").is_dir():
        return Path(home) / "jars"
    import pyspark

    bundled = Path(pyspark.__file__).parent / "jars"
    return bundled if bundled.is_dir() else None


def _artifact(path: Path) -> str:
    match = _ARTIFACT.match(path.name)
    return match.group("name") if match else path.stem


def kafka_source_jars(folder: Path, provided: Iterable[Path] = ()) -> list[Path]:
    """The jars of `folder` whose artifact is not among `provided`, sorted; JarsNotFound if the
    folder lacks the Kafka source itself."""
    if not folder.is_dir():
        raise JarsNotFound(
            f"Spark Kafka source jars folder {folder} does not exist: run `scripts/dev up`, or set "
            "KJOURNAL_SPARK__JARS_DIR to a folder holding spark-sql-kafka-0-10_2.13 and its "
            "dependencies"
        )
    have = {_artifact(path) for path in provided}
    jars = sorted(path.resolve() for path in folder.glob("*.jar") if _artifact(path) not in have)
    if not any(_artifact(path).startswith(_REQUIRED) for path in jars):
        raise JarsNotFound(f"no {_REQUIRED} jar in {folder}")
    return jars
