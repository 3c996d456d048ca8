"""HTTP authentication of the writer and the reader: bearer JWTs checked against the issuer's
JWKS, a scope per operation, optionally restricted to topics (docs/security.md)."""

from kjournal_service.auth.grants import Grant
from kjournal_service.auth.grants import Scope
from kjournal_service.auth.grants import requires
from kjournal_service.auth.settings import AuthSettings

__all__ = ["AuthSettings", "Grant", "Scope", "requires"]
