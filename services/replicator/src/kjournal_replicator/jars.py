"""The Spark Kafka source jars to pass as `spark.jars` (never `--packages`, which resolves at run time).

The folder comes from `KJOURNAL_SPARK__JARS_DIR` (`scripts/dev up` fetches
`spark-sql-kafka-0-10_2.13` with its runtime dependencies into its cache and passes that folder;
the replicator image has them under /opt/kjournal/spark-jars). Maven
copies the whole dependency tree, including jars Spark already ships (scala-library, hadoop
client, slf4j, ...) sometimes at other versions: only the artifacts Spark lacks are passed, so two
versions of one library never meet on the classpath.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from kjournal.errors import SparkJarsNotFound

__all__ = ["kafka_source_jars", "spark_jars_dir"]

# "spark-sql-kafka-0-10_2.13-4.0.0.jar" → "spark-sql-kafka-0-10_2.13": the version is the last
# "-<digit>..." suffix (qualifiers like "-jre" included).
_ARTIFACT = re.compile(r"^(?P<name>.+)-\d+(?:\.\d+)*(?:[-.][A-Za-z0-9]+)*\.jar$")
_REQUIRED = "spark-sql-kafka-0-10"


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
    """The jars of `folder` whose artifact is not among `provided`, sorted; SparkJarsNotFound if the
    folder lacks the Kafka source itself."""
    if not folder.is_dir():
        raise SparkJarsNotFound(
            f"Spark Kafka source jars folder {folder} does not exist: run `scripts/dev up`, or set "
            "KJOURNAL_SPARK__JARS_DIR to a folder holding spark-sql-kafka-0-10_2.13 and its "
            "dependencies"
        )
    have = {_artifact(path) for path in provided}
    jars = sorted(path.resolve() for path in folder.glob("*.jar") if _artifact(path) not in have)
    if not any(_artifact(path).startswith(_REQUIRED) for path in jars):
        raise SparkJarsNotFound(f"no {_REQUIRED} jar in {folder}")
    return jars
