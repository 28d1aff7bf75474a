"""Which episodes say the same thing (SPEC 6.4), and how often it was said (an episode repeated word for word
is merged into the stored one by the write path, which keeps each repeat's source: a mention each),
deterministically: within one scope, an episode joins the
first group whose centroid its vector is at least ``SIMILAR`` cosine from, or whose normal form (lowercase,
no punctuation, no speaker prefix) it shares; otherwise it starts a group. Episodes are taken oldest first,
so the groups, their order and their representatives are the same on every run over the same rows.

The representative of a group is its medoid (the member closest to the others, each counted as often as it
was said): the statement the group keeps repeating, not an outlier among them; the newest member wins a tie.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

SIMILAR = 0.9  # all-MiniLM-L6-v2 puts rephrasings of one statement above this, related statements below
_SPEAKER = re.compile(r"^\s*[\w .'-]{1,40}:\s+")
_NOT_WORD = re.compile(r"[^\w\s]+")


def normal_form(text: str) -> str:
    text = _SPEAKER.sub("", text, count=1)
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


@dataclass(frozen=True)
class Episode:
    id: uuid.UUID
    content: str
    recorded_at: datetime
    vector: np.ndarray[Any, Any] | None
    mentions: int = 1  # the write path merges repeats into one memory (dedup): each merge is a mention


@dataclass
class Group:
    members: list[Episode] = field(default_factory=list)
    forms: set[str] = field(default_factory=set)
    total: np.ndarray[Any, Any] | None = None  # sum of the members' unit vectors

    def admits(self, e: Episode, form: str) -> bool:
        if form in self.forms:
            return True
        if e.vector is None or self.total is None:
            return False
        norm = float(np.linalg.norm(self.total))
        return norm > 0 and float(self.total @ e.vector) / norm >= SIMILAR

    def add(self, e: Episode, form: str) -> None:
        self.members.append(e)
        self.forms.add(form)
        if e.vector is not None:
            self.total = e.vector.copy() if self.total is None else self.total + e.vector

    def medoid(self) -> Episode:
        vectors = [m.vector for m in self.members]
        if any(v is None for v in vectors):
            return max(self.members, key=lambda m: (m.recorded_at, m.id))
        matrix = np.stack(vectors)  # type: ignore[arg-type]
        weights = np.array([m.mentions for m in self.members], dtype=np.float32)
        closeness = (matrix @ matrix.T) @ weights  # a statement made more often pulls harder
        best = max(range(len(self.members)), key=lambda i: (round(float(closeness[i]), 6), self.members[i].recorded_at))
        return self.members[best]

    @property
    def evidence(self) -> int:
        """How often the group's statement was made: its episodes and the repeats merged into them."""
        return sum(m.mentions for m in self.members)

    def key(self) -> str:
        """The fact's key: from the group's first episode, so a group that grows keeps its fact (and supersedes
        its earlier version)."""
        return "consolidated." + self.members[0].id.hex[:20]

    def evidence_id(self) -> str:
        """The write's external id: the evidence set itself, so the same group writes the same memory once."""
        ids = ",".join(sorted(str(m.id) for m in self.members))
        return "consolidated:" + hashlib.sha256(ids.encode()).hexdigest()[:40]


def group(episodes: list[Episode]) -> list[Group]:
    """The groups of ``episodes`` (all of one scope), in the order of their first member."""
    groups: list[Group] = []
    for e in sorted(episodes, key=lambda x: (x.recorded_at, x.id)):
        form = normal_form(e.content)
        home = next((g for g in groups if g.admits(e, form)), None)
        if home is None:
            home = Group()
            groups.append(home)
        home.add(e, form)
    return groups


def confidence(evidence: int) -> float:
    """Each repetition adds to the belief, less each time: 2 -> 0.76, 3 -> 0.82, 5 -> 0.88, 10 -> 0.94; at most
    0.95 (repetition is not proof)."""
    return round(0.95 - 0.19 * 0.7 ** max(0, evidence - 2), 3)
