"""The write path (SPEC 4): parse and bind each item to its caller, embed (never the same content twice),
write in one transaction (item by item when one fails), and answer each item on its own."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from engram.errors import EngramError, ProviderError, StoreUnavailable, Throttled, ValidationError
from engram.model import MemoryInput, WriteResult
from engram.model.access import Action, Principal
from engram.model.admission import AdmissionPolicy, Admitted
from engram.model.decision import Admission
from engram.model.validation import parse
from engram.observability import metrics, tracing
from engram.providers.base import Vector
from engram.service import dedup, pii
from engram.service.admission import admit_items, policy_of, screen_vectors
from engram.store import embeddings as emb
from engram.store import memories as q
from engram.store import tenants
from engram.store.database import Conn

if TYPE_CHECKING:
    from engram.providers.gateway import EmbeddingGateway
    from engram.service.core import Core

_log = logging.getLogger(__name__)

EmbedMode = Literal["sync", "deferred"]
MemoryLike = MemoryInput | Mapping[str, Any]
MAX_BATCH = 1000
# Run inside the write's transaction, after the memories are written (an action of the outbox is written
# so): what it raises undoes the write.
AfterWrite = Callable[[Conn, list[q.Outcome]], Awaitable[None]]


async def remember_many(
    engram: Core, who: Principal, items: Sequence[MemoryLike], embed: EmbedMode, *, batch: bool,
    admission: bool = True, after: AfterWrite | None = None,
) -> list[WriteResult | EngramError]:  # fmt: skip
    """Each item succeeds or fails on its own. In a batch (``batch``) an item's error names its field as
    ``items[i].field``, whichever layer found it. ``admission`` False skips the tenant's policy: only
    ``engram bench write`` does, to measure what admission costs."""
    who.require(Action.WRITE)
    if len(items) > MAX_BATCH:
        raise ValidationError(f"a batch holds at most {MAX_BATCH} items, got {len(items)}", field="items")
    await engram.follow_reads()
    with metrics.WRITE_SECONDS.time(), tracing.tracer().start_as_current_span("engram.write") as span:
        span.set_attribute("engram.items", len(items))
        results = await _remember_many(engram, who, items, embed, batch, admission, after)
    for r in results:
        metrics.WRITES.labels("error" if isinstance(r, EngramError) else r.status).inc()
    return results


async def _remember_many(
    engram: Core, who: Principal, items: Sequence[MemoryLike], embed: EmbedMode, batch: bool, admission: bool,
    after: AfterWrite | None,
) -> list[WriteResult | EngramError]:  # fmt: skip
    results: list[WriteResult | EngramError | None] = [None] * len(items)
    parsed: list[tuple[int, MemoryInput]] = []
    for index, raw in enumerate(items):
        prefix = f"items[{index}]." if batch else ""
        try:
            item = parse(MemoryInput, raw, prefix=("items", index) if batch else ())
            parsed.append((index, bind(who, item, prefix)))
        except EngramError as exc:
            results[index] = exc
    admitted: list[Admitted] = []
    policy = await policy_of(engram, who.tenant_id) if admission else None
    if parsed and policy is not None:
        admitted, refused = admit_items(policy, parsed)
        admitted, unmasked = await pii.mask_items(engram, who.tenant_id, policy, admitted)
        for index, error in {**refused, **unmasked}.items():
            results[index] = in_item(error, index) if batch else error
    elif parsed:
        admitted = [Admitted(index, item, Admission()) for index, item in parsed]
    if admitted:
        tenant_id = who.tenant_id
        if tenant_id not in engram.known_tenants:  # once per process and tenant
            async with engram.db.tenant(tenant_id) as conn:
                await tenants.ensure(conn, tenant_id)
            engram.known_tenants.add(tenant_id)
        vectors, defer_reason = await vectors_for(engram, tenant_id, [a.item for a in admitted], embed)
        if policy is not None:
            model_id = engram.gateway.model_id if engram.gateway is not None else None
            admitted, refused = screen_vectors(policy, admitted, vectors, model_id)
            for index, error in refused.items():
                results[index] = in_item(error, index) if batch else error
        outcomes = await _store(engram, who, admitted, vectors, defer_reason, policy, after)
        by_index = {a.index: a for a in admitted}
        for out in outcomes:
            result = result_of(out, vectors, by_index[out.index].admission)
            results[out.index] = in_item(result, out.index) if batch else result
    missing = [i for i, r in enumerate(results) if r is None]
    assert not missing, f"items {missing} got no result"
    return [r for r in results if r is not None]


async def _store(
    engram: Core,
    who: Principal,
    admitted: list[Admitted],
    vectors: Mapping[str, Vector],
    defer_reason: str,
    policy: AdmissionPolicy | None,
    after: AfterWrite | None = None,
) -> list[q.Outcome]:
    """Write the admitted items in one transaction; when one fails in the database, each in its own, so that
    one bad item does not sink the batch (``after`` is for single writes)."""
    if not admitted:
        return []
    if len(admitted) == 1:
        return [await write_one(engram, who, admitted[0], vectors, defer_reason, policy, after)]
    assert after is None, "after= is for one item"
    try:
        return await write(engram, who, admitted, vectors, defer_reason, policy)
    except (StoreUnavailable, Throttled):
        raise
    except EngramError:
        return [await write_one(engram, who, a, vectors, defer_reason, policy) for a in admitted]


def bind(who: Principal, item: MemoryInput, prefix: str = "") -> MemoryInput:
    """The item as its caller may write it: user and agent from a bound key, visibility within reach."""
    user = who.bound(item.user_id, "user_id", field=f"{prefix}user_id")
    agent = who.bound(item.agent_id, "agent_id", field=f"{prefix}agent_id")
    who.check_visibility(item.visibility, field=f"{prefix}visibility")
    if (user, agent) == (item.user_id, item.agent_id):
        return item
    return item.model_copy(update={"user_id": user, "agent_id": agent})


def in_item(result: WriteResult | EngramError, index: int) -> WriteResult | EngramError:
    """An item's error with its fields named inside the batch (``items[3].valid_until``)."""
    if isinstance(result, EngramError):
        prefix = f"items[{index}]"
        if result.field and not result.field.startswith(prefix):
            result.field = f"{prefix}.{result.field}"
        if isinstance(result, ValidationError):
            for d in result.details:
                if d.get("field") and not d["field"].startswith(prefix):
                    d["field"] = f"{prefix}.{d['field']}"
    return result


