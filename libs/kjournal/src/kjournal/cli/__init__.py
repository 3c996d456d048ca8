"""The `kjournal` command line (see `kjournal --help`)."""

from kjournal.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
