"""bench.http_append --conditional: the host's ceiling for two writers over one."""

from __future__ import annotations

from unittest import mock

from bench._conditional import Run
from bench._conditional import _ceiling


def _one_writer(appends: int, host_cores: float) -> Run:
    return Run(
        appends,
        10.0,
        0.3,
        0.5,
        writer_cpu=appends * 0.0013,
        reader_cpu=0.0,
        host_cores=host_cores,
        load=1.5,
    )


def test_the_ceiling_is_the_idle_cores_share_and_names_the_cost_per_append():
    runs = [_one_writer(2150, 1.6), _one_writer(2000, 1.0), _one_writer(2200, 1.7)]
    with mock.patch("os.cpu_count", return_value=2):
        line = _ceiling("conditional", runs)
    # median busy 1.6 of 2 cores; per append 1.6 × 10 s / 2,150 = 7.4 ms, the writer's 1.30 ms
    assert line == (
        "  host ceiling of two writers/one, conditional: 1.25 (2 cores / 1.60 busy with one "
        "writer; an append costs the host 7.4 ms of CPU, 1.30 ms of it the writer's)"
    )
