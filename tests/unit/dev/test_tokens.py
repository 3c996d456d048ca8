"""kjournal-dev's token issuer: a private key only its owner can read, a JWKS the services trust,
tokens with the scopes and topics asked for, and the services started to trust it."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import jwt
import pytest
from kjournal_dev.cli import main
from kjournal_dev.config import DevConfig
from kjournal_dev.platform.services import SERVICES
from kjournal_dev.security.tokens import ALL_SCOPES
from kjournal_dev.security.tokens import DEV_AUDIENCE
from kjournal_dev.security.tokens import DEV_ISSUER
from kjournal_dev.security.tokens import DevIssuer


def _decode(issuer: DevIssuer, token: str) -> dict[str, object]:
    (key,) = jwt.PyJWKSet.from_dict(json.loads(issuer.jwks_file.read_text())).keys
    claims: dict[str, object] = jwt.decode(
        token, key=key, algorithms=["EdDSA"], audience=DEV_AUDIENCE, issuer=DEV_ISSUER
    )
    return claims


def test_the_key_is_private_and_kept(tmp_path: Path):
    issuer = DevIssuer(tmp_path / "auth").ensure()
    assert stat.S_IMODE(issuer.key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(issuer.folder.stat().st_mode) == 0o700
    token = issuer.mint(["journal:read"], topics=["journal_a*"])
    again = DevIssuer(tmp_path / "auth").ensure()  # a later `up` keeps the key
    claims = _decode(again, token)
    assert claims["scope"] == "journal:read"
    assert claims["kjournal_topics"] == ["journal_a*"]
    (published,) = json.loads(issuer.jwks_file.read_text())["keys"]
    assert "d" not in published  # the public half only


def test_the_token_command(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch):
    monkeypatch.setenv("KJOURNAL_DEV_STATE_DIR", str(tmp_path / "state"))
    assert main(["token", "--scope", "journal:append", "--topic", "journal", "--ttl", "60"]) == 0
    token = capsys.readouterr().out.strip()
    claims = _decode(DevIssuer(tmp_path / "state" / "auth"), token)
    assert claims["scope"] == "journal:append"
    assert claims["kjournal_topics"] == ["journal"]
    assert main(["token"]) == 0
    claims = _decode(DevIssuer(tmp_path / "state" / "auth"), capsys.readouterr().out.strip())
    assert str(claims["scope"]).split() == list(ALL_SCOPES)
    assert "kjournal_topics" not in claims


def test_with_auth_the_writer_and_reader_trust_the_dev_issuer(tmp_path: Path):
    config = DevConfig.from_env({"KJOURNAL_DEV_CACHE": str(tmp_path), "KJOURNAL_DEV_AUTH": "1"})
    by_name = {spec.name: spec for spec in SERVICES}
    for name in ("writer", "reader"):
        env = by_name[name].env_of(config, tmp_path / name)
        assert env["KJOURNAL_AUTH__ENABLED"] == "true"
        assert env["KJOURNAL_AUTH__JWKS_FILE"] == str(config.auth_dir / "jwks.json")
    replicator_env = by_name["replicator"].env_of(config, tmp_path / "replicator")
    assert not any(name.startswith("KJOURNAL_AUTH") for name in replicator_env)
    plain = DevConfig.from_env({"KJOURNAL_DEV_CACHE": str(tmp_path)})
    assert "KJOURNAL_AUTH__ENABLED" not in by_name["writer"].env_of(plain, tmp_path / "w")
