"""Reading the local collector's spans.

waterfall.py  spans from the collector's file, rendered as an indented waterfall
cli.py        trace
"""
