"""Extraction as a service operation (SPEC 4.6): the configured extractor proposes candidates from a text, and
each is written through the same path as ``remember_many``, so every candidate passes the whole admission
policy (validation, filler, secrets, injection, impact, deduplication) exactly like a direct write.

A dry run writes nothing: each candidate carries the decision the policy would give it (before the checks
that need the store: deduplication and the vector classifier)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Self

from engram.config import Settings
from engram.errors import EngramError, PolicyRejection
from engram.extraction import Candidate, Dropped, Extractor, ExtractRequest, RuleExtractor, build_extractor, to_input
from engram.model import MemoryInput, WriteResult
from engram.model.access import Action, Principal
from engram.model.decision import Admission
from engram.model.validation import parse
from engram.policy import admit
from engram.providers.base import Embedder
from engram.service.admission import policy_of
from engram.service.core import Core
from engram.service.writes import EmbedMode, bind, remember_many


@dataclass(frozen=True)
class Extracted:
    """One candidate: as admission leaves it (a secret redacted), the decision, and its write's result (an
    error when refused; None in a dry run)."""

    candidate: Candidate
    admission: Admission
    result: WriteResult | EngramError | None


@dataclass(frozen=True)
class ExtractionReport:
    extractor: str
    dry_run: bool
    items: list[Extracted]
    dropped: list[Dropped]


class Extractions(Core):
    """Extraction, as an operation of Engram. The extractor comes from the settings ``open`` reads (the rules
    unless an LLM is configured), or is passed to ``open``."""

    extractor: Extractor = RuleExtractor()

    @classmethod
    async def open(
        cls,
        settings: Settings | None = None,
        *,
        embedder: Embedder | None = None,
        tenant: str | None = None,
        run_migrations: bool | None = None,
        embedding: bool = True,
        create: bool = True,
        extractor: Extractor | None = None,
    ) -> Self:
        settings = settings or Settings()
        chosen = extractor or build_extractor(settings)  # a configuration error stops before the database
        try:
            engram = await super().open(
                settings, embedder=embedder, tenant=tenant, run_migrations=run_migrations, embedding=embedding,
                create=create,
            )  # fmt: skip
        except BaseException:
            await chosen.aclose()
            raise
        engram.extractor = chosen
        return engram

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            await self.extractor.aclose()

    async def extract(
        self,
        request: str | ExtractRequest | Mapping[str, Any],
        *,
        tenant: str | None = None,
        actor: str = "library",
        embed: EmbedMode = "sync",
        principal: Principal | None = None,
        **fields: Any,
    ) -> ExtractionReport:
        """Propose memories from a conversation or tool output and write each through the admission policy
        (``dry_run``: only screen them). ``request`` is the text, with the scope as keyword arguments
        (``user_id=...``), or an :class:`ExtractRequest`. Raises ProviderError when the LLM fails."""
        raw = {"text": request, **fields} if isinstance(request, str) else request
        req = parse(ExtractRequest, raw)
        who = self._who(tenant, principal, actor)
        who.require(Action.WRITE)
        # The caller's scope is checked before the extractor runs (it may cost a model call).
        scope = bind(who, _scope(req))
        extraction = await self.extractor.extract(req.text, hints=req.hints)
        items = [
            to_input(
                c, user_id=scope.user_id, agent_id=scope.agent_id, workflow_id=req.workflow_id,
                session_id=req.session_id, visibility=req.visibility, source_ref=req.source.ref,
            )
            for c in extraction.candidates
        ]  # fmt: skip
        policy = await policy_of(self, who.tenant_id)
        previews = [admit(item, policy) for item in items]
        results: list[WriteResult | EngramError | None] = [None] * len(items)
        if not req.dry_run and items:
            results = list(await remember_many(self, who, items, embed, batch=True))
        out = [
            Extracted(_as_admitted(c, clean), _decision(result, preview), result)
            for c, (clean, preview), result in zip(extraction.candidates, previews, results, strict=True)
        ]
        return ExtractionReport(extraction.extractor, req.dry_run, out, extraction.dropped)


def _scope(req: ExtractRequest) -> MemoryInput:
    return MemoryInput(
        content="scope", user_id=req.user_id, agent_id=req.agent_id, workflow_id=req.workflow_id,
        session_id=req.session_id, visibility=req.visibility,
    )  # fmt: skip


def _as_admitted(candidate: Candidate, clean: MemoryInput) -> Candidate:
    """The candidate with the text admission would store (secrets redacted, hidden text taken out)."""
    changed = {"content": clean.content, "tags": clean.tags}
    return candidate.model_copy(update={k: v for k, v in changed.items() if v != getattr(candidate, k)})


def _decision(result: WriteResult | EngramError | None, preview: Admission) -> Admission:
    """The write's decision when there was a write, else the preview."""
    if isinstance(result, WriteResult):
        return result.admission
    if isinstance(result, PolicyRejection) and result.admission is not None:
        return Admission.model_validate(result.admission)
    return preview
