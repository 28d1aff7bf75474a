"""Low value: text that carries nothing worth remembering (chat filler, punctuation, repeated tool output)."""

from __future__ import annotations

import re
import unicodedata

_FILLER_WORDS = (
    "ok okay k kk okie yes yeah yep yup no nope nah sure thanks thank thx ty you so much very hi hello hey hiya "
    "bye goodbye cya see later lol lmao haha hahaha hmm hm mm uh um oh ah cool nice great good fine alright "
    "right got it noted understood will do sounds np no problem welcome cheers morning evening night good "
    "awesome perfect wow yay sorry please done agreed indeed true exactly absolutely definitely of course "
    "thanks! much appreciated appreciate"
)
_FILLER = set(_FILLER_WORDS.split())
_WORD = re.compile(r"[^\W\d_]+|\d+", re.UNICODE)
_REPEATED_LINE_SHARE = 0.5  # more than half of a tool output's lines repeat: a log, not a memory


def is_filler(text: str) -> bool:
    """Only greetings, thanks and acknowledgements ("ok", "thanks so much!", "hello there"), at most six
    words."""
    words = [w.lower() for w in _WORD.findall(text)]
    return 0 < len(words) <= 6 and all(w in _FILLER or w == "there" for w in words)


def has_no_words(text: str) -> bool:
    """Punctuation, symbols and emoji only: nothing a search could find."""
    return not any(unicodedata.category(c)[0] in "LN" for c in text)


def is_repetitive(text: str) -> bool:
    """Tool output whose lines mostly repeat (a polling log, a progress bar)."""
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if len(lines) < 6:
        return False
    shapes = [re.sub(r"\d+", "#", line) for line in lines]
    return 1 - len(set(shapes)) / len(shapes) > _REPEATED_LINE_SHARE
