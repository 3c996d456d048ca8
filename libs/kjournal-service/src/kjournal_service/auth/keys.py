"""The issuer's public keys: a JSON Web Key Set read from a file or fetched from a URL, kept in
memory, and read again every `jwks_refresh_s` or when a token names a key not seen yet (at most
every `jwks_min_refresh_s`): keys rotate without a restart, and a key dropped from the set stops
verifying tokens at the next refresh."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path
from typing import Any

import httpx
from jwt import PyJWK
from jwt import PyJWTError
from kjournal.errors import InvalidToken
from kjournal.errors import KeysUnavailable

from kjournal_service.auth.settings import AuthSettings

__all__ = ["KeySet"]

log = logging.getLogger(__name__)

_MAX_JWKS_BYTES = 1024 * 1024


class KeySet:
    def __init__(self, settings: AuthSettings) -> None:
        self._file = settings.jwks_file
        self._url = settings.jwks_url
        self._algorithms = frozenset(settings.algorithms)
        self._refresh_s = settings.jwks_refresh_s
        self._min_refresh_s = settings.jwks_min_refresh_s
        self._keys: dict[str | None, PyJWK] = {}
        self._loaded_at = float("-inf")  # monotonic time of the last successful read
        self._tried_at = float("-inf")  # ... of the last attempt
        self._file_stamp: tuple[int, int] | None = None
        self._lock = asyncio.Lock()
        self._background: asyncio.Task[None] | None = None
        self.generation = 0  # grows whenever a key leaves the set

    def holds(self, kid: str | None) -> bool:
        return kid in self._keys

    @property
    def stale(self) -> bool:
        return time.monotonic() - self._loaded_at >= self._refresh_s

    def refresh_soon(self) -> None:
        """Read the set again in the background (a cached token's key may have been removed)."""
        if self._may_retry() and (self._background is None or self._background.done()):
            self._background = asyncio.get_running_loop().create_task(self._refresh())

    async def key(self, kid: str | None) -> PyJWK:
        """The key a token names by `kid` (a set of one key serves tokens naming none);
        InvalidToken if the set has no such key, KeysUnavailable if it could not be read.
        The set is read again when it is stale or lacks `kid`, at most every
        `jwks_min_refresh_s` (an issuer that does not answer is not asked on every request)."""
        if (self.stale or kid not in self._keys) and self._may_retry():
            await self._refresh()
        if not self._keys:
            raise KeysUnavailable("no signing keys could be read")
        found = self._keys.get(kid)
        if found is None and kid is None and len(self._keys) == 1:
            found = next(iter(self._keys.values()))
        if found is None:
            raise InvalidToken("the token names no key" if kid is None else f"unknown key {kid!r}")
        return found

    def _may_retry(self) -> bool:
        return time.monotonic() - self._tried_at >= self._min_refresh_s

    async def _refresh(self) -> None:
        async with self._lock:
            if not self._may_retry():
                return  # another request read it meanwhile
            now = self._tried_at = time.monotonic()
            try:
                document = await self._read()
            except (OSError, ValueError, httpx.HTTPError) as exc:
                log.warning("cannot read the JWKS from %s: %s", self._where(), exc)
                return
            if document is not None:
                self._install(document)
            self._loaded_at = now

    async def _read(self) -> dict[str, Any] | None:
        """The set's JSON, or None if the file did not change since it was last read."""
        if self._file is not None:
            return self._read_file(self._file)
        assert self._url is not None
        async with httpx.AsyncClient(timeout=10.0, follow_redirects=False) as client:
            response = await client.get(self._url, headers={"accept": "application/json"})
            response.raise_for_status()
            if len(response.content) > _MAX_JWKS_BYTES:
                raise ValueError(f"key set larger than {_MAX_JWKS_BYTES} bytes")
            return _as_object(response.content)

    def _install(self, document: dict[str, Any]) -> None:
        keys: dict[str | None, PyJWK] = {}
        for entry in document.get("keys") or ():
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = PyJWK(entry)
            except PyJWTError as exc:
                log.warning("JWKS key %r skipped: %s", entry.get("kid"), exc)
                continue
            if key.algorithm_name not in self._algorithms:
                continue  # e.g. a shared-secret key: never accepted
            keys[key.key_id] = key
        if not keys:
            log.warning("the JWKS from %s holds no usable signing key", self._where())
        if self._keys and set(keys) != set(self._keys):
            log.info("JWKS from %s: keys now %s", self._where(), sorted(map(str, keys)))
        if set(self._keys) - set(keys):
            self.generation += 1  # a key was removed: what it verified must be checked again
        self._keys = keys

    def _read_file(self, path: Path) -> dict[str, Any] | None:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp == self._file_stamp:
            return None
        if stat.st_size > _MAX_JWKS_BYTES:
            raise ValueError(f"key set larger than {_MAX_JWKS_BYTES} bytes")
        document = _as_object(path.read_bytes())
        self._file_stamp = stamp
        return document

    def _where(self) -> str:
        return str(self._file) if self._file is not None else str(self._url)


def _as_object(raw: bytes) -> dict[str, Any]:
    document = json.loads(raw)
    if not isinstance(document, dict):
        raise ValueError("a JWKS is a JSON object with a `keys` array")
    return document
