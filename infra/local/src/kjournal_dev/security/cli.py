"""`kjournal-dev token`: a bearer token from the dev issuer (registered by kjournal_dev.cli)."""

from __future__ import annotations

import argparse
from typing import Any

from kjournal_dev.security.tokens import ALL_SCOPES
from kjournal_dev.security.tokens import DevIssuer


def _token(platform: Any, args: argparse.Namespace) -> int:
    issuer = DevIssuer(platform.config.auth_dir).ensure()
    print(issuer.mint(args.scope or ALL_SCOPES, topics=args.topic, ttl_s=args.ttl))
    return 0


def register(sub: Any) -> None:
    token = sub.add_parser(
        "token",
        help="print a bearer token from the dev issuer (its key: <state>/auth, mode 0600), "
        "for a writer and reader started with KJOURNAL_DEV_AUTH=true or `up --secure`",
    )
    token.add_argument(
        "--scope",
        action="append",
        choices=ALL_SCOPES,
        help="a scope to grant (repeatable; default: all of them)",
    )
    token.add_argument(
        "--topic",
        action="append",
        help="only this topic, or topics starting with P if written P* (repeatable; "
        "default: any topic)",
    )
    token.add_argument("--ttl", type=float, default=3600.0, help="seconds it stays valid")
    token.set_defaults(run=_token)
