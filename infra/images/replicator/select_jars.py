"""Build-time helper of the replicator image: copy, from the Spark Kafka source jars Maven fetched,
the ones Spark itself lacks (kjournal_replicator.jars decides, as it does at run time).

    python select_jars.py <all jars folder> <target folder>
"""

import shutil
import sys
from pathlib import Path

from kjournal_replicator.jars import kafka_source_jars
from kjournal_replicator.jars import spark_jars_dir

source, target = Path(sys.argv[1]), Path(sys.argv[2])
provided = spark_jars_dir()
target.mkdir(parents=True)
for jar in kafka_source_jars(source, provided.glob("*.jar") if provided else ()):
    shutil.copy2(jar, target / jar.name)
    sys.stdout.write(f"{jar.name}\n")