async def write_one(
    engram: Core, who: Principal, one: Admitted, vectors: Mapping[str, Vector], reason: str,
    policy: AdmissionPolicy | None, after: AfterWrite | None = None,
) -> q.Outcome:  # fmt: skip
    try:
        return (await write(engram, who, [one], vectors, reason, policy, after))[0]
    except (StoreUnavailable, Throttled):
        raise
    except EngramError as exc:
        return q.Outcome(one.index, uuid.UUID(int=0), False, [], error=exc)


def result_of(out: q.Outcome, vectors: Mapping[str, Vector], admission: Admission) -> WriteResult | EngramError:
    if out.error is not None:
        return out.error if isinstance(out.error, EngramError) else EngramError(str(out.error))
    if out.merged and out.memory is not None:  # a repeat: merged into the stored memory
        m = out.memory
        merged = dedup.merged_admission(admission, out)
        return WriteResult(
            id=m.id, revision=m.revision, status=m.status, replayed=False, reasons=[*out.reasons, *admission.codes],
            memory=m, embedded=out.embedded, admission=merged, merged_into=m.id,
        )  # fmt: skip
    if out.memory is not None:  # replay: the stored row answers
        m = out.memory
        return WriteResult(
            id=m.id, revision=m.revision, status=m.status, replayed=True, reasons=out.reasons, memory=m,
            embedded=out.embedded, admission=m.admission,
        )  # fmt: skip
    embedded = out.content_hash in vectors
    reasons = [*out.reasons, *admission.codes]
    if not embedded:
        reasons.append("embedding_deferred")
    return WriteResult(
        id=out.id,
        revision=1,
        status=admission.status,
        replayed=False,
        reasons=reasons,
        admission=admission,
        supersedes=out.supersedes,
        embedded=embedded,
    )


