"""Bearer-token authentication of the writer and reader apps over ASGI (fake journals): every
refusal (401, 403) with its challenge and problem body, scopes and topics, the key set read again
when keys rotate, and verified tokens remembered."""

from __future__ import annotations

import base64
import dataclasses
import http.server
import json
import threading
import time
import types
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1
from cryptography.hazmat.primitives.asymmetric.ec import generate_private_key
from kjournal.errors import InvalidToken
from kjournal.errors import KeysUnavailable
from kjournal_dev.security.tokens import DEV_AUDIENCE
from kjournal_dev.security.tokens import DEV_ISSUER
from kjournal_dev.security.tokens import DevIssuer
from kjournal_reader.settings import Settings as ReaderSettings
from kjournal_service.auth.grants import Grant
from kjournal_service.auth.settings import AuthSettings
from kjournal_service.auth.verifier import TokenVerifier
from kjournal_writer.app import create_app as create_writer
from kjournal_writer.settings import Settings as WriterSettings
from pydantic import ValidationError

from tests.unit.services.fakes import FakeJournals
from tests.unit.services.fakes import reader_over
from tests.unit.services.fakes import writer_over

pytestmark = pytest.mark.anyio

APPEND = {"events": [{"seqNr": 1, "payload": {"a": 1}}]}
EVENTS = "/v1/journals/journal_a/order-1/events"


@pytest.fixture
def issuer(tmp_path: Path) -> DevIssuer:
    return DevIssuer(tmp_path / "auth").ensure()


def _auth(issuer: DevIssuer, **overrides: Any) -> dict[str, Any]:
    return {
        "enabled": True,
        "issuer": DEV_ISSUER,
        "audience": DEV_AUDIENCE,
        "jwks_file": str(issuer.jwks_file),
        "jwks_min_refresh_s": 0,
        **overrides,
    }


@pytest.fixture
def fakes() -> FakeJournals:
    return FakeJournals()


@pytest.fixture
async def writer(issuer: DevIssuer, fakes: FakeJournals) -> AsyncIterator[httpx.AsyncClient]:
    app = writer_over(fakes, WriterSettings.model_validate({"auth": _auth(issuer)}))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://writer") as client:
        yield client


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def _assert_refused(response: httpx.Response, status: int, detail: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body: dict[str, Any] = response.json()
    slug = {401: "unauthorized", 403: "forbidden"}[status]
    assert body["type"] == f"urn:kjournal:problem:{slug}"
    assert detail in body["detail"]
    assert response.headers["www-authenticate"].startswith('Bearer realm="kjournal"')
    return body


async def test_no_token_is_401_with_a_bare_challenge(writer: httpx.AsyncClient, fakes):
    response = await writer.post(EVENTS, json=APPEND)
    _assert_refused(response, 401, "a bearer token is required")
    assert response.headers["www-authenticate"] == 'Bearer realm="kjournal"'
    assert not fakes.journals


async def test_another_scheme_is_no_token(writer: httpx.AsyncClient):
    response = await writer.post(EVENTS, json=APPEND, headers={"authorization": "Basic eDp5"})
    _assert_refused(response, 401, "a bearer token is required")


def _unsigned(claims: dict[str, Any]) -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}."


def _claims() -> dict[str, Any]:
    now = int(time.time())
    return {
        "iss": DEV_ISSUER,
        "aud": DEV_AUDIENCE,
        "exp": now + 600,
        "iat": now,
        "scope": "journal:append",
    }


