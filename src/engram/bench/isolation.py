"""`engram bench isolation`: can one tenant starve another? Measured against a real `engram serve` process.

An attacker tenant holds 500 memories of 12 KB, each made of the identifiers it asks for, and sends
``attackers`` concurrent recalls of a query of about 685 identifiers (the longest query allowed), over and
over. A victim tenant meanwhile recalls sequentially. The same victim recalls are first measured alone (the
baseline, same run, same server). Everything goes through the REST API with API keys, as clients would.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import socket
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

from engram.bench.recall import query_from
from engram.bench.texts import memory_texts
from engram.config import Settings
from engram.evaluation.metrics import percentile
from engram.service import Engram

ATTACKER, VICTIM = "bench-attacker", "bench-victim"
ATTACK_MEMORIES = 500
MEMORY_CHARS = 12_000
QUERY_CHARS = 4_000  # the longest recall query: about 685 identifiers


def attack_query() -> str:
    words: list[str] = []
    i = 1
    while len(" ".join([*words, f"a_{i}"])) <= QUERY_CHARS:
        words.append(f"a_{i}")
        i += 1
    return " ".join(words)


def attack_memory(query: str, n: int) -> str:
    body = (query + " ") * (MEMORY_CHARS // (len(query) + 1) + 1)
    return body[: MEMORY_CHARS - 10].rstrip() + f" #{n}"


async def run_isolation_bench(
    *, attackers: int = 10, victim_recalls: int = 100, settings: Settings | None = None, data_dir: Path | None = None
) -> dict[str, Any]:
    tmp = None
    if data_dir is None:
        tmp = Path(tempfile.mkdtemp(prefix="engram-bench-isolation-"))
        data_dir = tmp
    base = (settings or Settings()).model_copy(update={"data_dir": data_dir, "database_url": None})
    try:
        keys = await _prepare(base)
        async with _server(base) as url:
            return await _measure(url, keys, attackers=attackers, victim_recalls=victim_recalls)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


async def _prepare(settings: Settings) -> dict[str, Any]:
    """Both tenants' memories and keys, written in process before the server starts (embedding deferred:
    the server's worker embeds them)."""
    query = attack_query()
    victim_texts = memory_texts(300, seed=23)
    async with await Engram.open(settings.model_copy(update={"embedding_timeout": 600.0})) as engram:
        await engram.remember_many(
            [{"content": attack_memory(query, i), "visibility": "tenant"} for i in range(ATTACK_MEMORIES)],
            tenant=ATTACKER, embed="deferred", actor="bench",
        )  # fmt: skip
        await engram.remember_many(
            [{"content": t, "visibility": "tenant"} for t in victim_texts], tenant=VICTIM, actor="bench"
        )
        while await engram.embedding_backlog():
            await engram.enrich_pending(limit=512, lease_seconds=600)
        await engram.analyze()
        attacker_key = (await engram.create_key({"role": "agent"}, tenant=ATTACKER)).key
        victim_key = (await engram.create_key({"role": "agent"}, tenant=VICTIM)).key
    rng = random.Random(5)
    victim_queries = [query_from(rng.choice(victim_texts), rng) for _ in range(400)]
    return {"attacker": attacker_key, "victim": victim_key, "query": query, "victim_queries": victim_queries}


@contextlib.asynccontextmanager
async def _server(settings: Settings) -> AsyncIterator[str]:
    """`engram serve` on the data directory, in a process of its own, until the block ends."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "ENGRAM_DATA_DIR": str(settings.data_dir), "ENGRAM_EMBEDDER": settings.embedder}
    env.pop("DATABASE_URL", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "from engram.cli.main import main; main()", "serve", "--port", str(port),
        env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=url, timeout=2) as probe:
            for _ in range(600):
                if proc.returncode is not None:
                    log = await proc.stderr.read() if proc.stderr else b""
                    raise RuntimeError(f"engram serve exited: {log.decode(errors='replace')[-2000:]}")
                with contextlib.suppress(httpx.TransportError):
                    if (await probe.get("/healthz")).status_code == 200:
                        break
                await asyncio.sleep(0.1)
        yield url
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 60)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def _victim_run(client: httpx.AsyncClient, queries: list[str]) -> tuple[list[float], int]:
    latencies, errors = [], 0
    for q in queries:
        started = time.perf_counter()
        r = await client.post("/v1/recall", json={"query": q, "max_items": 5})
        latencies.append((time.perf_counter() - started) * 1000)
        errors += r.status_code != 200
    return latencies, errors


def _client(url: str, key: str, connections: int) -> httpx.AsyncClient:
    # TCP_NODELAY: without it the request's body waits for the server's delayed ACK of its headers (40 ms).
    transport = httpx.AsyncHTTPTransport(
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        limits=httpx.Limits(max_connections=connections),
    )
    return httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120, transport=transport)


async def _measure(url: str, keys: dict[str, Any], *, attackers: int, victim_recalls: int) -> dict[str, Any]:
    async with _client(url, keys["victim"], 1) as victim, _client(url, keys["attacker"], attackers) as attacker:
        queries = keys["victim_queries"]
        await _victim_run(victim, queries[victim_recalls : victim_recalls + 20])  # warm-up, not measured
        baseline, baseline_errors = await _victim_run(victim, queries[:victim_recalls])

        statuses: Counter[int] = Counter()
        attack_ms: list[float] = []
        stop = asyncio.Event()

        async def attack() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                try:
                    r = await attacker.post("/v1/recall", json={"query": keys["query"], "max_items": 10})
                except httpx.TransportError:
                    statuses[0] += 1
                    continue
                statuses[r.status_code] += 1
                if r.status_code == 200:
                    attack_ms.append((time.perf_counter() - started) * 1000)
                elif r.status_code in (429, 503):  # as a client library would: honour Retry-After
                    await asyncio.sleep(float(r.headers.get("retry-after", "1")))

        tasks = [asyncio.create_task(attack()) for _ in range(attackers)]
        await asyncio.sleep(1.0)  # the attack is under way before the victim starts
        during, errors = await _victim_run(victim, queries[:victim_recalls])
        stop.set()
        await asyncio.gather(*tasks)
    return {
        "attackers": attackers,
        "attack_query_identifiers": len(keys["query"].split()),
        "attack_memories": ATTACK_MEMORIES,
        "victim_recalls": victim_recalls,
        "victim_recall_p50_ms": round(percentile(during, 50), 2),
        "victim_recall_p95_ms": round(percentile(during, 95), 2),
        "victim_errors": errors,
        "victim_baseline_p50_ms": round(percentile(baseline, 50), 2),
        "victim_baseline_p95_ms": round(percentile(baseline, 95), 2),
        "victim_baseline_errors": baseline_errors,
        "victim_p95_ratio": round(percentile(during, 95) / max(percentile(baseline, 95), 1e-9), 2),
        "attacker_statuses": {str(k): v for k, v in sorted(statuses.items())},
        "attacker_recall_p50_ms": round(percentile(attack_ms, 50), 2) if attack_ms else None,
    }
