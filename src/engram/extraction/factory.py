"""Build the configured extractor: the rules unless an LLM is configured (SPEC 4.6)."""

from __future__ import annotations

from engram.config import Settings
from engram.extraction.rules import RuleExtractor
from engram.model.extraction import Extractor


def build_extractor(settings: Settings) -> Extractor:
    if settings.extractor == "llm":
        from engram.extraction.llm import ChatExtractor
        from engram.providers.chat import endpoint_from

        return ChatExtractor(endpoint_from(settings, "ENGRAM_EXTRACTOR"))
    return RuleExtractor()
