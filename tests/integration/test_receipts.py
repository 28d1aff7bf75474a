"""Receipts written behind the answer (``retrieval.receipt_writer``): read back at once by this process,
waited for when issued by another, kept while the database is away, one refused receipt never costing the
others theirs, and everything queued written on close."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import uuid
from datetime import UTC, datetime
from typing import NamedTuple

import pytest

from engram import Engram, NotFoundError, ValidationError
from engram.errors import StoreUnavailable
from engram.model import new_id
from engram.retrieval.receipt_writer import ReceiptWriter
from engram.retrieval.receipts import ReceiptRow, insert
from engram.store.database import Database
from tests.conftest import settings_for


def row(tenant: str = "acme", query: str = "where is the warehouse") -> ReceiptRow:
    return ReceiptRow(
        tenant_id=tenant, id=new_id(), created_at=datetime.now(UTC), actor="test", query=query, request={},
        retrievers={"lexical": []}, selected=[], packet_tokens=0, latency_ms=1.0,
        degraded=False, abstained=True,
    )  # fmt: skip


async def stored(engram: Engram, tenant: str, rid: uuid.UUID) -> bool:
    async with engram.db.tenant(tenant) as conn:
        return await (await conn.execute("SELECT 1 FROM recall_receipts WHERE id = %s", [rid])).fetchone() is not None


async def test_a_recall_answers_before_its_receipt_is_written_and_reads_it_back_at_once(engram: Engram) -> None:
    await engram.remember("The warehouse ships pallets on Mondays")
    engram.retriever.receipts.linger = 5.0  # long enough to look before the write
    result = await engram.recall("warehouse pallets")
    assert not await stored(engram, "acme", result.receipt_id)
    assert engram.retriever.receipts.queued == 1
    receipt = await engram.receipt(result.receipt_id)  # settles this process's receipts first
    assert [s["id"] for s in receipt.selected] == [str(i.id) for i in result.items]
    assert engram.retriever.receipts.queued == 0
    assert [r.id for r in await engram.receipts_for(result.items[0].id)] == [result.receipt_id]


async def test_inline_receipts_are_written_before_the_recall_answers(database_url: str) -> None:
    settings = settings_for(database_url, embedder="hashing", recall_receipts="inline")
    async with await Engram.open(settings, tenant="acme") as engram:
        result = await engram.recall("anything at all")
        assert await stored(engram, "acme", result.receipt_id)
        assert engram.retriever.receipts.queued == 0


async def test_receipts_of_several_tenants_share_one_write(engram: Engram) -> None:
    writer = ReceiptWriter(engram.db, linger=5.0)
    rows = [row("acme"), row("globex"), row("acme")]
    for r in rows:
        await writer.store(r)
    assert writer.queued == 3
    await writer.settle()
    assert writer.queued == 0
    assert [await stored(engram, r.tenant_id, r.id) for r in rows] == [True, True, True]
    assert not await stored(engram, "globex", rows[0].id)  # each under its own tenant


class Scored(NamedTuple):  # what a receipt keeps of a retriever's hit
    id: uuid.UUID
    score: float


async def test_each_receipt_of_a_batch_keeps_its_own_retriever_lists(engram: Engram) -> None:
    hits = [Scored(uuid.uuid4(), score) for score in (12.3456789, 0.5, -0.25, math.nan)]
    rows = [
        dataclasses.replace(row(), retrievers={"lexical": hits[:2], "dense": [hits[2]], "identifier": []}),
        dataclasses.replace(row("globex"), retrievers={}),
        dataclasses.replace(row(), retrievers={"dense": hits[1:]}),
    ]
    writer = ReceiptWriter(engram.db, linger=5.0)
    for r in rows:
        await writer.store(r)
    await writer.settle()
    documents = []
    for r in rows:
        async with engram.db.tenant(r.tenant_id) as conn:
            sql = "SELECT retrievers FROM recall_receipts WHERE id = %s"
            documents.append((await (await conn.execute(sql, [r.id])).fetchone() or {}).get("retrievers"))
    ids = [str(h.id) for h in hits]
    assert documents == [
        {"lexical": {"ids": ids[:2], "scores": [12.345679, 0.5]}, "dense": {"ids": [ids[2]], "scores": [-0.25]},
         "identifier": {"ids": [], "scores": []}},
        {},
        {"dense": {"ids": ids[1:], "scores": [0.5, -0.25, None]}},  # not a number: null, not a refused receipt
    ]  # fmt: skip
    assert (await engram.receipt(rows[0].id)).retrievers["lexical"] == [
        {"id": ids[0], "rank": 1, "score": 12.345679},
        {"id": ids[1], "rank": 2, "score": 0.5},
    ]


async def test_a_refused_receipt_is_dropped_alone(engram: Engram) -> None:
    writer = ReceiptWriter(engram.db, linger=5.0)
    good, bad = row(), row(query="nul \x00 byte")
    for r in (good, bad):
        await writer.store(r)
    await writer.settle()
    assert writer.dropped == 1 and writer.queued == 0
    assert await stored(engram, "acme", good.id) and not await stored(engram, "acme", bad.id)


async def test_a_batch_is_one_transaction_across_its_tenants(engram: Engram) -> None:
    # One pipeline, no BEGIN: its statements up to the closing Sync commit or roll back together.
    good, bad = row("acme"), row("globex", query="nul \x00 byte")
    with pytest.raises(ValidationError, match="cannot store a value"):
        await insert(engram.db, [good, bad])
    assert not await stored(engram, "acme", good.id)
    await insert(engram.db, [good])
    assert await stored(engram, "acme", good.id)


async def test_receipts_wait_while_the_database_is_away(engram: Engram) -> None:
    away = Database("host=127.0.0.1 port=1 dbname=nothing connect_timeout=1", min_size=0, timeout=0.5)
    await away.open(wait=False)
    try:
        writer = ReceiptWriter(away, linger=0.0)
        kept = row()
        await writer.store(kept)
        with pytest.raises(StoreUnavailable):
            await writer.settle()
        assert writer.queued == 1 and writer.dropped == 0
        writer.db = engram.db  # the database is back
        await writer.settle()
        assert writer.queued == 0 and await stored(engram, "acme", kept.id)
    finally:
        await away.close()


async def test_a_full_queue_makes_the_recall_wait(engram: Engram) -> None:
    writer = ReceiptWriter(engram.db, linger=5.0, backlog=2)
    first, second = row(), row()
    await writer.store(first)
    assert writer.queued == 1
    await writer.store(second)  # the queue is full: written before returning
    assert writer.queued == 0 and await stored(engram, "acme", first.id) and await stored(engram, "acme", second.id)


async def test_close_writes_what_is_queued(engram: Engram) -> None:
    writer = ReceiptWriter(engram.db, linger=5.0)
    queued = row()
    await writer.store(queued)
    await writer.close()
    assert await stored(engram, "acme", queued.id)


async def test_a_receipt_from_another_process_is_waited_for(engram: Engram) -> None:
    other = ReceiptWriter(engram.db, linger=0.3)  # another process's writer, slower than this one
    theirs = row()
    await other.store(theirs)
    receipt = await engram.receipt(theirs.id)
    assert receipt.id == theirs.id
    never = uuid.UUID(int=(1_000_000_000_000 << 80) | (7 << 76) | (2 << 62))  # a UUIDv7 from 2001
    started = asyncio.get_running_loop().time()
    with pytest.raises(NotFoundError):
        await engram.receipt(never)
    assert asyncio.get_running_loop().time() - started < 1.0  # an old id is not waited for
