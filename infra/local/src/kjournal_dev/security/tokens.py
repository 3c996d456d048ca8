"""A development token issuer: an Ed25519 key kept in the state directory (mode 0600) and its
public JWKS beside it, which the local writer and reader trust when started with authentication
(`KJOURNAL_DEV_AUTH=true`, or `up --secure`); `kjournal-dev token` mints tokens with it.

Never a production issuer: anyone who can read the state directory can mint any token.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import time
import uuid
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

__all__ = ["ALL_SCOPES", "DEV_AUDIENCE", "DEV_ISSUER", "DevIssuer"]

DEV_ISSUER = "kjournal-dev"
DEV_AUDIENCE = "kjournal"
ALL_SCOPES = ("journal:append", "journal:delete", "journal:read", "journal:admin")
TOPICS_CLAIM = "kjournal_topics"


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@dataclass(frozen=True)
class DevIssuer:
    folder: Path

    @property
    def key_file(self) -> Path:
        return self.folder / "signing-key.pem"

    @property
    def jwks_file(self) -> Path:
        return self.folder / "jwks.json"

    def ensure(self) -> DevIssuer:
        """Create the key (0600) and the JWKS if they do not exist yet; a key once made is kept,
        so tokens minted earlier stay valid across `down` and `up`."""
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not self.key_file.exists():
            pem = Ed25519PrivateKey.generate().private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
            descriptor = os.open(self.key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(descriptor, "wb") as out:
                out.write(pem)
            self.jwks_file.unlink(missing_ok=True)
        if not self.jwks_file.exists():
            self.jwks_file.write_text(json.dumps({"keys": [self.public_jwk()]}, indent=2) + "\n")
        return self

    def _private_key(self) -> Ed25519PrivateKey:
        return self._signing_key

    @cached_property
    def _signing_key(self) -> Ed25519PrivateKey:
        key = serialization.load_pem_private_key(self.key_file.read_bytes(), password=None)
        assert isinstance(key, Ed25519PrivateKey)
        return key

    @cached_property
    def _kid(self) -> str:
        return self.public_jwk()["kid"]

    def public_jwk(self) -> dict[str, str]:
        raw = (
            self._private_key()
            .public_key()
            .public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        )
        x = _b64url(raw)
        # RFC 7638 thumbprint: the required members, sorted, no spaces.
        canonical = json.dumps({"crv": "Ed25519", "kty": "OKP", "x": x}, separators=(",", ":"))
        kid = _b64url(hashlib.sha256(canonical.encode()).digest())[:16]
        return {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": kid, "alg": "EdDSA", "use": "sig"}

    def mint(
        self,
        scopes: Iterable[str] = ALL_SCOPES,
        *,
        topics: Iterable[str] | None = None,
        ttl_s: float = 3600.0,
        subject: str = "developer",
        claims: Mapping[str, Any] | None = None,
    ) -> str:
        """A signed token for `scopes` (and only `topics`, names or `prefix*`, if given) valid for
        `ttl_s` seconds (negative: already expired); `claims` override any claim."""
        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": DEV_ISSUER,
            "aud": DEV_AUDIENCE,
            "sub": subject,
            "iat": now,
            "exp": now + int(ttl_s),
            "jti": uuid.uuid4().hex,
            "scope": " ".join(scopes),
        }
        if topics is not None:
            payload[TOPICS_CLAIM] = list(topics)
        payload.update(claims or {})
        return jwt.encode(payload, self._signing_key, algorithm="EdDSA", headers={"kid": self._kid})

    def service_env(self) -> dict[str, str]:
        """The `KJOURNAL_AUTH__*` settings of a writer or reader trusting this issuer."""
        return {
            "KJOURNAL_AUTH__ENABLED": "true",
            "KJOURNAL_AUTH__ISSUER": DEV_ISSUER,
            "KJOURNAL_AUTH__AUDIENCE": DEV_AUDIENCE,
            "KJOURNAL_AUTH__JWKS_FILE": str(self.jwks_file),
        }
