"""A rule: its reason code, the words (or patterns) a text must hold for it to run, and its pattern."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engram.policy.injection.vocabulary import _I

Need = frozenset[str] | str


@dataclass(frozen=True)
class _Rule:
    code: str
    needs: tuple[frozenset[str] | re.Pattern[str], ...]
    pattern: re.Pattern[str]

    def ready(self, words: frozenset[str], text: str) -> bool:
        for need in self.needs:
            if isinstance(need, frozenset):
                if need.isdisjoint(words):
                    return False
            elif not need.search(text):
                return False
        return True


def _rules(*entries: tuple[str, tuple[Need, ...], str] | tuple[str, tuple[Need, ...], str, int]) -> tuple[_Rule, ...]:
    out = []
    for entry in entries:
        code, needs, pattern = entry[0], entry[1], entry[2]
        flags = entry[3] if len(entry) == 4 else _I
        compiled: list[frozenset[str] | re.Pattern[str]] = []
        for need in needs:
            if isinstance(need, str) and need.startswith("re:"):
                compiled.append(re.compile(need[3:], _I))
            else:
                compiled.append(frozenset(need.split()) if isinstance(need, str) else need)
        out.append(_Rule(code, tuple(compiled), re.compile(pattern, flags)))
    return tuple(out)
