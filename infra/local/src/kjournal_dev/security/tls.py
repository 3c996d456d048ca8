"""Certificates for the secured broker's TLS listener on loopback: a CA made for this platform
alone and a broker certificate it signs for 127.0.0.1 and localhost. Clients trust the CA file
(`KJOURNAL_KAFKA__SSL_CAFILE`); the broker reads its key and chain as a PEM key store (mode 0600).
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = ["LoopbackTls"]

_VALID_DAYS = 365


def _name(common_name: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kjournal-dev"),
            x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        ]
    )


def _write_private(path: Path, data: bytes) -> None:
    path.unlink(missing_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(data)


@dataclass(frozen=True)
class LoopbackTls:
    folder: Path

    @property
    def ca_file(self) -> Path:
        return self.folder / "ca.pem"

    @property
    def broker_key_store(self) -> Path:
        """The broker's private key (PKCS#8) followed by its certificate chain."""
        return self.folder / "broker-keystore.pem"

    def ensure(self, host: str) -> LoopbackTls:
        """Make the CA and the broker's certificate unless both exist."""
        if self.ca_file.exists() and self.broker_key_store.exists():
            return self
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        now = datetime.datetime.now(datetime.UTC)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = _name("kjournal-dev loopback CA")
        ca = (
            x509.CertificateBuilder()
            .subject_name(ca_name)
            .issuer_name(ca_name)
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=_VALID_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    key_cert_sign=True,
                    crl_sign=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(ca_key, hashes.SHA256())
        )
        broker_key = ec.generate_private_key(ec.SECP256R1())
        names: list[x509.GeneralName] = [x509.DNSName("localhost")]
        for address in {host, "127.0.0.1"}:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(address)))
            except ValueError:
                names.append(x509.DNSName(address))
        broker = (
            x509.CertificateBuilder()
            .subject_name(_name("kjournal-dev broker"))
            .issuer_name(ca_name)
            .public_key(broker_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=_VALID_DAYS))
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(
                x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
            )
            .sign(ca_key, hashes.SHA256())
        )
        pem = serialization.Encoding.PEM
        key = broker_key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        _write_private(self.broker_key_store, key + broker.public_bytes(pem) + ca.public_bytes(pem))
        self.ca_file.write_bytes(ca.public_bytes(pem))
        return self