async def vectors_for(
    engram: Core, tenant_id: str, items: Sequence[MemoryInput], embed: EmbedMode
) -> tuple[dict[str, Vector], str]:
    """Vectors by content hash: reused from the tenant's existing rows, else computed in one batch."""
    gateway = engram.gateway
    if gateway is None:
        return {}, "no_embedder"
    if embed == "deferred":
        return {}, "deferred_by_caller"
    texts: dict[str, str] = {}
    for item in items:
        texts.setdefault(item.content_hash, item.content)
    async with engram.db.tenant(tenant_id) as conn:
        vectors = await emb.vectors_by_hash(conn, tenant_id, gateway.model_id, list(texts))
    missing = [h for h in texts if h not in vectors]
    if missing:
        try:
            computed = await gateway.embed([texts[h] for h in missing])
        except ProviderError as exc:
            _log.warning("embedding deferred for %d texts: %s", len(missing), exc)
            return vectors, f"embedder_failed: {exc.message}"
        vectors.update(zip(missing, computed, strict=True))
    return vectors, ""


async def write(
    engram: Core,
    who: Principal,
    items: Sequence[Admitted],
    vectors: Mapping[str, Vector],
    defer_reason: str,
    policy: AdmissionPolicy | None,
    after: AfterWrite | None = None,
) -> list[q.Outcome]:
    tenant_id = who.tenant_id
    journal = q.Journal()
    gateway = engram.gateway
    async with engram.db.tenant(tenant_id) as conn:
        fts = await q.tenant_fts_config(conn, tenant_id)
        model = gateway.model_id if gateway is not None else None
        folded = (
            await dedup.fold(conn, tenant_id, policy, model, items, vectors, journal, who.actor)
            if policy is not None
            else dedup.Folded(list(items), [], {})
        )
        plain = [a for a in folded.to_insert if a.item.fact_key is None]
        facts = [a for a in folded.to_insert if a.item.fact_key is not None]
        outcomes = await q.insert_plain(conn, tenant_id, plain, fts, journal) if plain else []
        for fact in facts:
            outcomes.append(await q.insert_fact(conn, tenant_id, fact, fts, journal))
        stored = {o.index: o.id for o in outcomes if o.error is None}
        admitted_at = {a.index: a for a in items}
        for later, (earlier, similarity) in folded.into_batch.items():  # repeats of an item of this batch
            later_item = admitted_at[later]
            outcomes.append(
                await dedup.merge_into(conn, tenant_id, later_item, stored[earlier], similarity, journal, who.actor)
            )
        outcomes += folded.outcomes
        by_index = {a.index: a.item for a in items}
        for out in outcomes:
            out.content_hash = by_index[out.index].content_hash
        created = [o for o in outcomes if o.created]
        if gateway is not None:
            model = gateway.model_id
            await emb.store_vectors(
                conn, tenant_id, model, [(o.id, o.content_hash, vectors[o.content_hash]) for o in created
                                         if o.content_hash in vectors]
            )  # fmt: skip
            waiting = [o.id for o in created if o.content_hash not in vectors]
            await emb.enqueue(conn, tenant_id, model, waiting, defer_reason or "no_vector")
            replayed = [o for o in outcomes if o.memory is not None]
            have = await emb.embedded_ids(conn, tenant_id, model, [o.memory.id for o in replayed if o.memory])
            for o in replayed:
                o.embedded = o.id in have
        in_session = [o for o in created if by_index[o.index].session_id is not None]
        await refresh_sessions(
            engram, conn, tenant_id, [by_index[o.index].session_id for o in in_session], [o.id for o in in_session]
        )
        await journal.flush(conn, tenant_id, who.actor)
        if after is not None:
            await after(conn, outcomes)
    if any(o.created and o.content_hash not in vectors for o in outcomes):
        engram.work_pending.set()
    return outcomes


async def refresh_sessions(
    engram: Core,
    conn: Conn,
    tenant_id: str,
    sessions: Iterable[str | None],
    around: Sequence[uuid.UUID] | None = None,
    gateway: EmbeddingGateway | None = None,
) -> None:
    """Rebuild conversational search keys and context vectors of these sessions (see 0002_retrieval.sql):
    of the memories within two positions of ``around``, or of all of them when it is None; the vectors of
    ``gateway``'s model (default: the one Engram embeds with)."""
    todo = sorted({s for s in sessions if s is not None})
    if not todo:
        return
    gateway = gateway or engram.gateway
    model, dims = (gateway.model_id, gateway.dimensions) if gateway else ("", 1)
    ids = list(around) if around is not None else None
    await conn.execute(emb.REFRESH_SESSIONS, [tenant_id, todo, model, dims, ids])
    engram.retriever.note_context(tenant_id)
