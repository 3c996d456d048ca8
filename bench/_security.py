"""`bench.http_append --secure-state DIR`: what HTTP authentication and SCRAM cost an append.

In the same run, at each concurrency level, a writer process is started for each variant in
turn and loaded by wrk exactly as the main table's HTTP column:

* plain: no authentication, Kafka over PLAINTEXT (the developer's broker, KJOURNAL_DEV_KAFKA_PORT);
* auth, one token: every request carries the same JWT (a client's usual way): verified once, then
  remembered by its hash;
* auth, a token per request: every request carries a JWT never seen before: each one's signature
  (EdDSA) is verified;
* SCRAM: Kafka over SASL_PLAINTEXT with SCRAM-SHA-512 as `kjournal-writer` (the secured broker of
  `kjournal-dev up --secure`, whose state directory is DIR), no HTTP authentication;
* SCRAM + auth, one token.

Each writer asks a reader of its own variant for its appends' outcomes (on the same Kafka, as
`kjournal-reader` there and in Cassandra, with the same HTTP authentication), so a variant's cost
includes the reader's side of an append.

Prints each variant's appends/s, latency and the writer's CPU per append, and its ratio to plain;
with `--rounds` > 1 the variants are run round-robin that often and the median is shown.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic
from kjournal.kafka.settings import KafkaSettings
from kjournal_dev.platform.state import PlatformState
from kjournal_dev.security.credentials import CASSANDRA_READER
from kjournal_dev.security.credentials import KAFKA_READER
from kjournal_dev.security.credentials import KAFKA_WRITER
from kjournal_dev.security.credentials import Credentials
from kjournal_dev.security.kafka import admin_options
from kjournal_dev.security.kafka import client_env
from kjournal_dev.security.tokens import DevIssuer

from bench._http import bench_topic
from bench._http import cpu_seconds
from bench._http import dev_reader_settings
from bench._http import service_process
from bench.http_append import WARMUP_S
from bench.http_append import Load
from bench.http_append import Result
from bench.http_append import wrk

__all__ = ["compare"]

# Tokens minted for "a token per request": more than a level's requests at the rates this host
# reaches; if a run sends more, tokens are reused round robin and the row says how many.
FRESH_TOKENS = 40_000


@dataclass
class Variant:
    name: str
    secured_kafka: bool
    tokens: str | None  # None, "one" or "each"
    rates: list[Result] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class SecuredBroker:
    bootstrap: str
    credentials: Credentials
    issuer: DevIssuer
    cassandra: str  # host:port of the secured platform's Cassandra (roles on)

    @classmethod
    def of(cls, state_dir: Path) -> SecuredBroker:
        state = PlatformState.load(state_dir / "state.json")
        credentials = Credentials.load(state_dir / "credentials.json")
        if (
            state is None
            or not state.secure
            or credentials is None
            or "kafka" not in state.components
        ):
            raise SystemExit(
                f"{state_dir} is not the state of a running `kjournal-dev up --secure` platform"
            )
        issuer = DevIssuer(state_dir / "auth").ensure()
        kafka, cassandra = state.components["kafka"], state.components["cassandra"]
        return cls(kafka.address, credentials, issuer, cassandra.address)


async def _secured_admin(broker: SecuredBroker, create: str | None, delete: str | None) -> None:
    admin = AIOKafkaAdminClient(
        bootstrap_servers=broker.bootstrap, **admin_options(broker.credentials)
    )
    await admin.start()
    try:
        if create:
            await admin.create_topics([NewTopic(create, 8, 1)])
            await asyncio.sleep(2)  # leaders elected
        if delete:
            await admin.delete_topics([delete])
    finally:
        await admin.close()


@contextmanager
def _secured_topic(broker: SecuredBroker) -> Iterator[str]:
    name = f"journal_bench_{uuid.uuid4().hex[:10]}"
    asyncio.run(_secured_admin(broker, name, None))
    try:
        yield name
    finally:
        asyncio.run(_secured_admin(broker, None, name))


def _writer_env(
    variant: Variant, plain: KafkaSettings, broker: SecuredBroker, workers: int
) -> dict[str, str]:
    env = {
        "KJOURNAL_KAFKA__LINGER_MS": str(plain.linger_ms),
        "KJOURNAL_HTTP__WORKERS": str(workers),
    }
    if variant.secured_kafka:
        env["KJOURNAL_KAFKA__BOOTSTRAP_SERVERS"] = broker.bootstrap
        env.update(client_env(KAFKA_WRITER, broker.credentials))
    else:
        env["KJOURNAL_KAFKA__BOOTSTRAP_SERVERS"] = plain.bootstrap_servers
    if variant.tokens is not None:
        env.update(broker.issuer.service_env())
    return env


def _reader_env(variant: Variant, plain: KafkaSettings, broker: SecuredBroker) -> dict[str, str]:
    """The reader the variant's writer asks for outcomes: on the same Kafka, with its own
    credentials there and in Cassandra, and the same HTTP authentication (the writer passes the
    caller's token on)."""
    if variant.secured_kafka:
        host, port = broker.cassandra.rsplit(":", 1)
        env = {
            "KJOURNAL_KAFKA__BOOTSTRAP_SERVERS": broker.bootstrap,
            **client_env(KAFKA_READER, broker.credentials),
            "KJOURNAL_CASSANDRA__CONTACT_POINTS": host,
            "KJOURNAL_CASSANDRA__PORT": port,
            "KJOURNAL_CASSANDRA__KEYSPACE": "journal",
            "KJOURNAL_CASSANDRA__USERNAME": CASSANDRA_READER,
            "KJOURNAL_CASSANDRA__PASSWORD": broker.credentials.cassandra[CASSANDRA_READER],
        }
    else:
        env = dev_reader_settings(plain.bootstrap_servers)
    if variant.tokens is not None:
        env.update(broker.issuer.service_env())
    return env


def compare(
    plain: KafkaSettings,
    state_dir: Path,
    levels: list[int],
    seconds: int,
    size: int,
    workers: int,
    rounds: int,
) -> None:
    broker = SecuredBroker.of(state_dir)
    variants = [
        Variant("plain (no auth, PLAINTEXT)", False, None),
        Variant("auth, one token per client", False, "one"),
        Variant("auth, a new token per request", False, "each"),
        Variant("SCRAM-SHA-512, no auth", True, None),
        Variant("SCRAM-SHA-512 + auth, one token", True, "one"),
    ]
    work = Path(tempfile.mkdtemp(prefix="kjournal-bench-security-"))
    one = work / "one-token"
    one.write_text(broker.issuer.mint(["journal:append"]) + "\n")
    print(f"security    minting {FRESH_TOKENS} tokens for 'a new token per request' ...")
    each = work / "fresh-tokens"
    each.write_text(
        "\n".join(broker.issuer.mint(["journal:append"]) for _ in range(FRESH_TOKENS)) + "\n"
    )
    files = {"one": one, "each": each}
    print(
        f"security    same run, each variant its own writer process; plain Kafka "
        f"{plain.bootstrap_servers}, SCRAM Kafka {broker.bootstrap}; {rounds} round(s)"
    )
    with bench_topic(plain.bootstrap_servers, 8) as plain_topic, _secured_topic(broker) as secured:
        for level in levels:
            for variant in variants:
                variant.rates.clear()
                variant.cpu.clear()
            for round_ in range(rounds):
                for variant in variants:
                    topic = secured if variant.secured_kafka else plain_topic
                    env = _writer_env(variant, plain, broker, workers)
                    tokens = None if variant.tokens is None else files[variant.tokens]
                    prefix = f"sec-{level}-{round_}-{variants.index(variant)}"
                    reader_env = _reader_env(variant, plain, broker)
                    with (
                        service_process("kjournal_reader", reader_env, work / "logs") as (
                            reader,
                            _,
                        ),
                        service_process(
                            "kjournal_writer",
                            {**env, "KJOURNAL_READER__URL": reader},
                            work / "logs",
                        ) as (url, pid),
                    ):
                        wrk(Load(url, topic, f"warm-{prefix}", level, WARMUP_S, size, tokens))
                        before = cpu_seconds(pid)
                        result = wrk(Load(url, topic, prefix, level, seconds, size, tokens))
                        variant.cpu.append((cpu_seconds(pid) - before) / max(1, result.count))
                    variant.rates.append(result)
            _print_level(level, variants)


def _median(results: list[Result]) -> Result:
    ordered = sorted(results, key=lambda r: r.rate)
    return ordered[len(ordered) // 2]


def _print_level(level: int, variants: list[Variant]) -> None:
    base = _median(variants[0].rates).rate
    print(f"{'c':>4}  {'variant':<34}  {'appends/s, latency':<40}  {'CPU/append':<10}  vs plain")
    for variant in variants:
        result = _median(variant.rates)
        cpu = statistics.median(variant.cpu) * 1000
        extra = ""
        if variant.tokens == "each" and result.count + WARMUP_S * result.rate > FRESH_TOKENS:
            extra = "  (tokens reused: more requests than minted)"
        print(
            f"{level:>4}  {variant.name:<34}  {result.line():<40}  {cpu:7.2f} ms  "
            f"{result.rate / base:7.2f}{extra}"
        )
