"""The `auth` section of the writer's and the reader's settings (`KJOURNAL_AUTH__*`): bearer
tokens (JWTs) checked against a JWKS, from a file or a URL."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from typing import Self

from kjournal.settings_types import CommaSeparated
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import field_validator
from pydantic import model_validator

__all__ = ["ASYMMETRIC_ALGORITHMS", "AuthSettings"]

# Signature algorithms a JWKS can hold public keys for. Shared-secret (HS*) keys and `none` are
# never accepted: a JWKS is public, and a key from it must not be usable to sign.
ASYMMETRIC_ALGORITHMS = frozenset(
    {"EdDSA", "ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
)


class AuthSettings(BaseModel):
    """Who may call the service: off by default (a loopback development set-up); when on, every
    route but /healthz, /readyz, /metrics and the OpenAPI document needs a bearer token."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(default=False, description="require a bearer token (JWT) on API routes")
    issuer: str | None = Field(default=None, description="the `iss` every token must carry")
    audience: str | None = Field(
        default=None, description="the `aud` every token must carry (one of, if a list)"
    )
    jwks_file: Path | None = Field(
        default=None, description="JSON Web Key Set file of the issuer's public keys"
    )
    jwks_url: str | None = Field(
        default=None, description="URL of the issuer's JSON Web Key Set (instead of a file)"
    )
    jwks_refresh_s: float = Field(
        default=300.0,
        gt=0,
        description="how often the key set is read again (a key removed from it is refused "
        "from then on)",
    )
    jwks_min_refresh_s: float = Field(
        default=5.0,
        ge=0,
        description="a token naming an unknown key reads the key set again, at most this often",
    )
    algorithms: Annotated[tuple[str, ...], CommaSeparated] = Field(
        default=("EdDSA", "ES256", "ES384", "RS256", "PS256"),
        description="signature algorithms accepted (asymmetric only)",
    )
    leeway_s: float = Field(
        default=30.0, ge=0, description="clock skew allowed when checking exp, nbf and iat"
    )
    topics_claim: str = Field(
        default="kjournal_topics",
        description="claim restricting the topics a token may touch: names, or prefixes ending "
        "in `*` (absent: any journal topic)",
    )
    token_cache_size: int = Field(
        default=10_000,
        ge=0,
        description="verified tokens remembered (by their hash, until they expire) so a token "
        "is verified once, not on every request",
    )
    realm: str = Field(default="kjournal", description="realm named in WWW-Authenticate")

    @field_validator("algorithms")
    @classmethod
    def _asymmetric(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        refused = sorted(set(value) - ASYMMETRIC_ALGORITHMS)
        if refused:
            raise ValueError(
                f"not accepted: {', '.join(refused)}; choose from "
                + ", ".join(sorted(ASYMMETRIC_ALGORITHMS))
            )
        if not value:
            raise ValueError("at least one algorithm is needed")
        return value

    @model_validator(mode="after")
    def _complete(self) -> Self:
        if not self.enabled:
            return self
        missing = [name for name in ("issuer", "audience") if not getattr(self, name)]
        if missing:
            raise ValueError(f"authentication is enabled but {' and '.join(missing)} is not set")
        if (self.jwks_file is None) == (self.jwks_url is None):
            raise ValueError("authentication is enabled: set exactly one of jwks_file, jwks_url")
        if self.jwks_url is not None and not self.jwks_url.startswith(("https://", "http://")):
            raise ValueError(f"jwks_url must be an http(s) URL, not {self.jwks_url!r}")
        return self