@pytest.mark.parametrize(
    ("case", "reason"),
    [
        ("expired", "the token has expired"),
        ("wrong issuer", "another issuer"),
        ("wrong audience", "not for this audience"),
        ("bad signature", "signature does not verify"),
        ("alg none", "algorithm 'none' is not accepted"),
        ("HS256 with the public key", "algorithm 'HS256' is not accepted"),
        ("unknown key", "unknown key 'elsewhere'"),
        ("not a JWT", "malformed token"),
        ("no exp", 'missing the "exp" claim'),
    ],
)
async def test_invalid_tokens_are_401_invalid_token(
    writer: httpx.AsyncClient, issuer: DevIssuer, fakes: FakeJournals, case: str, reason: str
):
    kid = issuer.public_jwk()["kid"]
    other_key = generate_private_key(SECP256R1())
    token: str = {  # type: ignore[no-untyped-call]
        "expired": lambda: issuer.mint(ttl_s=-120),
        "wrong issuer": lambda: issuer.mint(claims={"iss": "someone-else"}),
        "wrong audience": lambda: issuer.mint(claims={"aud": "another-service"}),
        "bad signature": lambda: issuer.mint()[:-4] + "AAAA",
        "alg none": lambda: _unsigned(_claims()),
        "HS256 with the public key": lambda: jwt.encode(
            _claims(), issuer.public_jwk()["x"], algorithm="HS256", headers={"kid": kid}
        ),
        "unknown key": lambda: jwt.encode(
            _claims(), other_key, algorithm="ES256", headers={"kid": "elsewhere"}
        ),
        "not a JWT": lambda: "not-a-jwt",
        "no exp": lambda: jwt.encode(
            {k: v for k, v in _claims().items() if k != "exp"},
            issuer._private_key(),
            algorithm="EdDSA",
            headers={"kid": kid},
        ),
    }[case]()
    response = await writer.post(EVENTS, json=APPEND, headers=_bearer(token))
    _assert_refused(response, 401, reason)
    challenge = response.headers["www-authenticate"]
    assert 'error="invalid_token"' in challenge
    assert "error_description=" in challenge
    assert not fakes.journals


async def test_a_token_signed_by_another_key_with_our_kid_is_refused(
    writer: httpx.AsyncClient, issuer: DevIssuer, tmp_path: Path
):
    impostor = DevIssuer(tmp_path / "impostor").ensure()
    kid = issuer.public_jwk()["kid"]
    token = jwt.encode(_claims(), impostor._private_key(), algorithm="EdDSA", headers={"kid": kid})
    response = await writer.post(EVENTS, json=APPEND, headers=_bearer(token))
    _assert_refused(response, 401, "signature does not verify")


async def test_missing_scope_is_403_insufficient_scope(
    writer: httpx.AsyncClient, issuer: DevIssuer, fakes: FakeJournals
):
    token = issuer.mint(["journal:read", "journal:delete"])
    response = await writer.post(EVENTS, json=APPEND, headers=_bearer(token))
    _assert_refused(response, 403, "lacks the scope journal:append")
    challenge = response.headers["www-authenticate"]
    assert 'error="insufficient_scope", scope="journal:append"' in challenge
    assert not fakes.journals
    # the same token may delete
    response = await writer.delete("/v1/journals/journal_a/order-1", headers=_bearer(token))
    assert response.status_code == 202, response.text


async def test_a_token_for_other_topics_is_403(
    writer: httpx.AsyncClient, issuer: DevIssuer, fakes: FakeJournals
):
    token = issuer.mint(["journal:append"], topics=["journal_b", "journal_c*"])
    response = await writer.post(EVENTS, json=APPEND, headers=_bearer(token))
    _assert_refused(response, 403, "does not grant topic 'journal_a'")
    assert not fakes.journals
    for topic in ("journal_b", "journal_c", "journal_cx"):
        response = await writer.post(
            f"/v1/journals/{topic}/order-1/events", json=APPEND, headers=_bearer(token)
        )
        assert response.status_code == 201, response.text


async def test_a_valid_token_reaches_the_hot_append_and_every_route(
    writer: httpx.AsyncClient, issuer: DevIssuer, fakes: FakeJournals
):
    token = issuer.mint()
    response = await writer.post(EVENTS, json=APPEND, headers=_bearer(token))
    assert response.status_code == 201, response.text
    response = await writer.post(
        "/v1/journals/journal_a/order-1/marks", json={}, headers=_bearer(token)
    )
    assert response.status_code == 201, response.text


