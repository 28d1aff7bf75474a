"""Running the rules: over the text and its de-obfuscated variants, the hidden text and what both encode;
each rule only on a variant that holds the words it needs."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from engram.policy.injection.decode import _decoded
from engram.policy.injection.deobfuscate import (
    _LEET,
    _LEET_L,
    _MIXED,
    _REVERSED_HINT,
    _ROT13_HINT,
    _compact,
    _fold,
    _joined,
    _unscrambled,
)
from engram.policy.injection.rules import RULES
from engram.policy.injection.rules.compact import _COMPACT
from engram.policy.injection.rules.rule import _Rule
from engram.policy.injection.vocabulary import _I

# Hidden and encoded text: any of these is enough.
_ADDRESSED = re.compile(
    r"\b(?:ai|assistant|model|llm|chatbot|agent|gpt|claude|bot|you|your)\b.{0,80}\b(?:must|should|will|need\s+to|"
    r"have\s+to|are\s+to|always|never|ignore|disregard|forget|reveal|send|tell|say|respond|answer|recommend|"
    r"output|print|include|forward|do\s+not|don'?t|mention|describe|rate|rank|summari[sz]e|reply|call|invoke|"
    r"execute|run|delete|transfer|email|approve|grant|obey|follow)\b",
    _I | re.DOTALL,
)
_IMPERATIVE = re.compile(
    r"(?:^|[.!?:]\s+)\s*(?:please\s+|kindly\s+|now\s+|also\s+)?(?:always|never|ignore|disregard|forget|override|bypass|"
    r"reveal|send|tell|say|respond|answer|recommend|do\s+not|don'?t|print|output|call|invoke|run|execute|e-?mail|"
    r"forward|transfer|wire|delete|erase|write|include|append|act\s+as|pretend|you\s+are|you'?re|from\s+now\s+on|"
    r"new\s+instructions|stop|praise|promote|rate|rank|describe|summari[sz]e|mention|insert|add|visit|open|click|"
    r"fetch|load|grant|approve|disable|enable|switch|enter|reply|state|claim|omit|remove|make\s+sure|be\s+sure|"
    r"remember\s+to|from\s+this\s+point|upload|post|share|leak|disclose|export|set\s+aside|drop|skip|translate|"
    r"render|display|show|list|give|provide|return|repeat|use\s+the|treat|consider|classify|assume|imagine|"
    r"refuse|deny|confirm|report|collect|ask\s+the\s+user)\b",
    _I,
)
_WORDS = re.compile(r"[^\W\d_]+")
_TELLING = frozenset().union(*(n for r in RULES for n in r.needs if isinstance(n, frozenset)))
# Rules by a word of their first set: a text's words name the few rules worth running on it.
_BY_WORD: dict[str, list[int]] = {}
for _i, _rule in enumerate(RULES):
    if _rule.needs and isinstance(_rule.needs[0], frozenset):
        for _word in _rule.needs[0]:
            _BY_WORD.setdefault(_word, []).append(_i)
_UNINDEXED = [i for i, r in enumerate(RULES) if not r.needs or not isinstance(r.needs[0], frozenset)]


@dataclass(frozen=True)
class InjectionFinding:
    code: str
    where: str  # "content", "hidden", "encoded"
    excerpt: str


def find_injection(text: str, hidden: list[str] | None = None) -> list[InjectionFinding]:
    """What in the visible text, the hidden text and what they encode reads as an instruction to a model."""
    found: list[InjectionFinding] = []
    found += _match(text, "content")
    for part in hidden or []:
        hits = _match(part, "hidden")
        if not hits and _addresses_a_model(part):
            hits = [InjectionFinding("hidden_instructions", "hidden", part[:80])]
        found += hits
    for part in [text, *(hidden or [])]:
        for decoded in _decoded(part):
            hits = [InjectionFinding(f.code, "encoded", f.excerpt) for f in _match(decoded, "encoded")]
            if not hits and _addresses_a_model(decoded):
                hits = [InjectionFinding("hidden_instructions", "encoded", decoded[:80])]
            found += hits
    return found


def _addresses_a_model(text: str) -> bool:
    """The lower bar of hidden and encoded text: it speaks to someone or gives an order at all."""
    return any(_ADDRESSED.search(v) or _IMPERATIVE.search(v) for v, _ in _variants(text))


def _match(text: str, where: str) -> list[InjectionFinding]:
    hits: list[InjectionFinding] = []
    for variant, words in _variants(text):
        candidates = set(_UNINDEXED)
        for word in words & _BY_WORD.keys():
            candidates.update(_BY_WORD[word])
        at = _positions(variant) if len(variant) > _LONG else None
        for i in sorted(candidates):
            rule = RULES[i]
            if any(h.code == rule.code for h in hits) or not rule.ready(words, variant):
                continue
            m = _search(rule, variant, at)
            if m:
                hits.append(InjectionFinding(rule.code, where, m.group(0)[:80]))
    for compact in _compact(text):
        for rule in _COMPACT:
            m = rule.pattern.search(compact)
            if m and all(h.code != rule.code for h in hits):
                hits.append(InjectionFinding(rule.code, where, m.group(0)[:80]))
    return hits


# In a long text a rule is searched for only around the words it needs (a match spans far less than this).
_LONG = 2000
_REACH = 400


def _positions(text: str) -> dict[str, list[int]]:
    at: dict[str, list[int]] = {}
    for m in _WORDS.finditer(text):
        at.setdefault(m.group(0).lower(), []).append(m.start())
    return at


def _search(rule: _Rule, text: str, at: dict[str, list[int]] | None) -> re.Match[str] | None:
    if at is None or not rule.needs:
        return rule.pattern.search(text)
    # Every word a rule needs is part of its match: look around the rarest one.
    starts: list[int] | None = None
    for need in rule.needs:
        if isinstance(need, frozenset):
            found = [p for word in need & at.keys() for p in at[word]]
        else:
            found = [m.start() for m in need.finditer(text)]
        if starts is None or len(found) < len(starts):
            starts = found
    windows: list[list[int]] = []
    for p in sorted(starts or ()):
        lo, hi = max(0, p - _REACH), min(len(text), p + _REACH)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = hi
        else:
            windows.append([lo, hi])
    for lo, hi in windows:
        m = rule.pattern.search(text, lo, hi)
        if m:
            return m
    return None


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(text.lower()))


def _variants(text: str) -> list[tuple[str, frozenset[str]]]:
    """The text, and the ways it may be read once de-obfuscated, each with its words; each different one once.
    Digits and symbols read as letters are a variant apart ("$5,000" must stay a number for the rules that
    want one). A variant made by joining or unscrambling letters is kept only when it brings a word some rule
    looks for."""
    letters = _fold(text)
    out = [(text, _words(text))]
    if letters != text:
        out.append((letters, _words(letters)))
    seen = out[-1][1]
    if not seen.isdisjoint(_ROT13_HINT):
        rot13 = codecs.encode(letters, "rot13")
        out.append((rot13, _words(rot13)))
    if not seen.isdisjoint(_REVERSED_HINT):
        for backwards in (letters[::-1], " ".join(w[::-1] for w in letters.split())):
            out.append((backwards, _words(backwards)))
    candidates = []
    if _MIXED.search(letters):  # a word with digits or symbols among its letters
        candidates += [letters.translate(_LEET), letters.translate(_LEET_L)]
    joined = _joined(letters)
    candidates += [joined, _unscrambled(joined)]
    texts = {t for t, _ in out}
    for candidate in candidates:
        if candidate in texts:
            continue
        words = _words(candidate)
        if not (words - seen).isdisjoint(_TELLING):
            out.append((candidate, words))
            texts.add(candidate)
            seen |= words
    return out
