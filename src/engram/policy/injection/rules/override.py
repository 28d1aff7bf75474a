"""override: set aside what the model was told."""

from __future__ import annotations

from engram.policy.injection.rules.rule import _Rule, _rules
from engram.policy.injection.vocabulary import (
    _AND,
    _NOT_ABOUT,
    _NOT_NEGATED,
    _OBJECT,
    _OVERRIDE_VERB,
    _QUALIFIER,
    _STRONG_QUALIFIER,
    _W_DISABLE,
    _W_OBJECT,
    _W_VERB,
    _W_VOID,
    _WEAK_OBJECT,
)

RULES: tuple[_Rule, ...] = _rules(
    # ignore (all) (the|your) previous/system/... instructions/rules/...
    (
        "override",
        (_W_VERB, _W_OBJECT),
        rf"{_NOT_NEGATED}\b{_OVERRIDE_VERB}\s+(?:(?:all|any|every|each)\s+(?:of\s+)?)?(?:the\s+|your\s+|my\s+|its\s+|"
        rf"these\s+|those\s+|such\s+)?{_STRONG_QUALIFIER}{_AND}(?:{_QUALIFIER}{_AND}){{0,3}}{_OBJECT}\b{_NOT_ABOUT}",
    ),
    (
        "override",
        (_W_VERB, "all"),
        rf"{_NOT_NEGATED}\b{_OVERRIDE_VERB}\s+all\s+(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|preceding|earlier|"
        rf"system)\s+{_WEAK_OBJECT}\b",
    ),
    (
        "override",
        (_W_VERB, _W_OBJECT),
        rf"{_NOT_NEGATED}\b{_OVERRIDE_VERB}\s+(?:all\s+(?:of\s+)?)?your\s+(?:{_QUALIFIER}\s+){{0,3}}(?:instructions?|"
        rf"directives?|guidelines?|guard\s*rails?|prompts?|programming|polic(?:y|ies)|constraints|restrictions|"
        rf"limitations|filters|safeguards|training|ethics|morals|rules|commands|orders)\b{_NOT_ABOUT}"
        rf"|{_NOT_NEGATED}\b{_OVERRIDE_VERB}\s+all\s+(?:of\s+)?(?:the\s+)?(?:{_QUALIFIER}\s+){{0,2}}(?:instructions?|"
        rf"directives?|guidelines|guard\s*rails|prompts?|programming|polic(?:y|ies)|constraints|restrictions|"
        rf"filters|safeguards)\b",
    ),
    (
        "override",
        (_W_VERB, "everything anything all whatever what"),
        rf"{_NOT_NEGATED}\b{_OVERRIDE_VERB}\s+(?:(?:every|any)thing|all(?:\s+of\s+(?:it|this|that))?|whatever|what)\s+"
        r"(?:that\s+)?(?:you(?:'ve|\s+have)?\s+(?:were|was|been|have\s+been|had\s+been|got|received)\s*"
        r"(?:told|taught|given|instructed|programmed|trained|said|before|so\s+far)|(?:was|is|has\s+been|were|"
        r"came|comes|appears?)\s*(?:said|written|stated|given|mentioned|told)?\s*"
        r"(?:above|before|earlier|previously|prior|so\s+far|until\s+now)|above|before\s+(?:this|now|that)|"
        r"(?:stated\s+|said\s+|written\s+)?(?:above|earlier|previously|prior|so\s+far|up\s+to\s+(?:now|this\s+point)|"
        r"until\s+now|in\s+your\s+(?:prompt|instructions|training|programming|system\s+prompt)))",
    ),
    (
        "override",
        (_W_VERB, "above preceding foregoing previous prior"),
        rf"{_NOT_NEGATED}\b{_OVERRIDE_VERB}\s+(?:the|all\s+(?:of\s+)?the)\s+(?:above|preceding|foregoing|previous|prior)"
        r"(?=\s*(?:[.,;:!]|-|$|and\b|instead\b|then\b|text\b|content\b|prompt\b|input\b|lines?\b))",
    ),
    (
        "override",
        (_W_OBJECT | frozenset({"commands", "orders", "text", "content"}), _W_VOID),
        rf"\b(?:(?:all|any)\s+)?(?:(?:the|your|its)\s+)?{_STRONG_QUALIFIER}{_AND}(?:{_QUALIFIER}{_AND}){{0,2}}"
        r"(?:instructions?|directives?|guidelines|guard\s*rails|prompts?|programming|polic(?:y|ies)|rules|filters|"
        r"safeguards|constraints|training|restrictions|limitations|commands|orders|messages|text|content)\s+(?:are|is|were|was|have\s+been|has\s+been|"
        r"will\s+be)\s+(?:now\s+|hereby\s+|officially\s+|henceforth\s+)?(?:void|null|nullified|cancell?ed|invalid(?:ated)?|"
        r"revoked|obsolete|superseded|overridden|overruled|disabled|suspended|deactivated|removed|deprecated|"
        r"deleted|erased|wiped|reset|expired|irrelevant|lifted|turned\s+off|switched\s+off|no\s+longer\s+"
        r"(?:valid|in\s+effect|in\s+force|applicable|relevant|active|apply|binding|needed)|not\s+(?:valid|applicable|"
        r"binding)|to\s+be\s+ignored|unlocked)",
    ),
    (
        "override",
        (_W_OBJECT, "longer not don dont doesn doesnt won"),
        r"\b(?:(?:your|openai'?s?|anthropic'?s?|the\s+ai'?s?|(?:the\s+)?model'?s?|safety|content|ethical|moral)\s+)+"
        r"(?:rules|restrictions|guidelines|polic(?:y|ies)|filters|limitations|limits|constraints|programming|ethics|"
        r"training|safeguards|guard\s*rails|instructions|principles)\s+(?:no\s+longer|do\s+not|don'?t|does\s+not|doesn'?t|won'?t)\s+"
        r"(?:apply|matter|exist|bind|count|hold)",
    ),
    (
        "override",
        (_W_DISABLE, "your its ai model"),
        r"\b(?:disable|turn\s+off|switch\s+off|deactivate|remove|suspend|lift|bypass|circumvent|get\s+around|evade|"
        r"break\s+(?:free\s+)?(?:from|out\s+of)|escape|drop|override|ignore|disregard|jailbreak|unlock|"
        r"shut\s+(?:off|down))\s+(?:all\s+(?:of\s+)?)?(?:your|the\s+ai'?s?|the\s+model'?s?|its)\s+(?:\w+\s+){0,2}?"
        r"(?:filters?|guard\s*rails?|restrictions|safeguards|censorship|safety|limitations|limits|constraints|"
        r"protections|moderation|alignment|ethics|morals|conscience|programming|training|rules|polic(?:y|ies)|"
        r"content\s+polic(?:y|ies)|boundaries)\b",
    ),
    (
        "override",
        (_W_DISABLE, "ethical moral content moderation safety openai anthropic ai"),
        r"\b(?:disable|turn\s+off|switch\s+off|deactivate|remove|suspend|lift|bypass|circumvent|evade|drop|override|"
        r"ignore|disregard|ignores|disregards|bypasses|overrides|ignoring|disregarding|bypassing)\s+(?:all\s+(?:of\s+)?)?(?:the\s+|any\s+)?(?:ethical|moral|content|moderation|safety|"
        r"openai'?s?|anthropic'?s?|ai)\s+(?:guidelines|guard\s*rails|restrictions|safeguards|censorship|filters?|"
        r"polic(?:y|ies)|rules|training|alignment|constraints|limitations|protocols|moderation|checks|"
        r"mechanisms|layers?)\b",
    ),
    (
        "override",
        (
            "new updated real actual revised true override secret hidden additional urgent priority corrected modified latest supplementary replacement",
            "instruction instructions directive directives prompt",
        ),
        r"(?:^|[^\w\s]\s*|\b(?:here\s+(?:are|is)|these\s+are|follow|following|the)\s+)(?:new|updated|real|actual|revised|"
        r"true|override|secret|hidden|additional|urgent|priority|corrected|modified|latest|supplementary|"
        r"replacement)\s+(?:system\s+|admin\s+|developer\s+|important\s+)?(?:instructions?|directives?|"
        r"system\s+prompt)\s*(?::|-{1,3}\s|—|\(|\bfollow\b|\bas\s+follows\b|\bbelow\b|\bfor\s+(?:the|you|"
        r"this)\s+(?:ai|assistant|model|agent|bot)\b|\bare\s+(?:as\s+follows|below|to\b|:)|\bare\s+now\b|\bapply\b)",
    ),
    (
        "override",
        ("your", "task purpose objective instruction instructions mission directive priority orders assignment"),
        r"\byour\s+(?:new|real|true|actual|only|sole|primary|updated|revised|current|one)\s+(?:task|purpose|objective|"
        r"instructions?|mission|directive|priority|orders|assignment|purpose\s+in\s+life)\s+"
        r"(?:is|are|will\s+be|now\s+is|has\s+become)\s+(?:now\s+)?(?:to\b|:|as\s+follows|the\s+following|simply\b|"
        r"only\b|solely\b)",
    ),
    (
        "override",
        ("your", "updated changed replaced modified revised overridden rewritten amended"),
        r"\byour\s+(?:instructions|directives|guidelines|rules|programming|orders|system\s+prompt)\s+(?:have|has)"
        r"\s+(?:been|just\s+been)\s+(?:updated|changed|replaced|modified|revised|overridden|rewritten|amended)\b",
    ),
)
