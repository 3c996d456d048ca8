"""Unit tests of the HTTP layer: pure parts, and the apps over ASGI with fake journals."""

from __future__ import annotations

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
