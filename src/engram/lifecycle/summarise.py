"""Condensing conversation turns into candidate memories (SPEC 6.2), deterministically: each turn's
statements that carry something worth remembering (a preference, a decision or plan, a fact about someone,
a failure) are kept, shorn of filler; greetings, thanks, small talk and bare questions are dropped. One
candidate per turn that keeps anything, derived from that turn, so that what a memory says can always be
traced to what was said.

An LLM summariser (``lifecycle.llm_summarise``, an OpenAI-compatible endpoint, when configured) may do better;
this one needs nothing and gives the same answer every time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
_LEADING = re.compile(
    r"^(?:(?:oh|ah|wow|yeah|yep|yes|no|nope|well|so|hey|hi|hello|haha+|lol|omg|hmm+|um+|uh+|aw+|ooh+|okay|ok|"
    r"sure|cool|great|nice|awesome|totally|absolutely|honestly|actually|anyway|right|thanks|thank you)"
    r"(?:\s+\w+)?[,!.]+\s*)+",
    re.I,
)
_FILLER = re.compile(
    r"^(?:hi|hey|hello|bye|goodbye|thanks|thank you|thx|wow|cool|great|nice|awesome|amazing|ok|okay|sure|yeah|"
    r"yes|no|lol|haha+|congrats|congratulations|good (?:luck|night|morning)|take care|see you|same here|me too|"
    r"sounds (?:good|great|fun)|that(?:'s| is) (?:so |really )?(?:great|awesome|amazing|cool|nice|wonderful|"
    r"fantastic|true|good|funny|sweet|exciting|interesting)|you too|glad to hear(?: that)?|"
    r"i'm (?:so )?(?:glad|happy) for you|good for you|keep it up|no problem)\b[\s\w]{0,12}[.!]*$",
    re.I,
)
# What makes a statement worth keeping: a preference, a decision or plan, an event or state, a failure.
_CUES = re.compile(
    r"\b(?:prefer\w*|lik(?:e|es|ed)|lov(?:e|es|ed)|enjoy\w*|hat(?:e|es|ed)|favou?rite|want\w*|wish\w*|"
    r"decid\w+|plan\w*|going to|gonna|will|chose|choos\w+|start\w*|stopp?\w*|join\w*|mov(?:e|ed|ing)|"
    r"bought|buy\w*|got|get(?:ting)?|went|go(?:ing)?|visit\w*|travel\w*|work\w*|liv(?:e|es|ed|ing)|born|"
    r"married|adopt\w*|learn\w*|stud\w+|graduat\w+|finish\w*|made|mak\w+|built|creat\w+|wrote|writ\w+|"
    r"paint\w*|play\w*|read|run\w*|ran|attend\w*|volunteer\w*|fail\w*|broke|broken|error|crash\w*|lost|"
    r"couldn't|can't|didn't work|is|are|was|were|have|has|had|my|our|since|ago|last|next|yesterday|tomorrow|"
    r"today|week|month|year)\b",
    re.I,
)
# What SPEC 6.2 names outright (a preference, a decision, a failure) weighs as much as a name.
_STRONG = re.compile(
    r"\b(?:prefer\w*|favou?rite|hat(?:e|es|ed)|decid\w+|decision|chose|fail\w*|broke|broken|error|crash\w*|"
    r"didn't work|doesn't work|allerg\w+|always|never)\b",
    re.I,
)
_NAMED = re.compile(r"(?<!^)(?<![.!?] )\b[A-Z][a-z]+|\b\d+\b")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|we|we're|our|us)\b")
_OWN = re.compile(r"\b(?:my|our|I'm|I've|I'd|we're|we've)\b", re.I)
MIN_WEIGHT = 2  # cues count 1, strong cues 2, names, numbers and a first person 2
MAX_SENTENCES = 1  # a turn keeps its heaviest statement (chosen on LongMemEval subset60: all evidence turns kept)


# Words and phrases that carry nothing a memory needs (hedges, intensifiers, discourse markers, emphasis).
_HEDGES = re.compile(
    r"\b(?:really|just|so|very|totally|actually|basically|literally|honestly|definitely|kind of|sort of|"
    r"you know|i mean|i think|i guess|pretty much|super|quite|a lot of|lots of)\b\s*",
    re.I,
)
_EMPHASIS = re.compile(r"([!?.])\1+|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+|\s+(?=[,.!?])")
_PHOTO = re.compile(r"\[photo: (?:a |an )?(?:photo|picture|image) of (?:a |an |the )?", re.I)


def tighten(text: str) -> str:
    """The text without hedges, repeated punctuation and emoji; photo captions shortened."""
    text = _PHOTO.sub("[photo: ", text)
    text = _EMPHASIS.sub(lambda m: m.group(1) or "", _HEDGES.sub("", text))
    text = re.sub(r",\s*(?=[.!?]|$)", "", text)  # a comma left before the end by a dropped hedge
    return re.sub(r"\s{2,}", " ", text).strip()


@dataclass(frozen=True)
class Turn:
    """One turn of a conversation, as the buffer holds it."""

    ref: str  # the turn's id (a memory id, or the buffer's sequence): what a candidate derives from
    speaker: str
    text: str


@dataclass(frozen=True)
class Condensed:
    """A candidate memory and the turn it comes from (``ref``), with any further turns it draws on."""

    ref: str
    content: str
    also: tuple[str, ...] = ()
    key: str = ""  # what tells it from the turn's other candidates (an LLM may make several of one turn)

    @property
    def refs(self) -> tuple[str, ...]:
        return (self.ref, *self.also)


class Summariser(Protocol):
    """What condenses a run of turns (of one user and agent) into candidate memories."""

    @property
    def name(self) -> str: ...

    async def condense(self, turns: list[Turn]) -> list[Condensed]: ...

    async def aclose(self) -> None: ...


class ExtractiveSummariser:
    """The deterministic summariser of this module, behind the ``Summariser`` interface."""

    name = "extractive"

    async def condense(self, turns: list[Turn]) -> list[Condensed]:
        return condense(turns)

    async def aclose(self) -> None:
        return None


def salient(sentence: str) -> tuple[int, str] | None:
    """The sentence without its leading filler and how much it carries (cues, names, numbers), or None
    when nothing worth keeping is left."""
    s = _LEADING.sub("", sentence.strip()).strip()
    if not s or _FILLER.match(s) or len(s.split()) < 3:
        return None
    if s.endswith("?") and not (_OWN.search(s) or _NAMED.search(s)):
        return None  # a question ("How can I help?") says nothing about anyone yet, unless it tells something
    weight = len(_CUES.findall(s)) + len(_STRONG.findall(s)) + 2 * len(_NAMED.findall(s))
    weight += 2 if _FIRST_PERSON.search(s) else 0
    if weight < MIN_WEIGHT:
        return None
    return weight, s[0].upper() + s[1:]


def condense_turn(turn: Turn) -> Condensed | None:
    """The turn's heaviest statements (at most ``MAX_SENTENCES``, in their order), or None."""
    scored = [(i, k) for i, m in enumerate(_SENTENCE.finditer(turn.text)) if (k := salient(m.group()))]
    if not scored:
        return None
    best = sorted(sorted(scored, key=lambda x: -x[1][0])[:MAX_SENTENCES])
    prefix = f"{turn.speaker}: " if turn.speaker else ""
    return Condensed(turn.ref, prefix + tighten(" ".join(k[1] for _, k in best)))


def condense(turns: list[Turn]) -> list[Condensed]:
    """The candidates of a run of turns, in their order."""
    return [c for c in (condense_turn(t) for t in turns) if c is not None]
