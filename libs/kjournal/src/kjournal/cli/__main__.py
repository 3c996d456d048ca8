"""`python -m kjournal.cli`."""

import sys

from kjournal.cli.main import main

sys.exit(main())
