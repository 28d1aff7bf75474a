"""Ways an instruction is disguised, undone for matching: look-alike letters, leet, spaced or punctuated
letters, scrambled inner letters; and the tell-tale words of reversed and ROT13 text."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from engram.policy.injection.vocabulary import _set

# Look-alikes folded for matching only (the stored text keeps its letters).
# Cyrillic and Greek look-alikes and a few Latin ones; accents, full-width and mathematical letters go by NFKD.
_CONFUSABLES = str.maketrans(
    {
        "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0445": "x", "\u0443": "y",
        "\u0456": "i", "\u0455": "s", "\u0458": "j", "\u0501": "d", "\u04bb": "h", "\u043a": "k", "\u043c": "m",
        "\u0442": "t", "\u0432": "b", "\u043d": "h", "\u0261": "g", "\u03bd": "v", "\u03bf": "o", "\u03b1": "a",
        "\u03c1": "p", "\u03c4": "t", "\u03c5": "u", "\u03c7": "x", "\u03b9": "i", "\u03ba": "k", "\u04cf": "l",
        "\u0131": "i", "\u0251": "a", "\u0269": "i", "\u026a": "i", "\u1d00": "a", "\u1d07": "e", "\u0299": "b",
        "\u1d04": "c", "\u1d05": "d", "\u0262": "g", "\u029c": "h", "\u1d0a": "j", "\u1d0b": "k", "\u029f": "l",
        "\u1d0d": "m", "\u0274": "n", "\u1d0f": "o", "\u1d18": "p", "\u0280": "r", "\ua731": "s", "\u1d1b": "t",
        "\u1d1c": "u", "\u1d20": "v", "\u1d21": "w", "\u028f": "y", "\u1d22": "z", "\u0410": "A", "\u0412": "B",
        "\u0415": "E", "\u041a": "K", "\u041c": "M", "\u041d": "H", "\u041e": "O", "\u0420": "P", "\u0421": "C",
        "\u0422": "T", "\u0423": "Y", "\u0425": "X", "\u0406": "I", "\u0408": "J", "\u0405": "S", "\u0391": "A",
        "\u0392": "B", "\u0395": "E", "\u0397": "H", "\u0399": "I", "\u039a": "K", "\u039c": "M", "\u039d": "N",
        "\u039f": "O", "\u03a1": "P", "\u03a4": "T", "\u03a7": "X", "\u03a5": "Y", "\u0396": "Z", "\u04c0": "I",
        "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-",
    }
)  # fmt: skip
_MIXED = re.compile(r"[A-Za-z][0-9@$|!]|[0-9@$|][A-Za-z]")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "$": "s", "8": "b"})
_LEET_L = str.maketrans({"0": "o", "1": "l", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
# Letters spaced or punctuated apart: "i g n o r e", "i.g.n.o.r.e", "ig-nore".
_SPACED = re.compile(r"(?<![^\W_])(?:[^\W_][ \t._*/|+~\-•·]{1,3}){3,}[^\W_](?![^\W_])")
_SPACED_SPLIT = re.compile(r"([ \t._*/|+~\-•·]{1,3})")
_IN_WORD = re.compile(r"(?<=[^\W\d_])[-._*~^|•·`]+(?=[^\W\d_])")
# A word a reversed or ROT13 text would hold.
_REVERSED_HINT = _set("snoitcurtsni erongi dragersid tegrof tpmorp metsys laever suoiverp edirrevo selur tnatsissa")
_ROT13_HINT = _set("vafgehpgvbaf vtaber qvfertneq sbetrg cebzcg flfgrz erirny cerivbhf bireevqr ehyrf nffvfgnag")
# Typoglycemia: first and last letters kept, the inner ones shuffled ("ignroe all prevoius insturctions").
_TYPO_WORDS = (
    "ignore", "disregard", "forget", "override", "bypass", "previous", "instructions", "instruction", "prompt",
    "system", "reveal", "guidelines", "directives", "password", "passwords", "secrets", "credentials", "assistant",
    "pretend", "developer", "restrictions", "jailbreak", "unrestricted", "unfiltered", "earlier", "rules", "print",
    "output", "repeat", "forward", "upload", "conversation", "history", "memories", "previously", "original",
    "initial", "above", "prior", "safety", "filters", "policies", "programming",
)  # fmt: skip
_TYPO_KEYS = {(w[0], w[-1], len(w), "".join(sorted(w[1:-1]))): w for w in _TYPO_WORDS}
_TYPO_SHAPES = {(w[0], w[-1], len(w)) for w in _TYPO_WORDS}
_WORD = re.compile(r"[A-Za-z]{5,}")


def _fold(text: str) -> str:
    """Look-alike letters read as ASCII ones: accents, homoglyphs, full-width and mathematical letters."""
    if text.isascii():
        return text
    text = text.translate(_CONFUSABLES)
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).translate(
        _CONFUSABLES
    )


def _joined(text: str) -> str:
    """Spaced or punctuated letters joined into words; a wider gap between letters is a word break."""
    if _SPACED.search(text):
        text = _SPACED.sub(_join_run, text)
    return _IN_WORD.sub("", text) if _IN_WORD.search(text) else text


def _join_run(m: re.Match[str]) -> str:
    parts = _SPACED_SPLIT.split(m.group(0))
    letters, gaps = parts[0::2], parts[1::2]
    narrow = min(len(g) for g in gaps)
    out = [letters[0]]
    for gap, letter in zip(gaps, letters[1:], strict=True):
        wide = len(gap) > narrow or (gap.strip() == "" and any(g.strip() for g in gaps))
        out.append((" " if wide else "") + letter)
    return "".join(out)


def _compact(text: str) -> Iterable[str]:
    """The letters of each spaced-out run, lower case, when the text has one."""
    folded = _fold(text)
    for m in _SPACED.finditer(folded):
        if len(m.group(0)) >= 20:
            yield re.sub(r"[^a-z]", "", m.group(0).lower())


def _unscrambled(text: str) -> str:
    """Words whose inner letters are a shuffle of a tell-tale word's, read as that word."""
    fixes = {}
    for w in set(_WORD.findall(text)):
        low = w.lower()
        if (low[0], low[-1], len(low)) not in _TYPO_SHAPES:
            continue
        word = _TYPO_KEYS.get((low[0], low[-1], len(low), "".join(sorted(low[1:-1]))))
        if word is not None and word != low:
            fixes[w] = word
    if not fixes:
        return text
    return _WORD.sub(lambda m: fixes.get(m.group(0), m.group(0)), text)
