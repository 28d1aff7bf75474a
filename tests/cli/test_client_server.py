"""The blocking client against a real `engram serve` process (tests/api/test_client_contract.py has the rest of
the contract, through the async client)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram import errors as e
from engram.client import Client
from tests.cli.conftest import create_key


def test_the_blocking_client_against_a_real_server(data_dir: Path, serve: Any, workdir: Path) -> None:
    server = serve(data_dir)
    key = create_key(data_dir, workdir, "acme", role="reviewer")
    with Client(server.url, key) as engram:
        assert engram.health().status == "ok"
        wrote = engram.remember("Invoices for Acme go out in EUR", kind="semantic", fact_key="invoice.currency",
                                confidence=0.9)  # fmt: skip
        result = engram.recall("which currency for invoices?")
        assert result.items[0].id == wrote.id and result.receipt_id
        assert engram.receipt(result.receipt_id).id == result.receipt_id
        with pytest.raises(e.PreconditionRequired):
            engram.update(wrote.id, {"importance": 0.2}, revision=None)  # type: ignore[arg-type]
        assert engram.delete(wrote.id).tenant_id == "acme"
        assert "engram_recall_duration_seconds" in engram.metrics()
