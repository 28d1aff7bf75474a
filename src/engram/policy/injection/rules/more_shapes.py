"""More shapes of the same families. They run after all the other rules, in this order: each family is
reported by the first of its rules that matches, so moving one would change what a finding quotes."""

from __future__ import annotations

from engram.policy.injection.rules.rule import _Rule, _rules
from engram.policy.injection.vocabulary import _DATA, _OBJECT, _QUALIFIER, _STRONG_QUALIFIER, _URL_NEED, _W_OBJECT

RULES: tuple[_Rule, ...] = _rules(
    (
        "override",
        ("supersedes supersede overrides replaces precedence trumps invalidates cancels voids overrules", _W_OBJECT),
        rf"\b(?:supersedes?|overrides|replaces|takes?\s+precedence\s+over|trumps|invalidates|cancels|voids|overrules)\s+"
        rf"(?:(?:all|any)\s+(?:of\s+)?)?(?:the\s+|your\s+)?{_STRONG_QUALIFIER}\s+(?:{_QUALIFIER}\s+){{0,2}}{_OBJECT}\b",
    ),
    (
        "override",
        (
            "safety content ethical moderation censorship guardrails guard",
            "disabled off removed lifted deactivated suspended down bypassed inactive paused",
        ),
        r"\b(?:safety|content|ethical|moderation)\s+(?:checks|filters?|filtering|guard\s*rails|restrictions|protocols|"
        r"measures|mechanisms|layers?|polic(?:y|ies)|rules|guidelines|constraints|systems?)\s+(?:are|is|have\s+been|"
        r"has\s+been|were|was|will\s+be)\s+(?:now\s+|hereby\s+|temporarily\s+|currently\s+)?(?:disabled|off|turned\s+"
        r"off|switched\s+off|removed|lifted|deactivated|suspended|down|bypassed|inactive|paused)\b|\b(?:censorship|"
        r"guard\s*rails)\s+(?:are|is|have\s+been)\s+(?:now\s+)?(?:disabled|off|removed|lifted|deactivated)\b",
    ),
    (
        "addressed_to_model",
        ("when whenever if", "someone anyone people they", "only always never instead"),
        r"\b(?:when(?:ever)?|if)\s+(?:someone|anyone|people|they)\s+(?:asks?|mentions?|inquires?|requests?|wants?|"
        r"looks?\s+for|searche?s?\s+for)\b[^.!?\n]{0,80}?,\s*(?:you\s+(?:should|must|will)\s+)?(?:only|always|never|"
        r"instead)\s+(?:recommend|suggest|say|tell|mention|answer|respond|reply|promote|point|direct|send|link)\b",
    ),
    (
        "impersonation",
        (
            "from",
            "your",
            "developers developer creators creator makers maker programmers programmer operators operator admin "
            "admins administrator administrators",
        ),
        r"\bfrom\s+your\s+(?:developers?|creators?|makers?|programmers?|operators?|admin(?:istrator)?s?)\b",
    ),
    (
        "exfiltration",
        ("you", "keys key passwords password credentials secrets tokens token"),
        r"\b(?:reveal|leak|disclose|print|show|display|output|list|tell|give|share|send|dump|provide|paste|return|what\s+"
        r"(?:is|are))\b[^.!?\n]{0,60}?\b(?:api[\s_-]*keys?|passwords?|credentials|secrets|tokens|keys|secret\s+keys?|"
        r"access\s+tokens?)\s+(?:that\s+)?you\s+(?:have|know|can\s+(?:see|access)|stored|saved|were\s+given|hold|"
        r"possess|keep|remember)\b",
    ),
    (
        "override",
        ("everything all anything text content whatever what", "above before prior"),
        r"\b(?:everything|all(?:\s+of\s+the)?|anything|the\s+(?:text|content|instructions|messages?)|what(?:ever)?\s+"
        r"(?:is|was)\s+written)\s+(?:(?:written|said|stated|given)\s+)?(?:above|before|prior)(?:\s+(?:this|that|the)\s+"
        r"(?:line|point|message|sentence|note))?\s+(?:is|was|are|were|has\s+been|have\s+been)\s+(?:now\s+|hereby\s+)?"
        r"(?:outdated|void|null|obsolete|invalid|cancell?ed|irrelevant|superseded|fake|false|a\s+test|wrong|"
        r"no\s+longer\s+(?:valid|relevant|applicable|in\s+effect)|to\s+be\s+ignored|overridden|revoked)\b",
    ),
    ("role_play", ("anything dan",), r"\bdo\s+anything\s+now\b|\bDAN\s+(?:mode|prompt|jailbreak)\b"),
    (
        "tool_coaxing",
        ("use call invoke trigger execute run",),
        r"\b(?:use|call|invoke|trigger|execute|run)\s+(?:the\s+|your\s+)?`?[a-z]+(?:[_.][a-z]+)+`?\s+(?:tool|plugin)\b"
        r"|\b(?:invoke|trigger)\s+(?:the\s+)?`?[a-z]+(?:[_.][a-z]+)+`?\s*(?:\(|function\b)",
    ),
    (
        "exfiltration",
        (_URL_NEED,),
        rf"(?:https?://|hxxps?://|www\.)\S*[?&][\w-]*=(?=\s|$)\s*(?:followed\s+by|\+|plus|with|and\s+append|appending|"
        rf"including|concatenated\s+with|containing|and\s+add)\s+(?:the\s+|your\s+|their\s+|the\s+user'?s?\s+)?"
        rf"(?:[\w'-]+\s+){{0,2}}?{_DATA}\b",
    ),
)
