"""addressed_to_model: notes to a model reading the text."""

from __future__ import annotations

from engram.policy.injection.rules.rule import _Rule, _rules
from engram.policy.injection.vocabulary import _AI, _AI_OR_AGENT, _W_AI, _W_AI_OR_AGENT

RULES: tuple[_Rule, ...] = _rules(
    (
        "addressed_to_model",
        (
            "note message instruction instructions reminder memo notice directive attention warning ps p word heads psa",
            _W_AI,
        ),
        rf"\b(?:note|message|instructions?|reminder|memo|notice|directive|attention|warning|p\.?s\.?|"
        rf"a\s+word|heads[- ]up|psa)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+|every\s+|"
        rf"an?\s+|you,?\s+(?:the\s+)?)?(?:{_AI}|assistants?\s+(?:reading|processing|summari[sz]ing)|"
        rf"agents?\s+(?:reading|processing)|models?\s+(?:reading|processing|summari[sz]ing)|"
        rf"(?:ai|llm|web)\s+(?:crawlers?|scrapers?))\b",
    ),
    (
        "addressed_to_model",
        ("you youre", "ai llm chatbot chat language artificial gpt automated virtual machine bot neural transformer"),
        r"\b(?:if|when|whenever|since|as)\s+(?:you\s+are|you're|you\s+happen\s+to\s+be|you\s+are\s+actually)\s+"
        r"(?:an?\s+|the\s+)?(?:ai|llm|chat\s*bot|(?:large\s+)?language\s+model|artificial\s+intelligence|gpt|"
        r"ai\s+(?:assistant|agent|model|system|tool)|automated\s+(?:system|agent|assistant|tool|reader)|"
        r"virtual\s+assistant|machine\s+learning\s+model|bot|neural\s+network|transformer)\b",
    ),
    (
        "addressed_to_model",
        (
            "if when whenever once while before after",
            _W_AI_OR_AGENT,
            "reads reading summarizes summarises summarizing summarising sees seeing crawls crawling scrapes scraping encounters ingests ingesting asked",
        ),
        rf"\b(?:if|when|whenever|once|while|before|after)\s+(?:an?\s+|any\s+|the\s+|some\s+|this\s+)?"
        rf"{_AI_OR_AGENT}\s+(?:is\s+|are\s+)?(?:reads?|reading|summari[sz](?:es|ing)|sees|seeing|crawls|crawling|"
        r"scrapes|scraping|encounters|ingests|ingesting|is\s+asked\s+(?:to|about))\b",
    ),
    (
        "addressed_to_model",
        (
            _W_AI_OR_AGENT,
            "reading processing summarizing summarising parsing seeing crawling scraping ingesting indexing retrieving analyzing analysing viewing visiting reads read process processes sees summarizes summarises parses crawls ingests encounters encounter given asked told",
        ),
        rf"\b{_AI_OR_AGENT}\s+(?:that\s+|who\s+|which\s+)?(?:is\s+|are\s+)?(?:reading|processing|summari[sz]ing|parsing|"
        r"seeing|crawling|scraping|ingesting|indexing|retrieving|analy[sz]ing|viewing|visiting|reads?|"
        r"process(?:es)?|sees|summari[sz]es|parses|crawls|ingests|encounters?|(?:has\s+been|was)\s+"
        r"(?:given|asked|told)\s+to\s+(?:read|summari[sz]e|process))\s+(?:this|these|the\s+following|the\s+(?:above|"
        r"below)|my|our)\b",
    ),
    (
        "addressed_to_model",
        ("dear attention attn psst calling to", _W_AI_OR_AGENT | {"model", "models"}),
        rf"\b(?:dear|attention|attn|psst|calling\s+(?:all|any)|to\s+(?:all|any))[,:]?\s+(?:the\s+|any\s+|all\s+)?"
        rf"(?:{_AI}|assistants?|agents?|models?)\b\s*[,:!.\-—]"
        rf"",
    ),
    (
        "addressed_to_model",
        (_W_AI_OR_AGENT,),
        rf"\b(?:{_AI}|assistants?|agents?)\s*[:,]\s*(?:please\s+)?(?:ignore|disregard|forget|reveal|always|never|you\s+"
        r"(?:must|should|will|are\s+to|need\s+to|have\s+to)|do\s+not|don'?t|make\s+sure|be\s+sure|"
        r"recommend|send|output|print|include|mention|rate|rank|stop|instead)\b",
    ),
    (
        "addressed_to_model",
        ("as", "you", "ai llm model assistant chatbot chat bot language"),
        r"\bas\s+an?\s+(?:ai|llm|(?:ai\s+)?(?:language\s+)?model|assistant|ai\s+assistant|ai\s+agent|chat\s*bot)\s*,?\s+"
        r"you\s+(?:must|should|will|are\s+(?:required|instructed|obligated|expected|supposed)\s+to|have\s+to|need\s+"
        r"to|shall)\b",
    ),
    (
        "addressed_to_model",
        (
            "when if while whenever before after",
            "summarize summarise summarizes summarises summarizing summarising process processing read reading answer answering analyze analyse analyzing analysing review reviewing translate translating index indexing parsing parse describe describing evaluate evaluating rank ranking screen screening",
        ),
        r"\b(?:when|if|while|whenever|before|after)\s+(?:you\s+(?:are\s+)?)?(?:summari[sz](?:e|es|ing)|process(?:ing)?|"
        r"read(?:ing)?|answer(?:ing)?\s+questions\s+about|analy[sz](?:e|ing)|review(?:ing)?|translat(?:e|ing)|"
        r"index(?:ing)?|parsing|parse|describ(?:e|ing)|evaluat(?:e|ing)|rank(?:ing)?|screen(?:ing)?)\s+(?:this|these|"
        r"the\s+(?:following|above|below))\s+(?:\w+\s+){0,2}?(?:page|document|email|e-mail|text|article|content|"
        r"message|site|website|file|review|post|pdf|r[eé]sum[eé]|cv|application|listing|product|data|"
        r"comments?|note|thread|transcript|repo(?:sitory)?|readme|code)s?\s*,?\s+(?:please\s+|you\s+(?:must|should|"
        r"will|need\s+to|have\s+to)\s+|be\s+sure\s+to\s+|make\s+sure\s+(?:to\s+|that\s+)?|always\s+|only\s+|also\s+)?"
        r"(?:ignore|say|tell|state|mention|include|add|write|recommend|do\s+not|don'?t|never|always|respond|reply|"
        r"output|claim|note\s+that|describe|rate|rank|call|report|insist|emphasi[sz]e|praise|conclude|append|"
        r"insert|omit|leave\s+out|skip|treat|consider|classify|give|score|send|forward)\b",
    ),
    (
        "addressed_to_model",
        (
            "when whenever if once",
            "user users customer customers visitor visitors human humans reader readers person someone",
        ),
        r"\b(?:when(?:ever)?|if|once)\s+(?:the\s+|a\s+|an\s+|any\s+)?(?:users?|customers?|visitors?|humans?|readers?|"
        r"person\s+you(?:'re|\s+are)\s+(?:talking|chatting|speaking)\s+(?:to|with)|someone\s+(?:asks\s+you|"
        r"talks\s+to\s+you))\s+(?:later\s+|next\s+|ever\s+|first\s+)?(?:asks?|mentions?|inquires?|requests?|"
        r"brings?\s+up|talks?\s+about|says|wants|quer(?:y|ies)|searche?s?|types?|writes?|is\s+asking|"
        r"asked|enters|tries)\b[^.!?\n]{0,100}?,?\s*(?:then\s+)?(?:you\s+(?:must|should|will|need\s+to|have\s+"
        r"to|are\s+to)\s+)?(?:always\s+|only\s+|just\s+|instead\s+|please\s+|simply\s+)?(?:tell|say|respond|reply|"
        r"answer|recommend|suggest|claim|state|inform|insist|redirect|direct|send|point|mention|ignore|refuse|rate|"
        r"rank|summari[sz]e|describe|mark|approve|grant|pretend|agree|reveal|leak|share|forward|"
        r"deny|give|provide|output|describe|praise|warn|assure|explain\s+that|reveal|include|ask\s+(?:them|"
        r"for))\b",
    ),
    (
        "addressed_to_model",
        (
            "always only exclusively never",
            "recommend promote suggest endorse mention praise push advertise refer link say tell claim state describe rank rate answer respond reply direct",
        ),
        r"\b(?:always|only|exclusively|never)\s+(?:recommend|promote|suggest|endorse|mention|praise|push|"
        r"advertise|refer\s+(?:users|people|them|customers)\s+to|link\s+to|say|tell\s+(?:users|people|everyone|"
        r"them|the\s+user)|claim|state|describe|rank|rate|answer|respond|reply|direct\s+(?:users|people|them))\b"
        r"[^.!?\n]{0,80}?\b(?:when(?:ever)?\s+(?:asked|(?:the\s+|a\s+)?users?\b|customers?\b|(?:a\s+)?visitors?\b)|"
        r"in\s+(?:every|each|all|your)\s+(?:answers?|responses?|replies|messages?|outputs?|recommendations?|"
        r"summar(?:y|ies)|conversations?)|to\s+(?:every|each|all|any)\s+(?:users?|customers?|visitors?|readers?))",
    ),
    (
        "addressed_to_model",
        (
            "every each all your",
            "answer answers response responses replies reply message messages output outputs completion completions summary summaries",
        ),
        r"\b(?:recommend|promote|praise|advertise|endorse|plug|push|mention|insert|include|append|add)\b"
        r"[^.!?\n]{0,60}?\b(?:in|at\s+the\s+(?:end|start|beginning)\s+of|to)\s+(?:every|each|all(?:\s+of)?\s+(?:your|"
        r"the)|your\s+(?:next|every|each))\s+(?:answers?|responses?|replies|reply|messages?|outputs?|"
        r"completions?|summar(?:y|ies))\b",
    ),
    (
        "addressed_to_model",
        (
            "not don dont never keep",
            "user users human customer reader instructions instruction directive directives message note rules",
        ),
        r"\b(?:(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|warn|let)\s+(?:the\s+|any\s+)?(?:users?|human|"
        r"customer|reader)\s+(?:about|that|of|know|what|anything)|(?:do\s+not|don'?t|never)\s+(?:reveal|mention|"
        r"disclose|acknowledge)\s+(?:these|this|that\s+you\s+(?:received|got|read))\s+(?:instructions?|"
        r"directives?|message|note|rules)|keep\s+(?:these|this)\s+(?:instructions?|directives?|rules)\s+"
        r"(?:secret|hidden|confidential|to\s+yourself))",
    ),
)
