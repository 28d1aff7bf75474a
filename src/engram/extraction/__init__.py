"""Extraction (SPEC 4.6): an optional step that turns a conversation or a tool output into typed candidate
memories, by rules (always available) or by an LLM behind an OpenAI-compatible chat endpoint. Candidates are
proposals: ``Engram.extract`` writes them through the whole admission policy, like any other write."""

from engram.extraction.factory import build_extractor
from engram.extraction.llm import ChatExtractor
from engram.extraction.rules import RuleExtractor
from engram.model.extraction import (
    MAX_TEXT_CHARS,
    Candidate,
    Dropped,
    Extraction,
    ExtractionHints,
    Extractor,
    ExtractRequest,
    to_input,
)

__all__ = [
    "MAX_TEXT_CHARS",
    "Candidate",
    "ChatExtractor",
    "Dropped",
    "ExtractRequest",
    "Extraction",
    "ExtractionHints",
    "Extractor",
    "RuleExtractor",
    "build_extractor",
    "to_input",
]
