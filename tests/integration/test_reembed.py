"""Embedding model migration (SPEC 6.6) on the real database: built beside the old vectors, resumable after
an interruption (a cancelled run, and a CLI process killed with SIGKILL), every memory embedded exactly once
for the new model, writes made meanwhile included; reads switch when all are there, the old vectors and
indexes go, recall works before, during and after, and another process follows the switch."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from engram import Engram, HashingEmbedder
from engram.errors import ConflictError, ValidationError
from engram.providers.base import Vector
from tests.conftest import service_url, settings_for

NEW = "engram/hashing-256"


class Counting(HashingEmbedder):
    """The new model, counting every text it embeds."""

    def __init__(self, seen: Counter[str]) -> None:
        super().__init__(256)
        self.seen = seen

    async def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.seen.update(texts)
        return await super().embed(texts)


async def vectors(engram: Engram, tenant: str, model: str) -> int:
    async with engram.db.tenant(tenant) as conn:
        row = await (await conn.execute(
            "SELECT count(*) AS n FROM memory_embeddings WHERE model_id = %s", [model])).fetchone()  # fmt: skip
    return int(row["n"]) if row else 0


async def test_an_interrupted_migration_resumes_and_embeds_each_memory_once(engram: Engram, database_url: str) -> None:
    old = engram.model_id
    texts = {t: [f"{t} note {i}: the invoice batch {i} ships in EUR" for i in range(40)] for t in ("acme", "globex")}
    for tenant, items in texts.items():
        await engram.remember_many([{"content": c} for c in items], tenant=tenant)
    target = texts["acme"][7]
    assert (await engram.recall("invoice batch 7 ships", tenant="acme")).items[0].content == target

    seen: Counter[str] = Counter()
    progress: list[int] = []

    def interrupt(done: int, total: int) -> None:
        progress.append(done)
        if done >= 20:
            task.cancel()  # between two batches

    task = asyncio.create_task(engram.reembed("hashing:256", batch=10, progress=interrupt, grace=0,
                                              embedder=Counting(seen)))  # fmt: skip
    with pytest.raises(asyncio.CancelledError):
        await task
    status = await engram.reembed_status()
    assert status.state == "building" and status.to_model == NEW and 0 < status.queued < 80
    assert engram.model_id == old  # reads have not moved
    assert (await engram.recall("invoice batch 7 ships", tenant="acme")).items[0].content == target

    late = await engram.remember("A note written during the migration about refunds", tenant="acme")
    with pytest.raises(ConflictError):
        await engram.reembed("hashing:128", embedder=HashingEmbedder(128))  # another target while one is open

    resumed = await engram.reembed("hashing:256", batch=10, grace=0, embedder=Counting(seen))
    assert resumed.state == "done" and resumed.from_model == old and resumed.to_model == NEW
    everything = [c for items in texts.values() for c in items] + ["A note written during the migration about refunds"]
    assert set(seen) == set(everything) and set(seen.values()) == {1}  # each embedded exactly once
    for tenant in texts:
        assert await vectors(engram, tenant, NEW) == len(texts[tenant]) + (tenant == "acme")
        assert await vectors(engram, tenant, old or "") == 0  # the old vectors are gone
    assert resumed.dropped_vectors == 81 and resumed.dropped_indexes
    async with engram.db.owner() as conn:
        query = "SELECT count(*) AS n FROM pg_indexes WHERE indexname = ANY(%s)"
        left = await (await conn.execute(query, [resumed.dropped_indexes])).fetchone()
    assert left is not None and left["n"] == 0
    assert engram.model_id == NEW
    hit = await engram.recall("invoice batch 7 ships", tenant="acme")
    assert hit.items[0].content == target and not hit.degraded
    assert (await engram.get(late.id, tenant="acme")).content.startswith("A note written")
    assert (await engram.reembed_status()).state == "none"

    # Another process, configured with the old model, embeds with the new one from its start.
    other = await Engram.open(settings_for(database_url), embedder=HashingEmbedder(), tenant="acme")
    try:
        assert other.model_id == NEW
        assert (await other.recall("invoice batch 7 ships")).items[0].content == target
    finally:
        await other.close()
    with pytest.raises(ValidationError) as same:
        await engram.reembed("hashing:256")
    assert same.value.field == "model"


def test_bad_model_names_are_refused() -> None:
    from engram import Settings
    from engram.providers.factory import build_embedder_spec

    for bad in ("bert", "hashing:0", "hashing:x", "openai", "local:2"):
        with pytest.raises(ValidationError) as refused:
            build_embedder_spec(bad, Settings())
        assert refused.value.field == "model"


async def test_a_cli_run_killed_with_sigkill_resumes_to_exactly_one_vector_each(
    engram: Engram, database_url: str, tmp_path: Path
) -> None:
    await engram.update_admission_policy({"deduplicate": []})
    for start in range(0, 2000, 500):
        await engram.remember_many([{"content": f"ticket {i} about order {i * 7}"} for i in range(start, start + 500)])
    env = {
        **os.environ, "DATABASE_URL": service_url(database_url), "ENGRAM_OWNER_DATABASE_URL": database_url,
        "ENGRAM_EMBEDDER": "hashing",
    }  # fmt: skip
    cmd = [str(Path(sys.executable).parent / "engram"), "reembed", "--model", "hashing:256", "--batch", "5"]
    proc = subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while await vectors(engram, "acme", NEW) < 100:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        await asyncio.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    partial = await vectors(engram, "acme", NEW)
    assert 100 <= partial < 2000
    status = subprocess.run([*cmd[:2], "--status", "--json"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert status.returncode == 0 and '"state":"building"' in status.stdout.replace(" ", ""), status.stdout
    done = subprocess.run([*cmd, "--json"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert await vectors(engram, "acme", NEW) == 2000 and await vectors(engram, "acme", "engram/hashing-384") == 0
    bad = subprocess.run([*cmd[:2], "--model", "bert"], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown embedding model" in bad.stderr
