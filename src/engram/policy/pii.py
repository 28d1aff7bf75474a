"""Personal data in text (SPEC 4.5): emails, phone numbers (phonenumbers), payment cards (Luhn and issuer
ranges), IBANs and national ids (python-stdnum's check digits), IP addresses, and person names (``names``,
a local NER model). Pure: spans and normal forms; the vault (``service/pii``) turns them into placeholders.

A structured find is kept only when its check digits or format validate, so order numbers, version strings
and timestamps pass; national ids whose digits alone are ambiguous need a word of context ("SIN", "BSN").
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal, get_args

import phonenumbers
from stdnum import iban, luhn
from stdnum.br import cpf
from stdnum.ca import sin
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.gb import nhs
from stdnum.in_ import aadhaar
from stdnum.it import codicefiscale
from stdnum.nl import bsn
from stdnum.us import ssn

PiiKind = Literal["email", "phone", "card", "iban", "national_id", "ip", "person"]
PII_KINDS: tuple[PiiKind, ...] = get_args(PiiKind)
STRUCTURED: tuple[PiiKind, ...] = tuple(k for k in PII_KINDS if k != "person")
PREFIX: dict[str, str] = {
    "email": "EMAIL", "phone": "PHONE", "card": "CARD", "iban": "IBAN", "national_id": "NATIONAL_ID", "ip": "IP",
    "person": "PERSON",
}  # fmt: skip
# A placeholder as stored text holds it: numbered, persons lettered (PERSON_A ... PERSON_Z, PERSON_AA).
PLACEHOLDER = re.compile(r"\b(?:(EMAIL|PHONE|CARD|IBAN|NATIONAL_ID|IP)_([1-9][0-9]*)|PERSON_([A-Z]+))\b")


@dataclass(frozen=True)
class Found:
    """One piece of personal data: where it is, as written, and its normal form (what the vault keys on)."""

    kind: PiiKind
    start: int
    end: int
    value: str
    normal: str


def placeholder(kind: str, ordinal: int) -> str:
    if kind != "person":
        return f"{PREFIX[kind]}_{ordinal}"
    letters = ""
    while ordinal > 0:
        ordinal, rest = divmod(ordinal - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return f"PERSON_{letters}"


def parse_placeholder(text: str) -> tuple[str, int] | None:
    m = PLACEHOLDER.fullmatch(text)
    if m is None:
        return None
    if m.group(3) is None:
        kind = next(k for k, p in PREFIX.items() if p == m.group(1))
        return kind, int(m.group(2))
    ordinal = 0
    for ch in m.group(3):
        ordinal = ordinal * 26 + (ord(ch) - ord("A") + 1)
    return "person", ordinal


_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}\b")  # fmt: skip
_CARD = re.compile(r"(?<![\w-])\d(?:[ -]?\d){12,18}(?![\w-])")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b")
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:])(?:[0-9A-Fa-f]{1,4}:|:){2,7}(?:[0-9A-Fa-f]{1,4}|:)(?![\w:])")
# Dotted numbers that are versions or section numbers, not addresses: "version 2.10.0.1", "Section 12.4.1.7".
_VERSION_BEFORE = re.compile(
    r"\b(?:v|version|release|build|ver\.?|patch(?: level)?(?: is)?|firmware|section|paragraph|chapter|clause|"
    r"rfc|step|item|§)\s*$",
    re.IGNORECASE,
)
_VERSION_AFTER = re.compile(
    r"^\s*(?:\(?(?:as )?(?:the )?(?:installed |current |latest )?(?:version|release|build))\b", re.I
)
_DIGITS = re.compile(r"\d")


def _card_issuer(digits: str) -> bool:
    """The number's prefix and length belong to a card network (Visa, Mastercard, Amex, Discover, JCB,
    Diners, UnionPay, Maestro): a Luhn-valid order number rarely does."""
    n = len(digits)
    two, four = int(digits[:2]), int(digits[:4])
    return (
        (digits[0] == "4" and n in (13, 16, 19))
        or (51 <= two <= 55 and n == 16)
        or (2221 <= four <= 2720 and n == 16)
        or (two in (34, 37) and n == 15)
        or ((digits.startswith("6011") or two == 65 or 644 <= int(digits[:3]) <= 649) and n in (16, 19))
        or (3528 <= four <= 3589 and n in (16, 19))
        or ((300 <= int(digits[:3]) <= 305 or two in (36, 38)) and n in (14, 16))
        or (two == 62 and 16 <= n <= 19)
        or ((two == 50 or 56 <= two <= 69) and 12 <= n <= 19)
    )


def _cards(text: str) -> Iterator[Found]:
    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if 13 <= len(digits) <= 19 and len(set(digits)) > 1 and _card_issuer(digits) and luhn.is_valid(digits):
            yield Found("card", m.start(), m.end(), m.group(), digits)


def _ibans(text: str) -> Iterator[Found]:
    for m in _IBAN.finditer(text):
        raw = m.group()
        # The pattern may run into the next word: shorten by groups until the check digits hold.
        while raw:
            compact = raw.replace(" ", "")
            if len(compact) >= 15 and iban.is_valid(compact):
                yield Found("iban", m.start(), m.start() + len(raw), raw, compact)
                break
            raw = raw[: raw.rfind(" ")] if " " in raw else ""


# National ids: (pattern, validator, needs context). Context: one of these words within 40 characters before.
_CONTEXT = re.compile(
    r"\b(?:ssn|social security|sin|social insurance|dni|nie|documento|bsn|burgerservicenummer|aadhaar|aadhar|"
    r"nir|s[ée]curit[ée] sociale|cpf|nhs|codice fiscale|fiscal code|national id|national identity|id number|"
    r"identity number|tax id|passport)\b",
    re.IGNORECASE,
)
_IDS: tuple[tuple[re.Pattern[str], Callable[[str], bool], bool], ...] = (
    (re.compile(r"(?<![\w-])\d{3}-\d{2}-\d{4}(?![\w-])"), ssn.is_valid, False),
    (re.compile(r"(?<![\w-])\d{9}(?![\w-])"), lambda v: ssn.is_valid(v) or bsn.is_valid(v) or sin.is_valid(v), True),
    (re.compile(r"(?<![\w-])\d{3}[ -]\d{3}[ -]\d{3}(?![\w-])"), sin.is_valid, True),
    (re.compile(r"(?<![\w.-])\d{3}\.\d{3}\.\d{3}-\d{2}(?![\w-])"), cpf.is_valid, False),
    (re.compile(r"(?<![\w-])\d{11}(?![\w-])"), cpf.is_valid, True),
    (re.compile(r"\b\d{8}-?[A-Z]\b"), dni.is_valid, False),
    (re.compile(r"\b[XYZ]-?\d{7}-?[A-Z]\b"), nie.is_valid, False),
    (re.compile(r"\b[A-Z]{6}\d{2}[A-Z]\d{2}[A-Z]\d{3}[A-Z]\b"), codicefiscale.is_valid, False),
    (re.compile(r"(?<![\w-])[1-8] ?\d{2} ?\d{2} ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}(?![\w-])"), nir.is_valid, False),
    (re.compile(r"(?<![\w-])[2-9]\d{3} ?\d{4} ?\d{4}(?![\w-])"), aadhaar.is_valid, True),
    (re.compile(r"(?<![\w-])\d{3}[ -]?\d{3}[ -]?\d{4}(?![\w-])"), nhs.is_valid, True),
)  # fmt: skip


def _national_ids(text: str) -> Iterator[Found]:
    for pattern, valid, needs_context in _IDS:
        for m in pattern.finditer(text):
            if needs_context and not _CONTEXT.search(text, max(0, m.start() - 40), m.start()):
                continue
            compact = re.sub(r"[\s.-]", "", m.group()).upper()
            try:
                ok = valid(compact)
            except Exception:  # a validator refusing a shape it does not know
                ok = False
            if ok:
                yield Found("national_id", m.start(), m.end(), m.group(), compact)


def _emails(text: str) -> Iterator[Found]:
    if "@" not in text:
        return
    for m in _EMAIL.finditer(text):
        if text[m.end() : m.end() + 1] == ":" and text[m.end() + 1 : m.end() + 2].strip():
            continue  # an SSH remote, git@github.com:team/repo.git
        yield Found("email", m.start(), m.end(), m.group(), m.group().lower())


def _ips(text: str) -> Iterator[Found]:
    if "." in text:
        for m in _IPV4.finditer(text):
            if _VERSION_BEFORE.search(text, max(0, m.start() - 20), m.start()) or _VERSION_AFTER.match(
                text[m.end() : m.end() + 40]
            ):
                continue
            yield from _ip(m)
    if text.count(":") >= 2:
        for m in _IPV6.finditer(text):
            yield from _ip(m)


def _ip(m: re.Match[str]) -> Iterator[Found]:
    try:
        address = ipaddress.ip_address(m.group())
    except ValueError:
        return
    if address.is_loopback or address.is_unspecified or _is_netmask(m.group()):
        return  # 127.0.0.1, 0.0.0.0 and 255.255.255.0 point at nobody
    yield Found("ip", m.start(), m.end(), m.group(), address.compressed)


def _is_netmask(text: str) -> bool:
    if ":" in text:
        return False
    bits = "".join(f"{int(part):08b}" for part in text.split("."))
    return bits.startswith("1") and "01" not in bits


def _phones(text: str) -> Iterator[Found]:
    for m in phonenumbers.PhoneNumberMatcher(text, "US", leniency=phonenumbers.Leniency.VALID):
        normal = phonenumbers.format_number(m.number, phonenumbers.PhoneNumberFormat.E164)
        yield Found("phone", m.start, m.end, m.raw_string, normal)


# Most specific first: where finds overlap, the earlier detector keeps its span.
_DETECTORS: tuple[tuple[PiiKind, Callable[[str], Iterator[Found]]], ...] = (
    ("email", _emails), ("iban", _ibans), ("card", _cards), ("national_id", _national_ids), ("ip", _ips),
    ("phone", _phones),
)  # fmt: skip


def find_structured(text: str, kinds: Sequence[str] = STRUCTURED) -> list[Found]:
    """Emails, phones, cards, IBANs, national ids and IPs in ``text``, without overlaps, in order."""
    if not text or (len(_DIGITS.findall(text)) < 4 and "@" not in text and ":" not in text):
        return []  # every structured kind but email and IPv6 needs four digits or more
    found: list[Found] = []
    for kind, detect in _DETECTORS:
        if kind in kinds:
            found += [f for f in detect(text) if not any(f.start < o.end and o.start < f.end for o in found)]
    return sorted(found, key=lambda f: f.start)


def merge(structured: list[Found], names: list[Found]) -> list[Found]:
    """Both lists in text order; a name overlapping a structured find gives way."""
    kept = [n for n in names if not any(n.start < s.end and s.start < n.end for s in structured)]
    return sorted([*structured, *kept], key=lambda f: f.start)


def replace(text: str, found: Sequence[Found], placeholders: dict[tuple[str, str], str]) -> str:
    """``text`` with each find replaced by its placeholder (``placeholders[(kind, normal)]``)."""
    out: list[str] = []
    at = 0
    for f in sorted(found, key=lambda f: f.start):
        out += [text[at : f.start], placeholders[(f.kind, f.normal)]]
        at = f.end
    out.append(text[at:])
    return "".join(out)


def masked_texts(texts: Sequence[str], kinds: Sequence[str] = PII_KINDS, *, seed: int | None = None) -> list[str]:
    """Each text as the write path stores it, without a vault: its personal data replaced by placeholders,
    numbered per text (or at random, with ``seed``, as a tenant's placeholders run high). For what must see
    stored text as it is (the injection classifier's training and its evaluation)."""
    import random

    from engram.policy import names as ner  # it builds on this module

    rng = random.Random(seed)  # noqa: S311 - placeholder numbers, not secrets
    people = ner.find_names(list(texts)) if "person" in kinds else [[] for _ in texts]
    out = []
    for text, named in zip(texts, people, strict=True):
        found = merge(find_structured(text, [k for k in kinds if k != "person"]), named)
        ordinals: dict[tuple[str, str], str] = {}
        for f in found:
            if (f.kind, f.normal) not in ordinals:
                n = sum(1 for k, _ in ordinals if k == f.kind) + 1
                ordinals[(f.kind, f.normal)] = placeholder(f.kind, n if seed is None else n + rng.randrange(40))
        out.append(replace(text, found, ordinals))
    return out