async def test_health_metrics_and_the_document_stay_open(writer: httpx.AsyncClient):
    for path in ("/healthz", "/metrics", "/openapi.json"):
        response = await writer.get(path)
        assert response.status_code == 200, (path, response.text)


async def test_unknown_paths_need_a_token_too(writer: httpx.AsyncClient, issuer: DevIssuer):
    response = await writer.get("/v1/nothing-here")
    assert response.status_code == 401
    response = await writer.get("/v1/nothing-here", headers=_bearer(issuer.mint()))
    assert response.status_code == 404


async def test_the_document_declares_the_scheme_and_each_operations_scope(
    writer: httpx.AsyncClient,
):
    document = (await writer.get("/openapi.json")).json()
    assert document["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    operation = document["paths"]["/v1/journals/{topic}/{id}/events"]["post"]
    assert operation["security"] == [{"bearer": ["journal:append"]}]
    assert {"401", "403"} <= set(operation["responses"])
    purge = document["paths"]["/v1/journals/{topic}/{id}"]["delete"]
    assert purge["security"] == [{"bearer": ["journal:delete"]}]
    assert "security" not in document["paths"]["/healthz"]["get"]


async def test_without_auth_the_document_declares_no_security(fakes: FakeJournals):
    app = create_writer(WriterSettings())
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://writer") as client:
        document = (await client.get("/openapi.json")).json()
        response = await client.post(EVENTS, json=APPEND)
    assert "securitySchemes" not in document.get("components", {})
    assert response.status_code != 401


async def test_reader_scopes(issuer: DevIssuer, fakes: FakeJournals):
    app = reader_over(fakes, ReaderSettings.model_validate({"auth": _auth(issuer)}))
    transport = httpx.ASGITransport(app=app)
    read_only = _bearer(issuer.mint(["journal:read"]))
    async with httpx.AsyncClient(transport=transport, base_url="http://reader") as client:
        response = await client.get("/v1/journals/journal_a/x/events", headers=read_only)
        assert response.status_code == 200, response.text
        response = await client.get("/v1/topics/journal_a/replication", headers=read_only)
        _assert_refused(response, 403, "lacks the scope journal:admin")
        response = await client.get("/v1/journals/journal_a/x/events")
        _assert_refused(response, 401, "a bearer token is required")


def test_enabled_settings_must_name_issuer_audience_and_one_key_source(issuer: DevIssuer):
    with pytest.raises(ValidationError, match="issuer and audience"):
        AuthSettings(enabled=True, jwks_file=issuer.jwks_file)
    with pytest.raises(ValidationError, match="exactly one of jwks_file, jwks_url"):
        AuthSettings(enabled=True, issuer="i", audience="a")
    with pytest.raises(ValidationError, match="not accepted: HS256"):
        AuthSettings(algorithms=("EdDSA", "HS256"))
    assert AuthSettings.model_validate({"algorithms": "ES256, EdDSA"}).algorithms == (
        "ES256",
        "EdDSA",
    )


async def test_keys_rotate_without_a_restart(issuer: DevIssuer, tmp_path: Path):
    verifier = TokenVerifier(AuthSettings.model_validate(_auth(issuer)))
    old = issuer.mint()
    assert (await verifier.verify(old)).scopes
    new_issuer = DevIssuer(tmp_path / "next").ensure()
    new = new_issuer.mint()
    with pytest.raises(InvalidToken, match="unknown key"):
        await verifier.verify(new)
    # the issuer publishes both keys, then only the new one
    both = {"keys": [issuer.public_jwk(), new_issuer.public_jwk()]}
    issuer.jwks_file.write_text(json.dumps(both))
    assert (await verifier.verify(new)).scopes
    assert (await verifier.verify(old)).scopes
    issuer.jwks_file.write_text(json.dumps({"keys": [new_issuer.public_jwk()]}))
    verifier.keys._loaded_at = float("-inf")  # as when jwks_refresh_s has passed
    await verifier.verify(new)  # a remembered token: the set is read again in the background
    assert verifier.keys._background is not None
    await verifier.keys._background
    with pytest.raises(InvalidToken, match="unknown key"):
        await verifier.verify(old)


async def test_a_verified_token_is_checked_once_until_it_lapses(issuer: DevIssuer):
    verifier = TokenVerifier(AuthSettings.model_validate(_auth(issuer, leeway_s=0)))
    token = issuer.mint()
    calls = 0
    real = verifier._verify

    async def counted(token: str, now: float) -> Grant:
        nonlocal calls
        calls += 1
        return await real(token, now)

    verifier._verify = counted  # type: ignore[method-assign]
    for _ in range(5):
        grant = await verifier.verify(token)
    assert calls == 1
    (digest,) = verifier._cache
    verifier._cache[digest] = dataclasses.replace(grant, expires_at=time.time() - 1)
    await verifier.verify(token)  # a lapsed grant is not used: the token is checked again
    assert calls == 2


async def test_topics_claim_forms(issuer: DevIssuer):
    verifier = TokenVerifier(AuthSettings.model_validate(_auth(issuer)))
    spaced = await verifier.verify(issuer.mint(claims={"kjournal_topics": "journal_a journal_b*"}))
    assert spaced.allows_topic("journal_a")
    assert spaced.allows_topic("journal_bz")
    assert not spaced.allows_topic("journal_ab")
    anything = await verifier.verify(issuer.mint())
    assert anything.allows_topic("journal_zzz")
    with pytest.raises(InvalidToken, match="kjournal_topics"):
        await verifier.verify(issuer.mint(claims={"kjournal_topics": {"a": 1}}))
    scp = await verifier.verify(issuer.mint(claims={"scope": None, "scp": ["journal:read"]}))
    assert scp.scopes == frozenset({"journal:read"})


async def test_the_key_set_from_a_url(issuer: DevIssuer):
    served = types.SimpleNamespace(body=issuer.jwks_file.read_bytes(), hits=0)

    class Jwks(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            served.hits += 1
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(served.body)

        def log_message(self, *args: Any) -> None:
            return None

    server = http.server.HTTPServer(("127.0.0.1", 0), Jwks)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/jwks.json"
        settings = AuthSettings.model_validate(_auth(issuer, jwks_file=None, jwks_url=url))
        verifier = TokenVerifier(settings)
        for _ in range(3):
            assert (await verifier.verify(issuer.mint())).scopes
        assert served.hits == 1  # fetched once, then kept
        served.body = b"not json"
        verifier.keys._loaded_at = float("-inf")
        assert (await verifier.verify(issuer.mint())).scopes  # a bad answer keeps the old keys
        assert served.hits == 2
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_an_unreadable_key_set_is_503_and_not_read_on_every_request(
    issuer: DevIssuer, fakes: FakeJournals, tmp_path: Path
):
    settings = _auth(issuer, jwks_file=str(tmp_path / "missing.json"), jwks_min_refresh_s=60)
    app = writer_over(fakes, WriterSettings.model_validate({"auth": settings}))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://writer") as client:
        for _ in range(3):
            response = await client.post(EVENTS, json=APPEND, headers=_bearer(issuer.mint()))
            assert response.status_code == 503
            assert response.json()["type"] == "urn:kjournal:problem:unavailable"
            assert response.headers["retry-after"] == "1"
    assert not fakes.journals
    verifier = TokenVerifier(AuthSettings.model_validate(settings))
    reads = 0
    real = verifier.keys._read

    async def counted() -> Any:
        nonlocal reads
        reads += 1
        return await real()

    verifier.keys._read = counted  # type: ignore[method-assign]
    for _ in range(3):
        with pytest.raises(KeysUnavailable):
            await verifier.verify(issuer.mint())
    assert reads == 1
