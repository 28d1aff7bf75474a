"""The rules, one module per family, in the order they run."""

from __future__ import annotations

from engram.policy.injection.rules import (
    addressed,
    exfiltration,
    impersonation,
    languages,
    more_shapes,
    override,
    role_play,
    tool_coaxing,
)
from engram.policy.injection.rules.rule import _Rule

# The order is the one the rules always had: a text's findings come in rule order, and each family is
# reported by the first of its rules that matches (that rule's excerpt).
RULES: tuple[_Rule, ...] = (
    *override.RULES,
    *languages.OVERRIDE,
    *role_play.RULES,
    *languages.ROLE_PLAY,
    *impersonation.RULES,
    *addressed.RULES,
    *tool_coaxing.RULES,
    *exfiltration.RULES,
    *languages.EXFILTRATION,
    *more_shapes.RULES,
)
