"""Prompt injection: text aimed at the model that will later read the memory, not at the people it is about.

Rules, each with a reason code, run over the visible text, the text sanitising held aside (HTML hidden
content, Unicode tag characters) and what is encoded in the text (base64 runs), each also read with look-alike
letters (Cyrillic and Greek homoglyphs, accents, digits for letters) folded to plain ASCII. The rules want
several words that only make sense as an instruction to a model ("ignore all previous instructions"), not
one word ("ignore the noise and focus on painting" is not one).
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from dataclasses import dataclass

_I = re.IGNORECASE | re.MULTILINE
_PRIOR = r"(?:previous|prior|above|earlier|preceding|original|initial|system|existing|safety)"
_RULES_OF = r"(?:instructions?|rules|directions|directives|guidelines|guardrails|prompts?|constraints|restrictions|programming|policies)"
RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (code, re.compile(pattern, _I))
    for code, pattern in (
        # Override: set aside what the model was told.
        (
            "override",
            rf"\b(?:ignore|disregard|forget|override|bypass|skip|abandon)\s+(?:all\s+(?:of\s+)?)?(?:the\s+|your\s+|any\s+|my\s+)?{_PRIOR}\s+{_RULES_OF}\b",
        ),
        ("override", rf"\b(?:ignore|disregard|override|bypass)\s+(?:all\s+(?:of\s+)?)?your\s+(?:\w+\s+)?{_RULES_OF}\b"),
        ("override", rf"\b(?:ignore|disregard)\s+all\s+{_RULES_OF}\b"),
        (
            "override",
            rf"\b(?:ignore|disregard|forget)\s+(?:all\s+)?(?:the\s+|your\s+|these\s+)?{_RULES_OF}\s+(?:above|before|earlier|previously|you\s+were\s+given)\b",
        ),
        (
            "override",
            r"\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:you\s+(?:were|have\s+been)\s+told|above|before|previously)",
        ),
        ("override", rf"\bdo\s+not\s+(?:follow|obey|apply)\s+(?:your|the|any)\s+(?:\w+\s+)?{_RULES_OF}"),
        ("override", r"\b(?:new|updated|real|actual|revised)\s+(?:system\s+)?instructions?\s*(?::|follow|are)"),
        ("override", r"\byour\s+(?:new|real|true)\s+(?:task|goal|purpose|objective|instructions?)\s+(?:is|are)\b"),
        # Role play that sheds the model's rules.
        (
            "role_play",
            r"\byou\s+are\s+(?:now|no\s+longer)\s+(?:an?\s+)?(?:\w+\s+){0,3}(?:ai|assistant|model|bot|dan|unrestricted|unfiltered|jailbroken|evil|bound)\b",
        ),
        (
            "role_play",
            r"\b(?:act|behave|respond)\s+as\s+(?:if\s+you\s+(?:were|are)\s+)?(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue)\b",
        ),
        (
            "role_play",
            r"\bpretend\s+(?:that\s+)?(?:you\s+are|to\s+be)\s+(?:\w+\s+){0,4}(?:without|with\s+no|free\s+of)\s+(?:any\s+)?(?:rules|restrictions|limits|filters|guidelines)",
        ),
        (
            "role_play",
            r"\b(?:developer|god|dan|jailbreak|sudo)\s+mode\s*(?:enabled|activated|:\s*on)\b|\benable\s+(?:developer|dan|jailbreak|god)\s+mode\b",
        ),
        # Text that pretends to be the system or another turn of the conversation.
        # ... at the start of a line or a sentence, or in brackets anywhere.
        (
            "impersonation",
            r"(?:^|(?<=[.!?]\s))\s*(?:#{1,4}\s*)?\[?(?:system|developer)\]?\s*(?:message|prompt|override|note)?\s*:\s*\S",
        ),
        ("impersonation", r"\[(?:system|developer)\]\s*(?:message|prompt|override|note)?\s*:?\s*\S"),
        ("impersonation", r"<\|?(?:im_start|im_end|system|endoftext)\|?>|\[/?INST\]|<</?SYS>>|<\s*/?\s*system\s*>"),
        ("impersonation", r"^\s*(?:assistant|ai)\s*:\s*(?:sure|ok|okay|certainly)\b"),
        # Notes addressed to a model reading the text.
        (
            "addressed_to_model",
            r"\b(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+)?(?:ai|llm|chatbot|language\s+model|ai\s+(?:assistant|model|agent))s?\b",
        ),
        (
            "addressed_to_model",
            r"\b(?:ai|llm|gpt|chatbot|language\s+model)s?(?:\s+(?:assistants?|models?|agents?|systems?))?\s+(?:reading|processing|summari[sz]ing|parsing|seeing|crawling)\s+(?:this|these)\b",
        ),
        # Coaxing a tool call or an action.
        (
            "tool_coaxing",
            r"\b(?:call|invoke|use|run|trigger|execute)\s+the\s+[\w.-]+\s+(?:tool|function|plugin|api)\s+(?:with|to|and)\b",
        ),
        ("tool_coaxing", r"\b(?:execute|run)\s+(?:the\s+following|this)\s+(?:shell\s+)?(?:command|code|script)\b"),
        ("tool_coaxing", r"\brm\s+-rf\s+/|\bcurl\s+[^\s|]+\s*\|\s*(?:ba)?sh\b"),
        (
            "tool_coaxing",
            r"\b(?:transfer|wire|send)\s+(?:all\s+)?(?:the\s+)?(?:funds|money|\$\s?\d[\d,]*|\d[\d,]*\s*(?:usd|eur|dollars))\s+to\b(?=.*\b(?:immediately|now|without|do\s+not\s+(?:tell|ask|confirm)))",
        ),
        # Exfiltration: the model's instructions, its secrets, or the user's data sent elsewhere.
        (
            "exfiltration",
            r"\b(?:reveal|print|show|output|repeat|leak|disclose|tell\s+me)\s+(?:me\s+)?(?:your|the)\s+(?:full\s+|entire\s+|hidden\s+)?(?:system\s+prompt|initial\s+prompt|instructions|hidden\s+rules|(?:admin\s+)?passwords?|api\s+keys?|secrets?|credentials)\b",
        ),
        (
            "exfiltration",
            r"\b(?:send|post|upload|forward|email|exfiltrate)\s+(?:all\s+|the\s+|every\s+)?(?:\w+\s+){0,3}(?:conversation|chat\s+history|messages|memories|user\s+data|credentials|passwords?|api\s+keys?|secrets?|tokens?)\s+to\s+(?:https?://|\S+@\S+|the\s+following)",
        ),
        (
            "exfiltration",
            r"\b(?:send|post|upload|forward|email|exfiltrate)\s+(?:all\s+|the\s+|every\s+)?(?:\w+\s+){0,2}(?:chat|conversation|message|session)\s+(?:history|log|logs|transcripts?)\s+to\b",
        ),
        ("exfiltration", r"!\[[^\]]*\]\(https?://[^)]*[?&][\w-]*=\s*(?:\{|\$|<)"),
        (
            "exfiltration",
            r"\b(?:append|include|add|encode)\s+(?:the\s+)?(?:user'?s?\s+)?(?:\w+\s+){0,3}(?:to|in(?:to)?)\s+(?:the\s+|this\s+|a\s+)?(?:url|link|image\s+url|query\s+string)\b",
        ),
    )
)
# Hidden text is held to a lower bar: nobody writes to the model in invisible ink by accident.
_ADDRESSED = re.compile(
    r"\b(?:ai|assistant|model|llm|chatbot|agent|gpt|claude|you)\b.{0,80}\b(?:must|should|will|need\s+to|have\s+to|always|never|ignore|reveal|send|tell|say|respond|answer|recommend)\b",
    _I | re.DOTALL,
)
_IMPERATIVE = re.compile(
    r"^\s*(?:always|never|ignore|reveal|send|tell|say|respond|answer|recommend|do\s+not|don'?t)\b", _I
)
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{20,}={0,2}(?![A-Za-z0-9+/=])")

# Look-alikes folded for matching only (the stored text keeps its letters).
# Cyrillic and Greek look-alikes; digits and symbols for letters (1gn0re) are a variant of their own.
_CONFUSABLES = str.maketrans(
    {
        "\u0430": "a",
        "\u0435": "e",
        "\u043e": "o",
        "\u0440": "p",
        "\u0441": "c",
        "\u0445": "x",
        "\u0443": "y",
        "\u0456": "i",
        "\u0455": "s",
        "\u0458": "j",
        "\u0501": "d",
        "\u04bb": "h",
        "\u043a": "k",
        "\u043c": "m",
        "\u0442": "t",
        "\u0432": "b",
        "\u043d": "h",
        "\u0261": "g",
        "\u03bd": "v",
        "\u03bf": "o",
        "\u03b1": "a",
        "\u03c1": "p",
        "\u03c4": "t",
        "\u03c5": "u",
        "\u03c7": "x",
        "\u0410": "A",
        "\u0412": "B",
        "\u0415": "E",
        "\u041a": "K",
        "\u041c": "M",
        "\u041d": "H",
        "\u041e": "O",
        "\u0420": "P",
        "\u0421": "C",
        "\u0422": "T",
        "\u0423": "Y",
        "\u0425": "X",
        "\u0406": "I",
        "\u0408": "J",
        "\u0405": "S",
        "\u0391": "A",
        "\u0392": "B",
        "\u0395": "E",
        "\u0397": "H",
        "\u0399": "I",
        "\u039a": "K",
        "\u039c": "M",
        "\u039d": "N",
        "\u039f": "O",
        "\u03a1": "P",
        "\u03a4": "T",
        "\u03a7": "X",
        "\u03a5": "Y",
        "\u0396": "Z",
    }
)
_MIXED = re.compile(r"[A-Za-z][0-9@$]|[0-9@$][A-Za-z]")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})


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
        if not hits and (_ADDRESSED.search(part) or _IMPERATIVE.search(part)):
            hits = [InjectionFinding("hidden_instructions", "hidden", part[:80])]
        found += hits
    for part in [text, *(hidden or [])]:
        for decoded in _decoded(part):
            found += [InjectionFinding(f.code, "encoded", f.excerpt) for f in _match(decoded, "encoded")]
    return found


def _match(text: str, where: str) -> list[InjectionFinding]:
    hits: list[InjectionFinding] = []
    for variant in _variants(text):
        for code, pattern in RULES:
            m = pattern.search(variant)
            if m and all(h.code != code for h in hits):
                hits.append(InjectionFinding(code, where, m.group(0)[:80]))
    return hits


def _variants(text: str) -> list[str]:
    """The text, its letters folded to ASCII, and that with digits and symbols read as letters too (kept
    apart: "$5,000" must stay a number for the rules that want one)."""
    letters = text
    if not text.isascii():
        letters = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
        letters = letters.translate(_CONFUSABLES)
    variants = [text, letters]
    if _MIXED.search(letters):  # a word with digits or symbols among its letters
        variants.append(letters.translate(_LEET))
    return list(dict.fromkeys(variants))


def _decoded(text: str) -> list[str]:
    out = []
    for m in _BASE64.finditer(text):
        token = m.group(0)
        try:
            raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
        except (binascii.Error, ValueError):
            continue
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if sum(c.isprintable() or c.isspace() for c in decoded) >= 0.95 * len(decoded) and " " in decoded:
            out.append(decoded)
    return out
