"""The rule-based extractor: deterministic, no model, always available (SPEC 4.6: the service is fully useful
with no LLM configured).

The text is split into lines, a line into its speaker (``User: ...``) and sentences, and each sentence is
kept when one rule of :data:`RULES` matches it, the first in order. Questions, filler and everything else
are left out. docs/extraction.md has the table of rules with their kinds, confidences and fact keys.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import pydantic

from engram.model.extraction import Candidate, Dropped, Extraction, ExtractionHints, bounded
from engram.model.memory import Kind
from engram.model.validation import describe
from engram.policy import value

Speaker = Literal["user", "person", "assistant", "tool"]

CONFIDENT = 0.9  # a plain statement: "I live in Porto", "we decided to use Postgres"
HEDGED = 0.6  # "I think", "maybe": below the default threshold of semantic memory, so admission refuses it
OBSERVED = 0.8  # an event reported: "the deploy failed"
PROPOSED = 0.7  # a decision an assistant proposes is not yet the user's decision

_HEDGE = re.compile(
    r"\b(?:i think|i guess|i believe|i suppose|i'm not sure|not sure|maybe|perhaps|probably|possibly|might|"
    r"kind of|sort of)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LABEL = re.compile(r"^\s*([A-Za-z][\w .'-]{0,39}?)\s*:\s+(\S.*)$")
_ROLES: dict[str, Speaker] = {
    **dict.fromkeys(("user", "human", "me", "customer", "client"), "user"),
    **dict.fromkeys(("assistant", "ai", "bot", "agent", "model", "gpt", "claude", "system"), "assistant"),
    **dict.fromkeys(("tool", "function", "tool output", "tool result", "observation"), "tool"),
}
# Capitalised words that introduce a line without being somebody speaking ("Error: connection refused").
_NOT_SPEAKERS = frozenset(
    ("error", "warning", "warn", "note", "info", "debug", "fatal", "exception", "traceback", "tip", "todo",
     "update", "summary", "subject", "re", "fyi", "q", "a", "step", "result", "output", "status", "reason",
     "cause", "fix", "ps")
)  # fmt: skip
_NAME = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)?$")


def _slug(words: str) -> str:
    return "_".join(re.findall(r"[a-z0-9]+", words.lower()))


@dataclass(frozen=True)
class Rule:
    """One kind of statement: a pattern, the memory it makes, and whose lines it reads. ``about_speaker`` rules
    read what a speaker says of themselves, so only the user's (and named people's) lines."""

    name: str
    kind: Kind
    subtype: str
    importance: float
    about_speaker: bool
    pattern: re.Pattern[str]
    fact_key: Callable[[re.Match[str]], str | None] | None = None
    confidence: float = CONFIDENT


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _key(name: str) -> Callable[[re.Match[str]], str | None]:
    return lambda _: f"user.{name}"


def _attribute(match: re.Match[str]) -> str | None:
    slug = _slug(match.group("attr"))
    return f"user.{slug}" if slug else None


# First match wins: an explicit request to remember, then decisions, instructions, preferences, failures, facts.
# fmt: off
RULES: tuple[Rule, ...] = (
    Rule("remember", "semantic", "fact", 0.7, True,
         _rx(r"^(?:please\s+)?(?:remember|note|keep in mind)\s+that\b")),
    Rule("decision", "semantic", "decision", 0.7, False,
         _rx(r"\b(?:we|i|the team)\s+(?:have\s+|'ve\s+)?(?:decided|agreed|chose|settled on|opted)\b"
             r"|\blet'?s\s+(?:go with|use|stick with|switch to|pick)\b"
             r"|\bwe(?:'ll| will| are going to|'re going to| shall)\s+(?:use|go with|adopt|switch to|move to|"
             r"stick with|standardi[sz]e on)\b"
             r"|\b(?:the|our)\s+decision\s+(?:is|was)\b")),
    Rule("instruction", "procedural", "instruction", 0.7, True,
         _rx(r"^(?:please\s+)?(?:always|never|make sure (?:to|you)|don'?t ever|do not ever|remember to|"
             r"from now on)\b")),
    Rule("preference", "semantic", "preference", 0.6, True,
         _rx(r"\bi\s+(?:(?:really|strongly|usually|generally|much|also|still|definitely|absolutely)\s+)*"
             r"(?:prefer|like|love|enjoy|hate|dislike|detest|can'?t stand|avoid)\b"
             r"|\bi(?:'d| would)\s+(?:much\s+)?(?:rather|prefer)\b"
             r"|\bi\s+(?:don'?t|do not)\s+(?:want|like|use|eat|drink|enjoy|care for)\b"
             r"|\bi\s+(?:never|always|usually)\s+\w+")),
    Rule("favourite", "semantic", "preference", 0.6, True,
         _rx(r"\bmy\s+(?:favou?rite|preferred)\s+(?P<attr>\w+(?:\s\w+)?)\s+is\b"),
         lambda m: f"user.favourite_{_slug(m.group('attr'))}"),
    Rule("failure", "episodic", "failure", 0.6, False,
         _rx(r"\b(?:fail(?:s|ed|ing|ure)?|errors?|exception|crash(?:ed|es|ing)?|broke|broken|timed out|"
             r"time ?out|didn'?t work|did not work|doesn'?t work|does not work|not working|traceback|"
             r"panic(?:ked)?|segfault)\b"),
         confidence=OBSERVED),
    Rule("name", "semantic", "fact", 0.6, True, _rx(r"\bmy name is\b|\bcall me\s+[A-Z]"), _key("name")),
    Rule("location", "semantic", "fact", 0.6, True,
         _rx(r"\bi(?:'m| am)?\s+(?:live|living|based|located|moved|relocated)\s+(?:in|to)\b"), _key("location")),
    Rule("employer", "semantic", "fact", 0.6, True,
         _rx(r"\bi(?:'m| am)?\s+(?:work|working)\s+(?:at|for)\b"), _key("employer")),
    Rule("occupation", "semantic", "fact", 0.6, True, _rx(r"\bi\s+work\s+as\b"), _key("occupation")),
    Rule("allergy", "semantic", "fact", 0.6, True, _rx(r"\bi(?:'m| am)\s+allergic\s+to\b"), _key("allergies")),
    Rule("languages", "semantic", "fact", 0.6, True, _rx(r"\bi\s+speak\b"), _key("languages")),
    Rule("born", "semantic", "fact", 0.6, True, _rx(r"\bi\s+was\s+born\s+(?:in|on)\b"), _key("born")),
    Rule("attribute", "semantic", "fact", 0.6, True,
         _rx(r"\bmy\s+(?P<attr>\w+(?:\s\w+)?)\s+(?:is|are)\s+\S"), _attribute),
    Rule("identity", "semantic", "fact", 0.5, True,
         _rx(r"\bi(?:'m| am)\s+(?:a|an)\s+(?!bit\b|little\b|lot\b|few\b|fan\b)\w+"
             r"|\bi\s+(?:have|own|'ve got)\s+(?:a|an|two|three|\d+)\s+(?!question|problem|issue|idea|doubt|"
             r"meeting|call|minute|moment|few|quick|second)\w+")),
)
# fmt: on


def speaker_of(line: str) -> tuple[Speaker, str | None, str]:
    """Who speaks a line (``User: ...``, ``Alice: ...``), their name when a person, and what they say. A line
    without a speaker is the user's (the text is taken as the user's turn)."""
    match = _LABEL.match(line)
    if match is None:
        return "user", None, line.strip()
    label, said = match.group(1).strip(), match.group(2).strip()
    role = _ROLES.get(label.lower())
    if role is not None:
        return role, None, said
    if _NAME.match(label) and label.lower() not in _NOT_SPEAKERS:
        return "person", label, said
    return "user", None, line.strip()


def sentences(text: str) -> list[tuple[Speaker, str | None, str]]:
    """Each sentence of the text with its speaker."""
    out: list[tuple[Speaker, str | None, str]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        speaker, name, said = speaker_of(line)
        out.extend((speaker, name, s.strip()) for s in _SENTENCE_END.split(said) if s.strip())
    return out


def classify(sentence: str, speaker: Speaker) -> Rule | None:
    """The first rule that keeps the sentence, or None: filler, a question, or nothing a rule knows."""
    if value.is_filler(sentence) or value.has_no_words(sentence) or sentence.rstrip().endswith("?"):
        return None
    text = sentence.replace("\u2019", "'")
    for rule in RULES:
        if rule.about_speaker and speaker in ("assistant", "tool"):
            continue
        if speaker == "tool" and rule.name != "failure":
            continue
        if rule.pattern.search(text):
            return rule
    return None


def candidate(rule: Rule, sentence: str, speaker: Speaker, name: str | None, hints: ExtractionHints) -> Candidate:
    text = sentence.replace("\u2019", "'")
    confidence = rule.confidence
    if _HEDGE.search(text):
        confidence = min(confidence, HEDGED)
    elif speaker == "assistant" and rule.name == "decision":
        confidence = PROPOSED
    # A fact's key names the user's attribute: a named speaker may be somebody else, so keeps none.
    match = rule.pattern.search(text)
    fact_key = rule.fact_key(match) if rule.fact_key and match and speaker == "user" else None
    content = f"{name}: {sentence}" if name else sentence
    return Candidate(
        kind=rule.kind, content=content, subtype=rule.subtype, fact_key=fact_key, confidence=confidence,
        importance=rule.importance, tags=[rule.subtype], source_type=hints.source_type, origin=f"rules:{rule.name}",
    )  # fmt: skip


class RuleExtractor:
    """Keeps the statements a rule of :data:`RULES` recognises; drops filler, questions and the rest."""

    @property
    def name(self) -> str:
        return "rules"

    async def extract(self, text: str, *, hints: ExtractionHints | None = None) -> Extraction:
        return self.extract_now(text, hints=hints)

    def extract_now(self, text: str, *, hints: ExtractionHints | None = None) -> Extraction:
        """The same, without a loop: the rules do no I/O."""
        hints = hints or ExtractionHints()
        proposed: list[tuple[int, Candidate]] = []
        dropped: list[Dropped] = []
        for speaker, name, sentence in sentences(text):
            rule = classify(sentence, speaker)
            if rule is None:
                continue
            index = len(proposed) + len(dropped)
            try:
                proposed.append((index, candidate(rule, sentence, speaker, name, hints)))
            except pydantic.ValidationError as exc:  # a sentence longer than a memory may be
                dropped.append(Dropped(index=index, reason=describe(exc.errors()[0]), field="content"))
        return bounded(self.name, proposed, dropped, hints)

    async def aclose(self) -> None:
        return None
