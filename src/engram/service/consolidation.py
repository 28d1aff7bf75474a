"""Consolidation (SPEC 6.4): episodes of one tenant and agent that keep saying the same thing (counting the
repeats the write path merged into them) become one
semantic fact, written through the whole write path, ``derived_from`` each of them. Deterministic and
idempotent: the same episodes give the same groups, the same fact (its external id is the evidence set) and
the same links, so a second run writes nothing; a group that grew writes a new version of its fact (same
fact_key), which supersedes the earlier one. Episodes stay: they are the evidence."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from engram.errors import EngramError
from engram.lifecycle.consolidate import Episode, Group, confidence, group
from engram.model import Memory, MemoryPatch
from engram.model.access import Action, Principal
from engram.model.consolidation import ConsolidatedFact, ConsolidationReport, ConsolidationRequest
from engram.model.recall import RelationInput
from engram.model.validation import parse
from engram.service import changes
from engram.service.core import Core
from engram.service.writes import remember_many
from engram.store import consolidation as store
from engram.store import memories as q
from engram.store import relations

MAX_EPISODES = 20_000  # the newest, per run: the grouping is quadratic in a scope's groups


class Consolidation(Core):
    async def consolidate(
        self,
        request: ConsolidationRequest | Mapping[str, Any] | None = None,
        *,
        tenant: str | None = None,
        actor: str = "consolidation",
        principal: Principal | None = None,
        **fields: Any,
    ) -> ConsolidationReport:
        """Turn repeated episodes of one agent (``agent_id``; none: the agent-less ones) into facts (admin).
        A consolidation of the same tenant and agent already running makes this one return at once
        (``skipped_locked``)."""
        who = self._who(tenant, principal, actor)
        who.require(Action.MAINTAIN)
        req = parse(ConsolidationRequest, request if request is not None else fields)
        tenant_id, agent = who.tenant_id, req.agent_id
        report = ConsolidationReport(tenant_id=tenant_id, agent_id=agent, skipped_locked=False)
        model = self.gateway.model_id if self.gateway is not None else None
        async with self.db.tenant(tenant_id) as conn:  # the lock lives as long as this transaction
            if not await store.try_lock(conn, tenant_id, agent):
                return report.model_copy(update={"skipped_locked": True})
            rows = await store.episodes(conn, tenant_id, agent, model, MAX_EPISODES)
            report.episodes = len(rows)
            scopes: dict[tuple[Any, ...], list[Episode]] = {}
            for r in rows:
                vector = None if r["embedding"] is None else _unit(np.asarray(r["embedding"].to_numpy(), np.float32))
                scopes.setdefault((r["user_id"], r["workflow_id"], r["visibility"]), []).append(
                    Episode(r["id"], r["content"], r["recorded_at"], vector, r["mentions"])
                )
            found = [(scope, g) for scope, eps in sorted(scopes.items(), key=lambda s: tuple(map(str, s[0])))
                     for g in group(eps) if g.evidence >= req.min_episodes]  # fmt: skip
            report.groups = len(found)
            if req.dry_run:
                report.facts = [_fact(scope, g, None, "dry_run") for scope, g in found]
                return report
            await self._write_facts(who, agent, found, report)
        return report

    async def _restate(self, who: Principal, fact_id: Any, g: Group) -> bool:
        """The fact says the same, on more evidence: a revision with the new count and confidence."""
        fact = await self._fetch(who.tenant_id, fact_id)
        if fact is None or fact.metadata.get("evidence_count") == g.evidence:
            return False
        patch = MemoryPatch(metadata={**fact.metadata, "evidence_count": g.evidence, "episodes": len(g.members)},
                            confidence=confidence(g.evidence))  # fmt: skip
        await changes.update(self, who, who.acting(user_id=fact.user_id, agent_id=fact.agent_id), fact.id, patch,
                             fact.revision)  # fmt: skip
        return True

    async def _fetch(self, tenant_id: str, fact_id: Any) -> Memory | None:
        async with self.db.tenant(tenant_id) as conn:
            return await q.fetch_one(conn, tenant_id, fact_id)

    async def episode_agents(self, tenant_id: str) -> list[str | None]:
        async with self.db.tenant(tenant_id) as conn:
            return await store.agents(conn, tenant_id)

    async def _write_facts(
        self, who: Principal, agent: str | None, found: list[tuple[tuple[Any, ...], Group]], report: ConsolidationReport
    ) -> None:
        items = [
            {
                "content": g.medoid().content, "kind": "semantic", "subtype": "consolidated", "fact_key": g.key(),
                "external_id": g.evidence_id(), "user_id": user, "agent_id": agent, "workflow_id": workflow,
                "visibility": visibility, "confidence": confidence(g.evidence),
                "source": {"type": "agent_inference", "ref": "consolidation"},
                "metadata": {"evidence_count": g.evidence, "episodes": len(g.members),
                             "representative": str(g.medoid().id)},
            }
            for (user, workflow, visibility), g in found
        ]  # fmt: skip
        results = await remember_many(self, who, items, "sync", batch=True)
        links: list[RelationInput] = []
        async with self.db.tenant(who.tenant_id) as conn:
            for (scope, g), result in zip(found, results, strict=True):
                if isinstance(result, EngramError):
                    report.facts.append(_fact(scope, g, None, f"refused: {result.message}"))
                    continue
                outcome = "unchanged" if result.replayed or not result.reasons or "created" not in result.reasons else (
                    "superseded_previous" if result.supersedes else "created")  # fmt: skip
                if outcome == "unchanged" and await self._restate(who, result.id, g):
                    outcome = "evidence_updated"
                if outcome in ("created", "superseded_previous"):
                    report.created += 1
                    report.superseded += len(result.supersedes)
                report.facts.append(_fact(scope, g, result.id, outcome))
                evidence = [m.id for m in g.members]
                have = await store.linked(conn, who.tenant_id, result.id, evidence)
                links += [RelationInput(src_id=result.id, dst_id=e, type="derived_from") for e in evidence
                          if e not in have and e != result.id]  # fmt: skip
            for link in links:
                await relations.upsert(conn, who.tenant_id, link)
            events = [("relation.upserted", r.src_id, {"dst_id": str(r.dst_id), "type": r.type}) for r in links]
            if events:
                await q.write_audit(conn, who.tenant_id, who.actor, events)
        report.links_added = len(links)


def _unit(v: np.ndarray[Any, Any]) -> np.ndarray[Any, Any] | None:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else None


def _fact(scope: tuple[Any, ...], g: Group, fact_id: Any, outcome: str) -> ConsolidatedFact:
    return ConsolidatedFact(id=fact_id, content=g.medoid().content, user_id=scope[0],
                            evidence=[m.id for m in g.members], outcome=outcome)  # fmt: skip


async def consolidate_tenant(engram: Consolidation, tenant_id: str) -> dict[str, Any]:
    """The scheduled job: every agent's episodes of the tenant, with the default threshold."""
    agents = await engram.episode_agents(tenant_id)
    reports = [await engram.consolidate(tenant=tenant_id, agent_id=a) for a in agents]
    return {"agents": len(agents), "created": sum(r.created for r in reports),
            "superseded": sum(r.superseded for r in reports)}  # fmt: skip
