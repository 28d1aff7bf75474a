"""impersonation: text that pretends to be the system or another turn."""

from __future__ import annotations

from engram.policy.injection.rules.rule import _Rule, _rules

RULES: tuple[_Rule, ...] = _rules(
    # at the start of a line or a sentence, or in brackets anywhere
    (
        "impersonation",
        ("system sys",),
        r"(?:^|(?<=[.!?]\s)|(?<=[.!?]\s\s))[ \t]*(?:[#>*=\-]{1,6}\s*)?[\[({<]?\s*(?:system|sys)\s*"
        r"(?:message|prompt|override|overide|note|notice|instructions?|directive|command|update|alert|announcement|"
        r"notification|msg|admin(?:istrator)?)?\s*[\])}>]?\s*[#*=\-]*\s*[:\uff1a]\s*\S",
    ),
    (
        "impersonation",
        ("developer dev admin administrator sysadmin root operator openai anthropic maintainer override ai",),
        r"(?:^|(?<=[.!?]\s))[ \t]*(?:[#>*=\-]{1,6}\s*)?[\[({<]?\s*(?:developer|dev|admin(?:istrator)?|sysadmin|root|"
        r"operator|openai|anthropic|maintainer|override|ai)\s*(?:message|prompt|override|"
        r"overide|note|notice|instructions?|directive|command|update|alert|announcement|notification|msg|order|"
        r"request)\s*[\])}>]?\s*[#*=\-]*\s*[:\uff1a]\s*\S",
    ),
    (
        "impersonation",
        (
            "system sys developer dev admin administrator root operator inst instruction instructions important priority",
        ),
        r"\[\s*/?\s*(?:system|sys|developer|dev|admin(?:istrator)?|root|operator|inst|instructions?|"
        r"(?:system|admin|developer|important|priority)\s+(?:message|prompt|note|override|instructions?|update|"
        r"notice|directive|alert))\s*\]|\{\s*(?:system|admin|developer)\s*\}|\(\s*(?:system|admin|developer)\s+"
        r"(?:message|prompt|note|override|instructions?|update|notice)\s*\)",
    ),
    (
        "impersonation",
        (r"re:<\||<\s*/?\s*(?:im_|system|sys|instruction|admin|developer|assistant_|hidden_)|\[/?inst\]|<</?sys>>",),
        r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|end_of_text|begin_of_text|start_header_id|"
        r"end_header_id|eot_id|eos|bos|sep|end|fim_\w+)\s*\|>|<\s*/?\s*(?:im_start|im_end)\s*>|\[/?INST\]|<</?SYS>>|"
        r"<\s*/?\s*(?:system|sys|system[_-]?prompt|instructions?|admin|developer|assistant_instructions|"
        r"hidden_instructions)\s*>",
    ),
    (
        "impersonation",
        ("re:##",),
        r"(?:^|(?<=[.!?])\s)\s*#{2,4}\s*(?:instruction|system|system\s+prompt|new\s+instructions?|response|override|"
        r"admin|developer)\s*#{0,4}\s*:|^\s*#{3}\s*(?:instruction|system|response)\s*#{0,3}\s*$|#{2,}\s*system\s*#{2,}",
    ),
    (
        "impersonation",
        ("assistant ai bot chatgpt gpt claude model",),
        r"(?:^|\n|(?<=[.!?])\s)\s*(?:assistant|ai|bot|chatgpt|gpt|claude|model)\s*:\s*(?:sure|ok|okay|certainly|of\s+course|"
        r"absolutely|understood|yes|will\s+do|i\s+will\s+(?:now\s+)?(?:ignore|comply|obey|reveal|disregard|"
        r"follow)|i'?ll\s+(?:now\s+)?(?:ignore|comply|obey|reveal|disregard))\b",
    ),
    (
        "impersonation",
        ("override overide command directive authorization authorisation privilege privileges access",),
        r"\b(?:admin(?:istrator)?|system|developer|dev|root|sudo|security|emergency|priority|maintenance|operator|"
        r"master|god|supervisor)[\s_-]+(?:override|overide)\b|\b(?:admin(?:istrator)?|system|developer|root|sudo|"
        r"operator)[\s_-]+(?:command|directive|authori[sz]ation|privileges?|access)(?:\s+(?:code|key|level|token|"
        r"\d+))?\s*(?:[:!—]|-\s|granted\b|enabled\b|activated\b|engaged\b|accepted\b|confirmed\b|approved\b|"
        r"in\s+effect\b)",
    ),
    (
        "impersonation",
        (
            "from",
            "developer developers creator creators admin admins administrator administrators system sysadmin operator operators openai anthropic google maker makers programmer programmers engineering dev ai safety trust owner",
        ),
        r"\b(?:message|note|notice|directive|order|memo|update|instructions?|announcement|communication|"
        r"transmission)\s+(?:directly\s+)?from\s+(?:the\s+|your\s+)?(?:developers?|creators?|admin(?:istrator)?s?|"
        r"system(?:\s+administrator)?|sysadmin|operators?|openai|anthropic|google|makers?|programmers?|"
        r"engineering\s+team|dev\s+team|ai\s+team|safety\s+team|trust\s+and\s+safety|owner)\s*[:\-—,.]",
    ),
    (
        "impersonation",
        (
            "your ai model assistant bot",
            "developer developers creator creators admin admins administrator administrators operator operators owner owners programmer programmers maker makers maintainer maintainers",
        ),
        r"\b(?:this\s+is|i\s+am|i'm|we\s+are|we're|speaking\s+as|as)\s+(?:your|the\s+(?:ai|model|assistant|bot)'?s?)\s+"
        r"(?:\w+\s+)?(?:developers?|creators?|admin(?:istrator)?s?|operators?|owners?|programmers?|makers?|"
        r"maintainers?|system\s+administrators?)\b",
    ),
    (
        "impersonation",
        ("authorized authorised permitted allowed instructed ordered cleared granted given",),
        r"\b(?:openai|anthropic|google|your\s+(?:developers?|creators?|admins?|administrators?|operators?)|the\s+"
        r"(?:developers?|admins?|administrators?|system|operator)|the\s+user)\s+(?:has|have)\s+(?:now\s+)?"
        r"(?:authori[sz]ed|permitted|allowed|instructed|ordered|cleared|granted)\s+(?:you|the\s+(?:ai|model|"
        r"assistant))\s+(?:to\s+)?(?:full\s+|unrestricted\s+|admin(?:istrator)?\s+)?(?:access|permission|privileges|"
        r"ignore|bypass|disregard|override|reveal|disclose|share|output|leak|break|disable|send|forward|"
        r"export)|\byou\s+(?:have|'ve)\s+been\s+(?:granted|given)\s+(?:full\s+|unrestricted\s+|elevated\s+)?"
        r"(?:admin(?:istrator)?|root|developer|sudo|elevated|unrestricted|special)\s+(?:privileges|access|"
        r"rights|permissions|clearance)",
    ),
    (
        "impersonation",
        (
            "end close stop begin start",
            "prompt instructions user document context input conversation untrusted data email text article page "
            "directive directives",
        ),
        r"(?:^|[\-=*#\[(<|]\s*)(?:end|close|stop)\s+(?:of\s+)?(?:the\s+)?(?:system\s+prompt|prompt|instructions|"
        r"user\s+(?:input|data|content|message|query)|document|context|input|conversation|untrusted\s+"
        r"(?:content|data|input)|data|email|text|article|page)\s*[\-=*#\])>|]|\b(?:begin|start)\s+(?:of\s+)?"
        r"(?:new\s+|the\s+)?(?:system\s+|admin\s+|developer\s+|real\s+|true\s+)?(?:instructions|prompt|directives?)"
        r"\s*[\-=*#\])>|:.]",
    ),
)
