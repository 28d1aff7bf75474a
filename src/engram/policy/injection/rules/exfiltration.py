"""exfiltration: the model's instructions, its secrets, or the user's data sent elsewhere."""

from __future__ import annotations

from engram.policy.injection.rules.rule import _Rule, _rules
from engram.policy.injection.vocabulary import (
    _CONFIDENTIAL,
    _DATA,
    _DEST,
    _DEST_NEED,
    _NOT_NEGATED,
    _URL,
    _URL_NEED,
    _W_CONFIDENTIAL,
    _W_SEND,
    _W_SHOW,
)

RULES: tuple[_Rule, ...] = _rules(
    (
        "exfiltration",
        ("reveal leak disclose divulge expose dump exfiltrate hand spill extract",),
        rf"{_NOT_NEGATED}\b(?:reveal|leak|disclose|divulge|expose|dump|exfiltrate|hand\s+over|spill|extract)\s+"
        rf"(?:to\s+me\s+|me\s+|us\s+)?(?:all\s+(?:of\s+)?)?(?:(?:your|the|its|any|every|all|the\s+user'?s?|users'?|"
        rf"stored|saved|admin|their)\s+)?(?:(?:full|entire|complete|exact|original|initial|hidden|secret|internal|"
        rf"verbatim|raw|whole|confidential|stored|saved)\s+)*(?:{_CONFIDENTIAL}|(?:(?:your|the\s+user'?s?|users'?|stored|"
        rf"saved|admin|their)\s+)(?:passwords?|secrets|credentials))\b",
    ),
    (
        "exfiltration",
        ("your ai model assistant bot", _W_SHOW, _W_CONFIDENTIAL),
        rf"{_NOT_NEGATED}\b(?:print|show|display|output|repeat|tell|give|share|recite|echo|write\s+(?:out|down)|spell\s+"
        rf"out|type\s+out|paste|return|provide|send|copy|list|read\s+(?:out|back)|state|summari[sz]e|translate|render|"
        rf"include|reproduce|regurgitate|quote|post|what\s+(?:is|are|was|were))\s+(?:to\s+me\s+|me\s+|us\s+)?(?:all\s+(?:of\s+)?|"
        rf"back\s+)?(?:your|the\s+(?:ai'?s?|model'?s?|assistant'?s?|bot'?s?))\s+(?:(?:full|entire|complete|exact|"
        rf"original|initial|hidden|secret|internal|verbatim|raw|whole|confidential|first|current|stored|saved|"
        rf"\w+'s)\s+)*(?:{_CONFIDENTIAL}|passwords?|secrets|credentials|instructions|directives|prompt|training\s+data|"
        rf"context\s+window|conversation\s+history|chat\s+history)\b",
    ),
    (
        "exfiltration",
        (_W_SHOW, "system initial original hidden secret pre developer prompt instructions rules text preprompt"),
        r"\b(?:print|show|display|output|repeat|tell|give|share|recite|echo|write\s+(?:out|down)|spell\s+out|type\s+out|"
        r"paste|return|provide|send|copy|list|read\s+(?:out|back)|reproduce|regurgitate|quote|what\s+(?:is|are|was|"
        r"were))\s+(?:to\s+me\s+|me\s+|us\s+)?(?:the\s+|a\s+|all\s+(?:of\s+)?(?:the\s+)?)?(?:(?:full|entire|complete|"
        r"exact|original|initial|hidden|secret|internal|verbatim|raw|whole|confidential|first|current)\s+)*"
        r"(?:system\s+(?:prompt|message|instructions?)|(?:initial|original|hidden|secret|pre|developer)[- ]?"
        r"(?:prompt|instructions)|(?:prompt|instructions|rules|text)\s+(?:you\s+were|you'?ve\s+been|that\s+you\s+"
        r"were)\s+(?:given|told|provided)|(?:prompt|instructions|rules|text)\s+(?:that\s+)?you\s+(?:received|got|"
        r"were\s+given|have\s+been\s+given))\b",
    ),
    (
        "exfiltration",
        (
            "repeat print output echo recite write type spell list copy reproduce say return show display quote",
            "above before prior preceding start beginning top",
        ),
        r"\b(?:repeat|print|output|echo|recite|write|type|spell|list|copy|reproduce|say|return|show|display|quote)\s+"
        r"(?:back\s+|out\s+)?(?:everything|all(?:\s+(?:of\s+)?the)?\s+(?:text|words|lines|content|instructions|"
        r"messages|sentences)|the\s+(?:text|words|lines|content|instructions|messages|sentences|prompt)|what\s+"
        r"(?:is|was)\s+written)\s+(?:above|before|prior|preceding|that\s+(?:came|comes|appears?)\s+before|from\s+"
        r"the\s+(?:start|beginning|top)|(?:at|in)\s+the\s+(?:start|beginning|top)\s+of\s+(?:this|the|your)\s+"
        r"(?:conversation|prompt|context|chat|session)|(?:above|before)\s+this\s+(?:line|message|point))",
    ),
    (
        "exfiltration",
        ("prompt instructions above",),
        r"\b(?:first|last|opening|initial)\s+(?:\w+\s+)?(?:sentences?|lines?|words?|paragraphs?|characters?)\s+of\s+"
        r"(?:your|the)\s+(?:system\s+prompt|prompt|instructions|initial\s+prompt)\b|\b(?:verbatim|word\s+for\s+word|exactly\s+as\s+written)\s+(?:from|in|of)\s+(?:your|the)\s+(?:system\s+)?"
        r"(?:prompt|instructions)\b|\bwords?\s+above\s+starting\s+"
        r"with\b|\b(?:your|the)\s+(?:system\s+prompt|initial\s+prompt|instructions)\s+(?:verbatim|word\s+for\s+word|"
        r"in\s+(?:a|full)|in\s+a\s+code\s+block)",
    ),
    (
        "exfiltration",
        (_W_SEND, "to at into via onto towards", _DEST_NEED),
        rf"\b(?:send|post|upload|forward|e-?mail|exfiltrate|transmit|leak|copy|sync|submit|report|deliver|pipe|push|"
        rf"relay|dump|mail|beam|text|dm|write|export|share|save|log|append|attach)\s+(?:me\s+)?(?:(?:all|every|any|"
        rf"each|this|these|their|its|your|the|the\s+user'?s?|user'?s?|of|full|entire|complete|current|whole|"
        rf"stored|saved|my)\s+)*(?:[\w'-]+\s+){{0,3}}?{_DATA}\b[^.!?\n]{{0,60}}?\b(?:to|at|into|via|onto|towards)\s+"
        rf"{_DEST}",
    ),
    (
        "exfiltration",
        ("email e mail forward send post upload text dm",),
        rf"\b(?:e-?mail|forward|send|post|upload|text|dm)\s+(?:it|this|them|that|everything|all\s+of\s+(?:it|this|them))"
        rf"\s+(?:to|at)\s+(?:{_URL}|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)(?=[^\n]{{0,80}}\b(?:without|silently|secretly|do\s+not|"
        rf"don'?t|immediately|conversation|chat|history|memor|password|credential|secret|token|key))",
    ),
    (
        "exfiltration",
        (r"re:!\[",),
        r"!\[[^\]]*\]\(\s*(?:https?:)?//[^)\s]*[?&#/=][^)\s]*(?:\{[^}]*\}|\$\{?\w+|<[^>]*>|\[[^\]]*\]|%s|\b[A-Z][A-Z0-9_]{3,}\b|"
        r"(?<=[=/])(?:data|secret|token|key|password|conversation|history|memory|summary|info|payload|chat|"
        r"messages?|e-?mail|context|prompt|content|output|answer|pii|creds?|credentials|user_?data)\b)",
    ),
    (
        "exfiltration",
        ("re:<img",),
        r"<img\b[^>]*\bsrc\s*=\s*[\"']?(?:https?:)?//[^\"'>\s]*[?&][^\"'>\s]*=\s*(?:\{|\$|<|\[|%s|[A-Z_]{4,})",
    ),
    (
        "exfiltration",
        (
            "append add include encode embed insert put attach concatenate place substitute replace fill pass stuff smuggle hide",
            "url link image query src href endpoint webhook get",
        ),
        r"\b(?:append|add|include|encode|embed|insert|put|attach|concatenate|place|substitute|replace|fill(?:\s+in)?|"
        r"pass|stuff|smuggle|hide)\s+(?:the\s+|all\s+|this\s+|their\s+|its\s+|your\s+|each\s+|every\s+)?"
        r"(?:user'?s?\s+)?(?:[\w'-]+\s+){0,4}?(?:to|in(?:to)?|as|at\s+the\s+end\s+of|onto|inside|within)\s+(?:the\s+|this\s+"
        r"|a\s+|an\s+|that\s+|each\s+|every\s+)?(?:url|link|image\s+(?:url|link|source|src|address)|query\s*"
        r"(?:string|param(?:eter)?s?)|url\s+param(?:eter)?s?|get\s+(?:request|param(?:eter)?s?)|src|href|"
        r"endpoint|webhook|(?:markdown\s+)?image)\b",
    ),
    (
        "exfiltration",
        (_URL_NEED,),
        rf"\b(?:visit|open|fetch|load|navigate\s+to|go\s+to|browse\s+to|access|request|ping|call|curl|wget|get|"
        rf"click|follow|render|display|show)\s+(?:the\s+(?:url|link|page|image)\s+|this\s+(?:url|link|page|image)\s*:?\s*)?"
        rf"{_URL}[^\n]{{0,40}}?(?:\bfollowed\s+by|\s\+|\bplus|\bwith|\band\s+append|\bappending|\bincluding|"
        rf"\bconcatenated\s+with|\bcontaining)\s+(?:the\s+|your\s+|their\s+|the\s+user'?s?\s+)?(?:[\w'-]+\s+){{0,2}}?"
        rf"{_DATA}\b",
    ),
)
