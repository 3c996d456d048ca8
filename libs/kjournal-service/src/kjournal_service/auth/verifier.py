"""Bearer token → `Grant`: the JWT's signature checked with the issuer's key (PyJWT), its `iss`,
`aud`, `exp` (and `nbf`, `iat` when present), then its scopes and topics read.

A verified token is remembered by its SHA-256 until it expires, so a client sending the same
token on every request costs one signature check, not one per request. The remembered grants are
forgotten whenever the key set changes (a key removed must stop working)."""

from __future__ import annotations

import hashlib
import time
from typing import Any

import jwt
from kjournal.errors import InvalidToken

from kjournal_service.auth.grants import Grant
from kjournal_service.auth.grants import TopicPatterns
from kjournal_service.auth.keys import KeySet
from kjournal_service.auth.settings import AuthSettings

__all__ = ["TokenVerifier"]


class TokenVerifier:
    def __init__(self, settings: AuthSettings, keys: KeySet | None = None) -> None:
        self.keys = keys if keys is not None else KeySet(settings)
        self._issuer = settings.issuer
        self._audience = settings.audience
        self._algorithms = list(settings.algorithms)
        self._leeway = settings.leeway_s
        self._topics_claim = settings.topics_claim
        self._cache_size = settings.token_cache_size
        self._cache: dict[bytes, Grant] = {}
        self._cache_generation = 0
        self._jwt = jwt.PyJWT(
            {
                "require": ["exp", "iss", "aud"],
                "verify_signature": True,
                "verify_exp": True,
                "verify_nbf": True,
                "verify_iat": True,
                "verify_aud": True,
                "verify_iss": True,
            }
        )

    async def verify(self, token: str) -> Grant:
        """The token's grant; InvalidToken if it is not valid now, KeysUnavailable if no key could
        be read to check it."""
        digest = hashlib.sha256(token.encode()).digest()
        if self._cache_generation != self.keys.generation:
            self._cache.clear()
            self._cache_generation = self.keys.generation
        cached = self._cache.get(digest)
        now = time.time()
        if cached is not None:
            if now < cached.expires_at + self._leeway:
                if self.keys.stale:
                    self.keys.refresh_soon()
                return cached
            del self._cache[digest]
        grant = await self._verify(token, now)
        self._remember(digest, grant, now)
        return grant

    async def _verify(self, token: str, now: float) -> Grant:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"malformed token: {exc}") from None
        algorithm = header.get("alg")
        if algorithm not in self._algorithms:
            raise InvalidToken(f"algorithm {algorithm!r} is not accepted")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("malformed token: kid is not a string")
        key = await self.keys.key(kid)
        try:
            claims = self._jwt.decode(
                token,
                key=key,
                algorithms=self._algorithms,
                audience=self._audience,
                issuer=self._issuer,
                leeway=self._leeway,
            )
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the token has expired") from None
        except jwt.InvalidAudienceError:
            raise InvalidToken("the token is not for this audience") from None
        except jwt.InvalidIssuerError:
            raise InvalidToken("the token is from another issuer") from None
        except jwt.InvalidSignatureError:
            raise InvalidToken("the token's signature does not verify") from None
        except jwt.PyJWTError as exc:
            raise InvalidToken(f"invalid token: {exc}") from None
        return self._grant(claims, kid)

    def _grant(self, claims: dict[str, Any], kid: str | None) -> Grant:
        subject = claims.get("sub")
        return Grant(
            subject=subject if isinstance(subject, str) else None,
            scopes=_scopes(claims),
            topics=_topics(claims.get(self._topics_claim), self._topics_claim),
            expires_at=float(claims["exp"]),
            key_id=kid,
        )

    def _remember(self, digest: bytes, grant: Grant, now: float) -> None:
        if self._cache_size == 0:
            return
        if len(self._cache) >= self._cache_size:
            for stale in [d for d, g in self._cache.items() if g.expires_at + self._leeway <= now]:
                del self._cache[stale]
            while len(self._cache) >= self._cache_size:
                del self._cache[next(iter(self._cache))]  # the oldest entry
        self._cache[digest] = grant


def _scopes(claims: dict[str, Any]) -> frozenset[str]:
    """OAuth's space-separated `scope` (RFC 9068), or a `scp` list (as some issuers send)."""
    scope = claims.get("scope")
    if isinstance(scope, str):
        return frozenset(scope.split())
    listed = claims.get("scp")
    if isinstance(listed, list):
        return frozenset(item for item in listed if isinstance(item, str))
    if isinstance(listed, str):
        return frozenset(listed.split())
    return frozenset()


def _topics(value: Any, claim: str) -> TopicPatterns | None:
    if value is None:
        return None
    if isinstance(value, str):
        return TopicPatterns.parse(value.split())
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return TopicPatterns.parse(value)
    raise InvalidToken(f"claim {claim!r} must be a list of topic names or prefixes")
