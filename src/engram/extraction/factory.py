"""Build the configured extractor: the rules unless an LLM is configured (SPEC 4.6)."""

from __future__ import annotations

from engram.config import Settings
from engram.errors import ValidationError
from engram.extraction.base import Extractor
from engram.extraction.rules import RuleExtractor


def build_extractor(settings: Settings) -> Extractor:
    if settings.extractor == "llm":
        from engram.extraction.llm import ChatExtractor

        if not settings.llm_url:
            raise ValidationError("ENGRAM_LLM_URL must be set when ENGRAM_EXTRACTOR=llm", field="llm_url")
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        return ChatExtractor(
            base_url=settings.llm_url, model=settings.llm_model, api_key=key, timeout=settings.llm_timeout
        )
    return RuleExtractor()
