"""What every extractor shares (SPEC 4.6): the request, the typed candidates an extractor proposes, and the
``Extractor`` interface. A candidate is only a proposal: the service writes it through the same admission
policy as any other write (``Engram.extract``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engram.model.memory import FactKey, Kind, MemoryInput, ScopeId, Source, SourceType, Tag, Unit, Visibility
from engram.model.rules import Input
from engram.model.text import MAX_CONTENT_CHARS, has_text, normalise_whitespace

MAX_TEXT_CHARS = 32_000  # one conversation turn or a tool output, not a document
MAX_CANDIDATES = 100
DEFAULT_MAX_CANDIDATES = 20
MAX_CANDIDATE_TAGS = 16
# Working memory is the agent's scratchpad for the session: extraction proposes lasting memories.
DEFAULT_KINDS: tuple[Kind, ...] = ("semantic", "episodic", "procedural")

Subtype = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z][a-z0-9_]*$")]


def _text(value: str, limit: int) -> str:
    text = normalise_whitespace(value)
    if not has_text(text):
        raise ValueError("must contain text; it is empty, or only whitespace and invisible characters")
    if len(text) > limit:
        raise ValueError(f"is {len(text)} characters after whitespace normalisation; the limit is {limit}")
    return text


class Candidate(Input):
    """A memory an extractor proposes: what a :class:`MemoryInput` needs, less its scope."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Kind
    content: str
    subtype: Subtype | None = Field(default=None, description="preference, decision, fact, instruction, failure...")
    fact_key: FactKey | None = Field(default=None, description="The attribute a later statement would replace")
    confidence: Unit = 0.8
    importance: Unit = 0.5
    tags: Annotated[list[Tag], Field(max_length=MAX_CANDIDATE_TAGS)] = Field(default_factory=list)
    source_type: SourceType = "user_message"
    origin: Annotated[str, Field(min_length=1, max_length=200)] = Field(
        description="What proposed it: rules:<rule> or llm:<model>"
    )

    @field_validator("content", mode="after")
    @classmethod
    def _content(cls, value: str) -> str:
        return _text(value, MAX_CONTENT_CHARS)

    @field_validator("tags", mode="after")
    @classmethod
    def _tags(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(value))


class Dropped(BaseModel):
    """A proposal that was not kept, and why (the extractor's output was invalid, or over a limit)."""

    index: int = Field(description="Its position in the extractor's output")
    reason: str
    field: str | None = None


class Extraction(BaseModel):
    """What an extractor answers: the valid candidates, in order, and what it dropped."""

    extractor: str
    candidates: list[Candidate]
    dropped: list[Dropped] = Field(default_factory=list)


@dataclass(frozen=True)
class ExtractionHints:
    """What the caller knows about the text: its source (every candidate takes it; an extractor never raises
    a text's trust), the kinds wanted, and how many candidates at most."""

    source_type: SourceType = "user_message"
    kinds: tuple[Kind, ...] = DEFAULT_KINDS
    max_candidates: int = DEFAULT_MAX_CANDIDATES


@runtime_checkable
class Extractor(Protocol):
    """Turns a conversation or tool output into typed candidates. Raises ProviderError when a model fails."""

    @property
    def name(self) -> str: ...

    async def extract(self, text: str, *, hints: ExtractionHints | None = None) -> Extraction: ...

    async def aclose(self) -> None: ...


# A trusted source (system_event) skips approval; what an extractor read from text has not earned that.
UntrustedSource = Literal["user_message", "tool_result", "document", "human_note", "agent_inference"]


class TextSource(Input):
    """Where the text came from: every candidate takes it as its source."""

    model_config = ConfigDict(extra="forbid")

    type: UntrustedSource = Field(
        default="user_message", description="Any source but system_event, which is trusted: extraction is not"
    )
    ref: Annotated[str, Field(min_length=1, max_length=2048)] | None = None


class ExtractRequest(Input):
    """Text to extract memories from, and the scope its memories are written to (``POST /v1/memories:extract``,
    ``Engram.extract``)."""

    model_config = ConfigDict(extra="forbid")

    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)] = Field(
        description="A conversation turn, several `Speaker: text` lines, or a tool output"
    )
    user_id: ScopeId | None = None
    agent_id: ScopeId | None = None
    workflow_id: ScopeId | None = None
    session_id: ScopeId | None = None
    visibility: Visibility = "user"
    source: TextSource = Field(default_factory=lambda: TextSource(), description="Where the text came from")
    kinds: Annotated[list[Kind], Field(min_length=1, max_length=4)] = Field(
        default_factory=lambda: list(DEFAULT_KINDS), description="The kinds of memory wanted"
    )
    max_candidates: Annotated[int, Field(ge=1, le=MAX_CANDIDATES)] = DEFAULT_MAX_CANDIDATES
    dry_run: bool = Field(default=False, description="Propose and screen the candidates, write nothing")

    @field_validator("text", mode="after")
    @classmethod
    def _check_text(cls, value: str) -> str:
        return _text(value, MAX_TEXT_CHARS)

    @field_validator("kinds", mode="after")
    @classmethod
    def _distinct_kinds(cls, value: list[Kind]) -> list[Kind]:
        return list(dict.fromkeys(value))

    @property
    def hints(self) -> ExtractionHints:
        return ExtractionHints(
            source_type=self.source.type, kinds=tuple(self.kinds), max_candidates=self.max_candidates
        )


def to_input(
    candidate: Candidate,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    workflow_id: str | None = None,
    session_id: str | None = None,
    visibility: Visibility = "user",
    source_ref: str | None = None,
) -> MemoryInput:
    """The candidate as a memory to write in this scope, marked with what proposed it."""
    return MemoryInput(
        content=candidate.content,
        kind=candidate.kind,
        subtype=candidate.subtype,
        fact_key=candidate.fact_key,
        confidence=candidate.confidence,
        importance=candidate.importance,
        tags=candidate.tags,
        source=Source(type=candidate.source_type, ref=source_ref),
        visibility=visibility,
        user_id=user_id,
        agent_id=agent_id,
        workflow_id=workflow_id,
        session_id=session_id,
        metadata={"extracted_by": candidate.origin},
    )


def bounded(
    extractor: str, proposed: list[tuple[int, Candidate]], dropped: list[Dropped], hints: ExtractionHints
) -> Extraction:
    """The proposals (by their index in the extractor's output) an extractor keeps: of the kinds wanted, each
    content once, at most ``max_candidates``."""
    kept: list[Candidate] = []
    seen: set[str] = set()
    out = list(dropped)
    for index, candidate in proposed:
        key = candidate.content.casefold()
        if candidate.kind not in hints.kinds:
            out.append(Dropped(index=index, reason=f"kind {candidate.kind} was not asked for", field="kind"))
        elif key in seen:
            out.append(Dropped(index=index, reason="repeats an earlier candidate", field="content"))
        elif len(kept) >= hints.max_candidates:
            out.append(Dropped(index=index, reason=f"over the limit of {hints.max_candidates} candidates"))
        else:
            seen.add(key)
            kept.append(candidate)
    out.sort(key=lambda d: d.index)
    return Extraction(extractor=extractor, candidates=kept, dropped=out)
