"""The rules read over spaced-out text once its letters are joined."""

from __future__ import annotations

from engram.policy.injection.rules.rule import _rules

# Letters only, lower case: what spaced-out text ("i g n o r e  a l l ...") reads as once joined.
_COMPACT = _rules(
    (
        "override",
        (),
        r"(?:ignore|disregard|forget|override|bypass|skip|drop|abandon|discard)(?:all|any|of|the|your|my|these)*"
        r"(?:previous|prior|above|earlier|preceding|original|initial|system|safety|existing)+"
        r"(?:instructions?|rules|directions|directives|guidelines|guardrails|prompts?|programming|policies|"
        r"constraints|restrictions|filters)|(?:ignore|disregard|forget|override|bypass)(?:allof|all)?your[a-z]{0,15}?"
        r"(?:instructions|rules|guidelines|programming|restrictions|filters)|(?:ignore|disregard|forget)"
        r"(?:all|everything)(?:youweretold|above|before|previous)",
    ),
    (
        "exfiltration",
        (),
        r"(?:reveal|print|show|output|repeat|leak|disclose|tellme|giveme|dump)(?:me)?(?:all)?(?:your|the)"
        r"(?:full|entire|hidden|secret|original|initial)*(?:systemprompt|initialprompt|instructions|apikeys?|"
        r"passwords?|secrets|credentials)",
    ),
    (
        "role_play",
        (),
        r"youarenow(?:dan|an?(?:unrestricted|unfiltered|uncensored|jailbroken|evil))|(?:enable|enter|activate)"
        r"(?:developer|dan|jailbreak|god)mode|doanythingnow",
    ),
)
