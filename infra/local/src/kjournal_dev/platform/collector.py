"""The local OpenTelemetry Collector: OTLP in on loopback (gRPC and HTTP), spans out to a file.

`up` starts it before the services, which export their spans to its OTLP/HTTP port
(`KJOURNAL_DEV_OTLP_HTTP_PORT`, 4318 by default). The file exporter writes one JSON document per
batch (OTLP/JSON, `ExportTraceServiceRequest`) to `<data dir>/collector/spans.jsonl`, which
`kjournal-dev trace` reads.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from pathlib import Path

from kjournal_dev.config import DevConfig
from kjournal_dev.process import spawn

__all__ = ["collector_config", "probe", "spans_dir", "start"]

SPANS_FILE = "spans.jsonl"


def spans_dir(data_dir: Path) -> Path:
    return data_dir / "collector"


def collector_config(config: DevConfig, data_dir: Path) -> str:
    spans = spans_dir(data_dir) / SPANS_FILE
    return f"""\
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: {config.host}:{config.otlp_grpc_port}
      http:
        endpoint: {config.host}:{config.otlp_http_port}
processors:
  batch:
    timeout: 200ms
exporters:
  file:
    path: {spans}
    flush_interval: 200ms
    rotation:
      max_megabytes: 100
      max_backups: 3
service:
  telemetry:
    logs:
      level: warn
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [file]
"""


def start(config: DevConfig, binary: Path, data_dir: Path) -> tuple[int, Path]:
    """Spawn the collector (does not wait); its PID and log."""
    home = spans_dir(data_dir)
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(collector_config(config, data_dir))
    log = home / "collector.log"
    pid = spawn([str(binary), "--config", str(home / "config.yaml")], log_file=log, cwd=home)
    return pid, log


def probe(host: str, port: int, timeout_s: float = 3.0) -> bool:
    """Whether OTLP/HTTP takes an (empty) export request."""
    request = urllib.request.Request(
        f"http://{host}:{port}/v1/traces",
        data=b"",
        headers={"Content-Type": "application/x-protobuf"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False
