"""The `kjournal` command line (see `kjournal --help`)."""

from kjournal.cli.main import build_parser
from kjournal.cli.main import main

__all__ = ["build_parser", "main"]
