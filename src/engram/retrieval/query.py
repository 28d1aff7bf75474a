"""Query analysis: identifiers to match exactly, speakers the query names, the text the dense model sees."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# A token with a digit in it (504, INV-2024-0042, v1.2.3, ERR_504) or an ALL-CAPS code (ECONNRESET),
# or anything the caller put in quotes.
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/#\-]*[A-Za-z0-9]|[0-9]")
_QUOTED = re.compile(r"\"([^\"]{2,100})\"|`([^`]{2,100})`")
_CODE = re.compile(r"^[A-Z][A-Z0-9_]{3,}$")
# A person's placeholder (the vault's PERSON_A) is a name, not a code: matching it is no stronger evidence
# than any shared name.
_PERSON = re.compile(r"^PERSON_[A-Z]+$")


def identifiers(query: str, limit: int | None = None) -> list[str]:
    """Identifier-like tokens worth an exact match, in order, without duplicates (matching ignores case),
    at most ``limit`` of them: a query is a question, not a list of codes, and each one costs a lookup."""
    found: list[str] = []
    for m in _QUOTED.finditer(query):
        found.append((m.group(1) or m.group(2)).strip())
    for token in _TOKEN.findall(query):
        if _PERSON.match(token):
            continue
        if (any(c.isdigit() for c in token) and len(token) >= 2) or _CODE.match(token):
            found.append(token)
    distinct: dict[str, str] = {}
    for t in found:
        if t:
            distinct.setdefault(t.lower(), t)
    return list(distinct.values())[:limit]


def escape_identifier(text: str) -> str:
    """An identifier as a literal inside a PostgreSQL regular expression."""
    return re.sub(r"([\\.^$|?*+()\[\]{}\-/#:])", r"\\\1", text)


# A name: a capitalised word that does not start a sentence (the first word of a question is no evidence).
# A capitalised word inside a sentence; after a middle initial ("Amara K. Silva") too, which is not the
# start of a sentence.
_NAME = re.compile(r"(?<!(?<!\b[A-Z])[.!?:]\s)(?<!^)\b[A-Z][\w'\u2019-]*")


def names(query: str) -> list[str]:
    """The names a query mentions (capitalised words inside a sentence), without duplicates."""
    return list(dict.fromkeys(n for n in _NAME.findall(query.strip()) if not _PERSON.match(n)))


@dataclass(frozen=True)
class QueryAnalysis:
    text: str
    identifiers: list[str]
    named_speakers: list[str] = field(default_factory=list)
    dense_text: str = ""
    names: list[str] = field(default_factory=list)


def analyse(
    query: str, speakers: Iterable[str] = (), *, strip_speakers: bool = True, max_identifiers: int | None = None
) -> QueryAnalysis:
    """Find identifiers and named speakers; the dense model gets the query without the speakers' names
    (small models otherwise match on the name, which every memory of that speaker shares)."""
    named = [s for s in speakers if s and re.search(rf"\b{re.escape(s)}\b", query)]
    dense = query
    if strip_speakers and named:
        for name in sorted(named, key=len, reverse=True):
            dense = re.sub(rf"\b{re.escape(name)}(?:['\u2019]s)?\b", " ", dense)
        dense = re.sub(r"\s+", " ", dense).strip() or query
    return QueryAnalysis(
        text=query,
        identifiers=identifiers(query, max_identifiers),
        named_speakers=named,
        dense_text=dense,
        names=names(query),
    )
