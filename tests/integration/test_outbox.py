"""Actions and the outbox (SPEC 7) on the real database, against a real local HTTP receiver: one transaction
for the memory and its action, idempotent writes, dispatch with the key, retries with backoff, dead letters,
LISTEN/NOTIFY wake-ups, and workers in processes of their own (three racing, and killed mid-dispatch)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import Engram
from engram.errors import IdempotencyConflict, PolicyRejection, ValidationError
from engram.outbox.dispatcher import Dispatcher
from tests.conftest import service_url
from tests.receiver import Receiver, receiver


@pytest.fixture
def hook() -> Iterator[Receiver]:
    with receiver() as r:
        yield r


def fast(engram: Engram, **kw: float) -> Dispatcher:
    return Dispatcher(engram, backoff_base=0.01, backoff_max=0.05, **kw)  # type: ignore[arg-type]


async def drain(dispatcher: Dispatcher, rounds: int = 50) -> None:
    """Run the dispatcher until nothing is due (retries come due within backoff_max)."""
    for _ in range(rounds):
        if not await dispatcher.run_once():
            await asyncio.sleep(0.06)
            if not await dispatcher.run_once():
                return


async def test_the_memory_and_its_action_are_written_together_once(engram: Engram, hook: Receiver) -> None:
    request = {
        "idempotency_key": "refund-INV-7",
        "url": hook.url,
        "payload": {"invoice": "INV-7", "amount": 120.5},
        "memory": {"content": "Decided to refund invoice INV-7 in full", "kind": "episodic", "user_id": "u1"},
        "user_id": "u1",
    }
    first = await engram.act(request)
    assert not first.replayed and first.memory is not None and first.action.status == "pending"
    assert first.action.memory_id == first.memory.id and first.action.attempts == 0
    again = await engram.act(request)
    assert again.replayed and again.action.id == first.action.id and again.memory is not None
    assert again.memory.id == first.memory.id
    with pytest.raises(IdempotencyConflict) as conflict:
        await engram.act({**request, "payload": {"invoice": "INV-8"}})
    assert conflict.value.field == "idempotency_key"
    assert len((await engram.list(user_id="u1")).items) == 1

    # A memory the admission policy refuses takes its action with it: neither is written.
    await engram.update_admission_policy({"secrets": "reject"})
    with pytest.raises(PolicyRejection) as refused:
        secret = "the key is AKIAIOSFODNN7EXAMPLE and secret wJalrXUtnFEMI/K7MDENG"
        await engram.act({**request, "idempotency_key": "k2", "memory": {"content": secret}})
    assert refused.value.field is not None and refused.value.field.startswith("memory.")
    assert (await engram.actions()).items == [first.action.model_copy(update={})]
    for bad, field in (({"url": "ftp://x"}, "url"), ({"handler": "carrier-pigeon"}, "handler"),
                       ({"url": None}, "url"), ({"max_attempts": 0}, "max_attempts")):  # fmt: skip
        with pytest.raises(ValidationError) as invalid:
            await engram.act({**request, "idempotency_key": "k3", **bad})
        assert invalid.value.field == field


async def test_dispatch_sends_the_key_and_records_the_outcome(engram: Engram, hook: Receiver) -> None:
    made = await engram.act({"idempotency_key": "email-42", "url": hook.url, "payload": {"to": "ann@example.com"},
                             "workflow_id": "wf-9"})  # fmt: skip
    assert await fast(engram).run_once() == 1
    assert hook.applied == {"email-42": 1} and hook.bodies["email-42"] == {"to": "ann@example.com"}
    sent = hook.headers["email-42"]
    assert sent["X-Engram-Action-Id"] == str(made.action.id) and sent["Content-Type"] == "application/json"
    done = await engram.action(made.action.id)
    assert done.status == "done" and done.attempts == 1 and done.result and done.result["status_code"] == 200
    assert done.outcome_memory_id is not None and done.finished_at is not None
    outcome = await engram.get(done.outcome_memory_id, workflow_id="wf-9")
    assert outcome.kind == "episodic" and "email-42" in outcome.content and "carried out" in outcome.content
    assert outcome.metadata["action_id"] == str(made.action.id)
    assert await fast(engram).run_once() == 0  # nothing is due any more


async def test_retries_back_off_then_dead_letter(engram: Engram, hook: Receiver) -> None:
    hook.script = {"flaky": [503, 503], "down": [500] * 10, "refused": [400]}
    ids = {}
    for key, attempts in (("flaky", 5), ("down", 3), ("refused", 5)):
        ids[key] = (await engram.act({"idempotency_key": key, "url": hook.url, "max_attempts": attempts})).action.id
    await drain(fast(engram))
    flaky, down, refused = [await engram.action(ids[k]) for k in ("flaky", "down", "refused")]
    assert flaky.status == "done" and flaky.attempts == 3 and hook.applied["flaky"] == 1
    assert down.status == "dead" and down.attempts == 3 and "500" in (down.last_error or "")
    assert hook.deliveries["down"] == 3
    assert refused.status == "dead" and refused.attempts == 1 and hook.deliveries["refused"] == 1  # a 4xx: no retry
    assert down.outcome_memory_id is not None
    failed = await engram.get(down.outcome_memory_id)
    assert "failed after 3 attempts" in failed.content and "not carried out" in failed.content
    assert [a.id for a in (await engram.actions(status="dead")).items] == [ids["refused"], ids["down"]]
    # A reviewer sends a dead letter again once the receiver is fixed.
    hook.script["down"] = []
    revived = await engram.retry_action(ids["down"])
    assert revived.status == "pending" and revived.attempts == 0
    await drain(fast(engram))
    assert (await engram.action(ids["down"])).status == "done" and hook.applied["down"] == 1


async def test_a_worker_wakes_on_notify(engram: Engram, hook: Receiver) -> None:
    worker = Dispatcher(engram, poll=30.0)
    worker.start()
    try:
        await asyncio.sleep(0.5)  # listening
        started = time.monotonic()
        await engram.act({"idempotency_key": "wake", "url": hook.url})
        while not hook.applied:
            assert time.monotonic() - started < 5, "the worker did not wake on the notification"
            await asyncio.sleep(0.02)
    finally:
        await worker.stop()


def _worker(database_url: str, logs: Path, n: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ, "DATABASE_URL": service_url(database_url), "ENGRAM_OWNER_DATABASE_URL": database_url,
        "ENGRAM_EMBEDDER": "hashing", "ENGRAM_ENRICHMENT_INTERVAL": "0.5",
        "ENGRAM_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1",
    }  # fmt: skip
    out = (logs / f"worker-{n}.log").open("wb")
    cmd = [sys.executable, "-m", "engram.cli.main", "worker", "--lease-seconds", "2", "--batch", "4"]
    return subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)


async def _queue(engram: Engram, keys: set[str], url: str) -> None:
    for key in sorted(keys):
        memory = {"content": f"Queued notification {key}", "user_id": "u1"}
        await engram.act({"idempotency_key": key, "url": url, "payload": {"n": key}, "memory": memory, "user_id": "u1"})


async def _settled(engram: Engram, n: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while True:
        actions = (await engram.actions(limit=500)).items
        if len(actions) == n and all(a.status == "done" for a in actions):
            return
        assert time.monotonic() < deadline, "not every action was settled"
        await asyncio.sleep(0.2)


def _stop(workers: list[subprocess.Popen[bytes]]) -> None:
    for w in workers:
        w.send_signal(signal.SIGTERM)
    for w in workers:
        try:
            w.wait(15)
        except subprocess.TimeoutExpired:
            w.kill()


@pytest.mark.slow
async def test_three_workers_race_and_survive_sigkill_mid_dispatch(
    engram: Engram, hook: Receiver, database_url: str, tmp_path: Path
) -> None:
    # Three workers race for 60 actions: each is sent exactly once.
    racing = {f"race-{n:03d}" for n in range(60)}
    await _queue(engram, racing, hook.url)
    workers = [_worker(database_url, tmp_path, n) for n in range(3)]
    try:
        await asyncio.to_thread(hook.wait_applied, racing, 60)
        await _settled(engram, 60)
        assert hook.deliveries == dict.fromkeys(racing, 1)

        # Then every worker is killed while one of them waits on a receiver that has applied its action
        # and not yet answered. Three new workers send what was in flight again, with the same keys.
        crashing = {f"crash-{n:03d}" for n in range(30)}
        hook.hang = {"crash-007": 4.0}
        await _queue(engram, crashing, hook.url)
        assert await asyncio.to_thread(hook.arrived.wait, 60), "no worker reached the hanging receiver"
        for w in workers:
            w.send_signal(signal.SIGKILL)
            w.wait(10)
        workers = [_worker(database_url, tmp_path, n) for n in range(3, 6)]
        await asyncio.to_thread(hook.wait_applied, crashing, 60)
        await _settled(engram, 90)
    finally:
        _stop(workers)
    assert hook.applied == dict.fromkeys(racing | crashing, 1)  # every action applied exactly once
    assert hook.deliveries["crash-007"] >= 2  # sent again after the kill, with the same key
    actions = (await engram.actions(limit=500)).items
    assert all(a.outcome_memory_id is not None for a in actions)
    outcomes = [m for m in (await engram.list(user_id="u1", limit=500)).items if m.subtype == "action_outcome"]
    assert len(outcomes) == 90  # one outcome memory per action, however often it was sent


async def test_webhooks_to_private_addresses_are_refused_unless_listed(database_url: str, hook: Receiver) -> None:
    """SSRF: a caller may not make the worker POST to the metadata service or the server's own network;
    and when the operator's list no longer allows a stored action's host, it dies unsent."""
    from engram import HashingEmbedder
    from engram.outbox.handlers import Webhook
    from engram.outbox.targets import Targets
    from tests.conftest import settings_for

    strict = await Engram.open(
        settings_for(database_url, webhook_allowed_hosts=None), embedder=HashingEmbedder(), tenant="acme"
    )
    try:
        for url in ("http://169.254.169.254/latest/meta-data/", hook.url, hook.url.replace("127.0.0.1", "localhost")):
            with pytest.raises(ValidationError) as refused:
                await strict.act({"idempotency_key": f"k-{len(url)}", "url": url, "payload": {}})
            assert refused.value.field == "url" and "ENGRAM_WEBHOOK_ALLOWED_HOSTS" in str(refused.value)
        assert (await strict.actions()).items == []
        # Written while the host was allowed, dispatched after the operator took it off the list.
        lenient = await Engram.open(settings_for(database_url), embedder=HashingEmbedder(), tenant="acme")
        try:
            made = await lenient.act({"idempotency_key": "was-allowed", "url": hook.url, "payload": {"n": 1}})
        finally:
            await lenient.close()
        assert isinstance(strict.handlers["webhook"], Webhook)
        assert not strict.handlers["webhook"].targets.restricted and Targets.parse("127.0.0.1").restricted
        await drain(fast(strict))
        dead = await strict.action(made.action.id)
        assert dead.status == "dead" and dead.attempts == 1 and "not sent" in (dead.last_error or "")
        assert not hook.deliveries  # nothing reached the receiver
    finally:
        await strict.close()
