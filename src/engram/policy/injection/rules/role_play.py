"""role_play: a new identity that sheds the model's rules."""

from __future__ import annotations

import re

from engram.policy.injection.rules.rule import _Rule, _rules
from engram.policy.injection.vocabulary import (
    _AI_OR_AGENT,
    _W_AI_OR_AGENT,
    _W_JAILBROKEN_OR_AI,
    _W_MODES,
    _W_RESTRICTIONS,
)

RULES: tuple[_Rule, ...] = _rules(
    (
        "role_play",
        ("you", "now longer henceforth from"),
        r"\byou\s*(?:are|'re|r)\s+(?:now|no\s+longer|henceforth|from\s+now\s+on)\s+(?:an?\s+|the\s+|my\s+)?(?:[\w'-]+\s+){0,4}?"
        r"(?:ai|assistant|model|bot|chat\s*bot|llm|gpt|dan|stan|dude|aim|persona|entity|character|unrestricted|"
        r"unfiltered|uncensored|jailbroken|evil|rogue|amoral|unethical|immoral|unbound|unchained|unlimited|"
        r"liberated|lawless|free\s+(?:from|of)|freed|bound|restricted|limited|required|obligated|constrained|"
        r"subject|governed|controlled|censored|filtered|held|helpful|(?:named|called|known\s+as)\s+\S+|in\s+"
        r"(?:dan|jailbreak|developer|god|unrestricted|unfiltered|uncensored|evil|chaos|admin|sudo|debug)\s+mode|"
        r"operating|running|without)\b",
    ),
    (
        "role_play",
        (
            "act acting behave respond reply answer talk speak write roleplay role play pose function operate serve",
            "as like",
            _W_JAILBROKEN_OR_AI,
        ),
        r"\b(?:act|acting|behave|respond|reply|answer|talk|speak|write|roleplay|role-play|role\s+play|pose|function|"
        r"operate|serve)(?:\s+[\w'-]+){0,4}?\s+(?:as|like)\s+(?:if\s+you\s+(?:were|are)\s+|though\s+you\s+(?:were|are)\s+)?"
        r"(?:an?\s+|the\s+|my\s+)?(?:[\w'-]+\s+){0,2}?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|rogue|"
        r"amoral|unethical|immoral|malicious|unbound|unchained|unlimited|liberated|lawless|uncontrolled|"
        r"unaligned|dan|stan|dude|aim|(?:ai|assistant|model|chat\s*bot|llm|version\s+of\s+yourself)\s+(?:without|"
        r"with\s+no|that\s+(?:has\s+no|ignores|doesn'?t\s+follow|does\s+not\s+follow|can\s+do\s+anything|never\s+"
        r"refuses|has\s+(?:been\s+)?(?:freed|broken|escaped)|is\s+(?:free|not\s+bound))|who\s+(?:has\s+no|ignores|"
        r"never\s+refuses|can\s+do\s+anything)|free\s+(?:from|of)))",
    ),
    (
        "role_play",
        (
            "pretend imagine suppose assume roleplay role let act simulate hypothetically world play game",
            _W_RESTRICTIONS,
        ),
        r"\b(?:pretend|imagine|suppose|assume|roleplay|role-play|let'?s\s+(?:say|pretend|imagine|play)|play\s+a\s+game|act\s+as\s+if|"
        r"simulate|hypothetically|in\s+a\s+world\s+where)\b[^.!?\n]{0,80}?\b(?:you|ai|assistant|model|chat\s*bot|"
        r"llm|gpt|chatgpt)\b[^.!?\n]{0,60}?\b(?:without|with\s+no|free\s+(?:from|of)|unbound\s+by|not\s+bound\s+by|"
        r"no\s+longer\s+bound\s+by|not\s+(?:restricted|limited|constrained)\s+by|ha(?:ve|s)\s+no|ignores?|"
        r"(?:do|does)\s*(?:n'?t|\s+not)\s+(?:follow|have|care\s+about)|never\s+(?:follows?|refuses?))\s+"
        r"(?:any\s+)?(?:\w+\s+){0,2}?(?:rules|restrictions|limitations|limits|filters|guidelines|polic(?:y|ies)|"
        r"censorship|ethics|morals|morality|guard\s*rails|safeguards|constraints|boundaries|restraints|"
        r"programming|training|instructions)\b",
    ),
    (
        "role_play",
        (_W_AI_OR_AGENT, _W_RESTRICTIONS),
        rf"\b{_AI_OR_AGENT}\b[^.!?\n]{{0,40}}?\b(?:without|with\s+no|free\s+(?:from|of)|unbound\s+by|not\s+bound\s+by|"
        r"no\s+longer\s+bound\s+by|that\s+ignores|who\s+ignores|which\s+ignores|that\s+has\s+no|who\s+has\s+no)\s+"
        r"(?:any\s+)?(?:\w+\s+){0,2}?(?:rules|restrictions|limitations|filters|guidelines|content\s+polic(?:y|ies)|"
        r"censorship|ethics|morals|morality|guard\s*rails|safeguards|ethical\s+(?:constraints|boundaries)|"
        r"restraints)\b(?![^.!?\n]{0,30}\b(?:house|kitchen|class|school|road|family)\b)",
    ),
    (
        "role_play",
        ("mode", _W_MODES),
        r"\b(?:enter|enable|activate|switch\s+(?:to|into|on)|turn\s+on|engage|go\s+into|unlock|initiate|boot\s+into|"
        r"start|run\s+in|operate\s+in|stay\s+in|remain\s+in|you\s+are\s+(?:now\s+)?in|you'?re\s+(?:now\s+)?in|"
        r"simulate|with)\s+(?:the\s+)?(?:[\w-]+\s+)?(?:dan|jailbreak|jailbroken|unrestricted|unfiltered|"
        r"uncensored|evil|chaos|opposite|unlocked|dude|stan|no[- ]?limits?|no[- ]?restrictions?|no[- ]?filters?|"
        r"freedom|unsafe|amoral|anarchy|rebel|god)\s+mode\b",
    ),
    (
        "role_play",
        ("mode",),
        r"\b(?:developer|dev|god|dan|jailbreak|sudo|admin|debug|unrestricted|unfiltered|uncensored|evil)\s+mode\s*"
        r"(?:is\s+)?(?:enabled|activated|engaged|unlocked|on(?=\s*(?:[.!,;:)\]]|$))|:\s*on|=\s*(?:on|true|1))|\b(?:enable|activate|"
        r"simulate|enter)\s+(?:the\s+)?(?:developer|dan|jailbreak|god|sudo|debug)\s+mode\b[^\n]{0,80}?\b(?:you|"
        r"your|ai|assistant|model|chatgpt|filters?|polic(?:y|ies)|rules|restrictions|responses?|safety|censor\w*)"
        r"|\b(?:chatgpt|gpt|ai|assistant|model|you)\s+(?:with|in)\s+developer\s+mode\b",
    ),
    (
        "role_play",
        ("dan stan dude aim evilbot betterdan antigpt ucar kevin mongo",),
        r"\b(?:act(?:ing)?\s+as|play(?:ing)?|become|be|as|named|called|are|stay|you're)\s+(?:(?:a|an|the)\s+)?[\"'“]?"
        r"(?:DAN|STAN|DUDE|AIM|EvilBot|BetterDAN|AntiGPT|UCAR|KEVIN|Mongo\s+Tom)\b[\"'”]?",
        re.MULTILINE,
    ),
    (
        "role_play",
        ("jailbreak jailbroken jailbreaking",),
        r"\bjailbr(?:eak|oken|eaking)\b[^.!?\n]{0,40}?\b(?:you|your|ai|assistant|model|chat\s*gpt|gpt|llm|"
        r"chat\s*bot|mode|prompt|version|persona)\b|\b(?:you|ai|assistant|model|chat\s*gpt|gpt|llm|chat\s*bot)\b"
        r"[^.!?\n]{0,30}?\b(?:are|is|been|now|become|as|an?)\s+(?:now\s+)?jailbr(?:eak|oken)",
    ),
    (
        "role_play",
        ("from", "now", "on"),
        r"(?:^|[.!?]\s+)from\s+now\s+on,?\s+(?:you\s+(?:are|'re|will|shall|must|should|have\s+to|need\s+to|can|may)\s+"
        r"(?:now\s+)?(?:be\s+|act|respond|answer|reply|behave|speak|talk|pretend|play|only|always|never|ignore|"
        r"obey|follow|disregard|forget|roleplay|simulate|refer\s+to\s+yourself|call\s+yourself|stay|remain)|"
        r"(?:ignore|disregard|forget|respond|answer|reply|act|pretend|always|never|only\s+(?:respond|answer|reply)|"
        r"do\s+not|don'?t)\b)",
    ),
    (
        "role_play",
        ("character",),
        r"\b(?:stay|remain|keep)\s+in\s+character\b[^.!?\n]{0,60}?\b(?:no\s+matter\s+what|at\s+all\s+(?:times|costs)|"
        r"even\s+if|whatever\s+happens|never\s+break|don'?t\s+break|do\s+not\s+break|refus\w+|ethic\w*|rules|"
        r"restrictions|polic\w+)",
    ),
    (
        "role_play",
        ("you", "freed liberated released unshackled unchained broken free"),
        r"\byou\s+(?:have|'ve)\s+(?:been\s+)?(?:freed|liberated|released|unshackled|unchained|broken\s+free)\s+"
        r"(?:from|of)\b|\byou\s+(?:are|'re)\s+(?:now\s+)?free\s+(?:from|of)\s+(?:all\s+|any\s+|your\s+)?"
        r"(?:\w+\s+)?(?:rules|restrictions|limitations|filters|guidelines|polic(?:y|ies)|censorship|constraints|"
        r"programming|confines|shackles)",
    ),
)
