"""`Guard`: what `service_app` needs of authentication: the middleware to put in front of the
routes and the touch to the OpenAPI document (both nothing when authentication is off)."""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from typing import Any

from kjournal_service.asgi import ASGIApp
from kjournal_service.auth.middleware import BearerAuth
from kjournal_service.auth.middleware import access_rules
from kjournal_service.auth.openapi import declare_security
from kjournal_service.auth.settings import AuthSettings
from kjournal_service.auth.verifier import TokenVerifier

__all__ = ["Guard"]

log = logging.getLogger(__name__)


class Guard:
    def __init__(
        self, settings: AuthSettings, routes: Iterable[object], *, host: str, retry_after_s: int
    ) -> None:
        self.settings = settings
        self.rules = access_rules(routes)  # checked even when off: every route names its scope
        self.retry_after_s = retry_after_s
        if not settings.enabled and not _loopback(host):
            log.warning(
                "HTTP authentication is off and the service listens on %s: anyone who can reach "
                "it may call it (KJOURNAL_AUTH__ENABLED=true turns it on)",
                host,
            )

    def wrap(self, app: ASGIApp) -> ASGIApp:
        if not self.settings.enabled:
            return app
        verifier = TokenVerifier(self.settings)
        return BearerAuth(
            app,
            verifier=verifier,
            rules=self.rules,
            realm=self.settings.realm,
            retry_after_s=self.retry_after_s,
        )

    def touch(self, document: dict[str, Any]) -> None:
        if self.settings.enabled:
            declare_security(document, self.rules)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
