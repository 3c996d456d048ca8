"""Bearer-token authentication of the real writer and reader processes (against the real Kafka
and Cassandra): every refusal with its status, challenge and problem body, and nothing written to
Kafka by a refused request; the client and the CLI with a token."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1
from cryptography.hazmat.primitives.asymmetric.ec import generate_private_key
from kjournal.client import Client
from kjournal.errors import NotAuthenticated
from kjournal.errors import PermissionDenied
from kjournal.model import Event
from kjournal.model import JsonPayload
from kjournal.model import Key
from kjournal.model import SeqNr
from kjournal_dev.security.tokens import DEV_AUDIENCE
from kjournal_dev.security.tokens import DEV_ISSUER
from kjournal_dev.security.tokens import DevIssuer

from tests.integration.services.support import RunningService
from tests.integration.services.support import end_offsets
from tests.support.reports import add_session_report

pytestmark = [pytest.mark.kafka, pytest.mark.cassandra]

APPEND = {"events": [{"seqNr": 1, "payload": {"amount": 5}}]}


def _claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    claims = {"iss": DEV_ISSUER, "aud": DEV_AUDIENCE, "exp": now + 600, "iat": now}
    return {**claims, "scope": "journal:append", **overrides}


def _alg_none() -> str:
    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(_claims())}."


def _bad_tokens(issuer: DevIssuer) -> dict[str, tuple[str | None, str]]:
    """case → (token, the detail the service answers)"""
    kid = issuer.public_jwk()["kid"]
    stranger = generate_private_key(SECP256R1())
    return {
        "no token": (None, "a bearer token is required"),
        "expired": (issuer.mint(ttl_s=-120), "the token has expired"),
        "wrong issuer": (issuer.mint(claims={"iss": "elsewhere"}), "from another issuer"),
        "wrong audience": (issuer.mint(claims={"aud": "billing"}), "not for this audience"),
        "bad signature": (
            jwt.encode(_claims(), stranger, algorithm="ES256", headers={"kid": kid}),
            "algorithm 'ES256' does not match",
        ),
        "tampered": (issuer.mint()[:-6] + "AAAAAA", "signature does not verify"),
        "alg none": (_alg_none(), "algorithm 'none' is not accepted"),
    }


def _post(writer: RunningService, topic: str, token: str | None, path: str = "/events") -> Any:
    headers = {} if token is None else {"authorization": f"Bearer {token}"}
    return httpx.post(
        f"{writer.url}/v1/journals/{topic}/order-1{path}", json=APPEND, headers=headers, timeout=30
    )


def _check_problem(response: httpx.Response, status: int, detail: str) -> None:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status
    assert detail in body["detail"], body
    assert response.headers["www-authenticate"].startswith('Bearer realm="kjournal"')


def test_refused_requests_write_nothing_to_kafka(
    secured_writer: RunningService,
    issuer: DevIssuer,
    topic: str,
    kafka_bootstrap: str,
    pytestconfig: pytest.Config,
):
    observed = {}
    for case, (token, detail) in _bad_tokens(issuer).items():
        response = _post(secured_writer, topic, token)
        _check_problem(response, 401, detail)
        challenge = response.headers["www-authenticate"]
        assert ('error="invalid_token"' in challenge) == (token is not None), challenge
        observed[case] = f"401 {response.json()['detail']}"
    forbidden = {
        "missing scope": (issuer.mint(["journal:read", "journal:delete"]), "/events"),
        "missing scope (mark)": (issuer.mint(["journal:read"]), "/marks"),
        "another topic": (issuer.mint(["journal:append"], topics=["journal_other*"]), "/events"),
    }
    for case, (token, path) in forbidden.items():
        response = _post(secured_writer, topic, token, path)
        _check_problem(response, 403, "the token")
        assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
        observed[case] = f"403 {response.json()['detail']}"
    report = "\n".join(f"{case:>22}: {answer}" for case, answer in observed.items())
    add_session_report(pytestconfig, "HTTP authentication: what a refused writer call sees", report)
    assert set(end_offsets(kafka_bootstrap, topic).values()) == {0}, "a refused request wrote"

    granted = issuer.mint(["journal:append"], topics=[topic])
    assert _post(secured_writer, topic, granted).status_code == 201
    assert sum(end_offsets(kafka_bootstrap, topic).values()) == 1


def test_the_client_and_the_cli_with_a_token(
    secured_writer: RunningService, secured_reader: RunningService, issuer: DevIssuer, topic: str
):
    key = Key(topic, "with-token")
    token = issuer.mint(["journal:append", "journal:read"], topics=[topic])
    with Client(secured_writer.url, secured_reader.url, token=token, timeout=30) as client:
        client.append(key, [Event(SeqNr(1), payload=JsonPayload({"n": 1}))])
        assert [record.event.seq_nr for record in client.read(key)] == [1]
        with pytest.raises(PermissionDenied, match="lacks the scope journal:delete"):
            client.purge(key)
    anonymous = Client(secured_writer.url, secured_reader.url, timeout=30)
    with anonymous, pytest.raises(NotAuthenticated, match="a bearer token is required"):
        list(anonymous.read(key))

    env = {**os.environ, "KJOURNAL_TOKEN": token}
    command = [sys.executable, "-m", "kjournal.cli", "--writer", secured_writer.url]
    command += ["--reader", secured_reader.url, "pointer", topic, "with-token"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stdout) == (0, "1\n"), result.stderr
    env.pop("KJOURNAL_TOKEN")
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "NotAuthenticated: a bearer token is required" in result.stderr
    result = subprocess.run(
        [*command[:3], "--token", token, *command[3:]],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (result.returncode, result.stdout) == (0, "1\n"), result.stderr


def test_the_reader_refuses_other_topics_and_scopes(
    secured_reader: RunningService, issuer: DevIssuer, topic: str
):
    url = f"{secured_reader.url}/v1/journals/{topic}/order-1/events"
    response = httpx.get(url, timeout=30)
    _check_problem(response, 401, "a bearer token is required")
    other = issuer.mint(["journal:read"], topics=["journal_other"])
    response = httpx.get(url, headers={"authorization": f"Bearer {other}"}, timeout=30)
    _check_problem(response, 403, f"does not grant topic '{topic}'")
    reader = issuer.mint(["journal:read"])
    response = httpx.get(
        f"{secured_reader.url}/v1/topics/{topic}/replication",
        headers={"authorization": f"Bearer {reader}"},
        timeout=30,
    )
    _check_problem(response, 403, "lacks the scope journal:admin")
    for path in ("/healthz", "/readyz", "/metrics"):
        assert httpx.get(secured_reader.url + path, timeout=30).status_code == 200


def test_the_topic_feed_needs_journal_read_and_the_topic(
    secured_reader: RunningService, issuer: DevIssuer, topic: str
):
    url = f"{secured_reader.url}/v1/topics/{topic}/events"
    _check_problem(httpx.get(url, timeout=30), 401, "a bearer token is required")
    for token, detail in [
        (
            issuer.mint(["journal:read"], topics=["journal_other"]),
            f"does not grant topic '{topic}'",
        ),
        (issuer.mint(["journal:append"], topics=[topic]), "lacks the scope journal:read"),
    ]:
        for accept in ("application/x-ndjson", "text/event-stream"):
            headers = {"authorization": f"Bearer {token}", "accept": accept}
            _check_problem(httpx.get(url, headers=headers, timeout=30), 403, detail)
    token = issuer.mint(["journal:read"], topics=[topic])
    response = httpx.get(url, headers={"authorization": f"Bearer {token}"}, timeout=30)
    assert response.status_code == 200, response.text
    assert json.loads(response.text.splitlines()[-1])["type"] == "end"
