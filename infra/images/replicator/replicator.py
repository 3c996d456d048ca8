"""The replicator as a Spark application file: `spark-submit ... local:///opt/kjournal/replicator.py`
(spark-submit runs Python applications from a file, not `-m`). Same as `python -m kjournal_replicator`."""

import sys

from kjournal_replicator.__main__ import main

sys.exit(main())
