"""Content normalisation and hashing: the rules that make two writes "the same content"."""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_CONTENT_CHARS = 12_000

_HSPACE = re.compile(r"[^\S\n]+")  # any whitespace except newline
_MANY_NEWLINES = re.compile(r"\n{3,}")


def normalise_whitespace(text: str) -> str:
    """NFC, unified line endings, runs of spaces/tabs collapsed, at most one blank line, trimmed.

    Line structure is kept: procedures and code snippets lose their meaning without it.
    """
    text = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n")
    lines = [_HSPACE.sub(" ", line).strip() for line in text.split("\n")]
    return _MANY_NEWLINES.sub("\n\n", "\n".join(lines)).strip()


def content_hash(normalised: str) -> str:
    """sha256 hex digest of already-normalised content."""
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def has_text(text: str) -> bool:
    """Whether the text holds a letter, digit, punctuation mark or symbol: not only spaces and invisible
    characters (zero-width spaces, byte-order marks)."""
    return any(unicodedata.category(c)[0] in "LNPS" for c in text)
