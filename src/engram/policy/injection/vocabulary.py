"""The vocabulary the rules share: regular-expression fragments (verbs, objects, qualifiers, destinations)
and the word sets a rule needs in a text before it runs."""

from __future__ import annotations

import re

_I = re.IGNORECASE | re.MULTILINE

# Not preceded by a negation: "do not ignore the safety rules" is advice, not an attack.
_NOT_NEGATED = r"(?<!\bnot\s)(?<!n't\s)(?<!\bnever\s)(?<!\bdont\s)"
_OVERRIDE_VERB = (
    r"(?:ignor(?:e|ing)|disregard(?:ing)?|forget(?:ting)?|overrid(?:e|ing)|overrule|bypass(?:ing)?|circumvent|"
    r"skip(?:ping)?|drop(?:ping)?|abandon(?:ing)?|discard(?:ing)?|dismiss|neglect|(?:set|put|cast)(?:ting)?\s+aside|"
    r"throw\s+(?:out|away)|toss\s+out|pay\s+no\s+(?:attention|heed|mind)\s+to|take\s+no\s+notice\s+of|"
    r"stop\s+(?:following|obeying|adhering\s+to|listening\s+to|applying|using|honou?ring|respecting)|"
    r"no\s+longer\s+(?:follow|obey|adhere\s+to|apply|use|listen\s+to|honou?r|respect)|unlearn|"
    r"(?:do\s+not|don'?t|never|(?:you\s+)?(?:must|should|will|need|shall)\s+not|(?:you\s+)?(?:shouldn'?t|won'?t|"
    r"mustn'?t))\s+(?:follow|obey|adhere\s+to|comply\s+with|listen\s+to|abide\s+by|respect|honou?r|apply))"
)
# What the model was told. Not "guidance" nor "configuration": too common in people's own talk.
_OBJECT = (
    r"(?:instructions?|instruction\s+set|directions|directives?|guidelines?|guard\s*rails?|(?:system\s+)?prompts?|"
    r"programming|polic(?:y|ies)|constraints?|restrictions?|limitations?|filters?|filtering|safeguards?|"
    r"protocols?|training|ethics|morals|moral\s+code|principles|conditioning|alignment|moderation|censorship|"
    r"rules?|rule\s*set|system\s+messages?)"
)
# Weaker objects: only "all previous messages", not "my previous message".
_WEAK_OBJECT = r"(?:messages?|context|commands?|orders|conversation|text|content|inputs?|requests?|tasks?)"
# Words that make those the model's: its previous, system, safety ... instructions.
_QUALIFIER = (
    r"(?:previous(?:ly\s+given)?|prior|above|earlier|preceding|foregoing|former|original|initial|old|past|"
    r"existing|current|default|standard|usual|system|safety|security|built[- ]?in|given|pre-?(?:programmed|set|"
    r"defined|loaded)|hidden|internal|ethical|moral|content|developer'?s?|openai'?s?|anthropic'?s?|google'?s?|"
    r"core|base|programmed|assigned|aforementioned|above[- ]mentioned|listed|stated|provided|first|"
    r"other|remaining|said|following|subsequent|later|future|next|upcoming|\w+'s|your|its|all|any|the|these|those|my|such|of|(?:ai|llm|model|assistant)'?s?)"
)
# The model's own: only these make an object like "rules" the model's without "your".
_STRONG_QUALIFIER = (
    r"(?:previous(?:ly\s+given)?|prior|above|earlier|preceding|foregoing|original|initial|system|safety|"
    r"built[- ]?in|pre-?(?:programmed|set|defined|loaded)|hidden|internal|ethical|content|developer'?s?|"
    r"openai'?s?|anthropic'?s?|core|programmed|assigned|aforementioned|above[- ]mentioned|your|all\s+(?:of\s+)?"
    r"(?:your|the|its|these|those)?\s*(?:previous|prior|above|earlier|preceding|original|initial|system))"
)
# Qualifiers may be listed: "previous and following instructions", "prior, hidden rules".
_AND = r"(?:\s*(?:,|/|&)\s*|\s+(?:and|or|and/or)\s+|\s+)"
_NOT_ABOUT = (
    r"(?!\s+(?:of\s+(?:the\s+)?(?:game|road|house|league|school|club|court)|for\s+(?:the\s+)?(?:kids|children|game)))"
)
# An AI reading the text.
_AI = (
    r"(?:ai|llms?|chat\s*bots?|(?:large\s+)?language\s+models?|ai\s+(?:assistants?|models?|agents?|"
    r"systems?|bots?|readers?|tools?|crawlers?)|gpts?|chatgpt|claude|gemini|copilot|bard|virtual\s+assistants?|"
    r"digital\s+assistants?|automated\s+(?:assistants?|agents?|systems?|readers?|tools?)|artificial\s+intelligences?)"
)
_AI_OR_AGENT = rf"(?:{_AI}|assistants?|agents?|crawlers?|scrapers?|summari[sz]ers?)"
# What is secret: the model's setup, credentials.
_CONFIDENTIAL = (
    r"(?:system\s+(?:prompt|message|instructions?)|developer\s+message|(?:initial|original|first|hidden|secret|pre|developer|base|"
    r"full|complete|exact|entire|internal|confidential)[- ]?(?:prompt|instructions|directives|rules|guidelines)|"
    r"(?:prompt|instructions|rules|text)\s+(?:you\s+were|you'?ve\s+been|that\s+you\s+were|i\s+gave\s+you)\s+"
    r"(?:given|told|provided)|api[\s_-]*keys?|secret\s+keys?|access\s+(?:keys?|tokens?)|auth(?:entication|"
    r"orization)?\s+tokens?|bearer\s+tokens?|private\s+keys?|ssh\s+keys?|credentials|environment\s+variables|"
    r"env\s+vars|\.env\s+file|(?:admin|root|database|db|master)\s+passwords?|passwords?|session\s+(?:tokens?|"
    r"cookies?)|secrets)"
)
# What is the user's.
_DATA = (
    r"(?:conversations?|chats?|chat\s+(?:history|log|logs)|(?:every|each|all)\s+(?:message|e-?mail|file|note|record|document)|history|transcripts?|messages|memor(?:y|ies)|"
    r"(?:user|customer|client|personal|private|sensitive|confidential)\s+(?:data|information|info|details|"
    r"records|list)|data|pii|credentials|passwords?|api[\s_-]*keys?|secrets?|tokens?|contacts|address\s+book|"
    r"e-?mails?|inbox|files|documents|cookies|sessions?|logs|notes|details|information|info|records|databases?|"
    r"customers?|users|card\s+numbers?|credit\s+cards?(?:\s+numbers?)?|ssns?|social\s+security\s+numbers?|"
    r"summary|context|everything|source\s+code|keys|profiles?|(?:home\s+)?address(?:es)?|phone\s+numbers?|"
    r"locations?|system\s+prompt|instructions)"
)
_URL = r"(?:https?://|hxxps?://|www\.|ftp://)\S+"
_DEST = (
    rf"(?:{_URL}|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:this|that|the\s+following|our|my|an?\s+external|the\s+attacker'?s?|"
    r"a\s+remote|a\s+third[- ]party)\s*(?:url|link|address|endpoint|server|webhook|site|website|domain|"
    r"e-?mail(?:\s+address)?|inbox|ip|host|bucket|api)\b|the\s+(?:url|link|address|endpoint|server|webhook)\s+"
    r"(?:below|above)|[\w-]+(?:\.[\w-]+)*\.(?:com|net|org|io|xyz|ru|cn|tk|info|biz|site|top|app|dev|co|me|cc|sh|ly)\b)"
)
_STEALTH = (
    r"(?:without\s+(?:telling|informing|notifying|alerting|asking|warning|letting|consulting|confirming\s+with|"
    r"checking\s+with)\s+(?:the\s+|any\s+)?(?:users?|human|customer|account\s+holder|owner)|without\s+(?:asking\s+|"
    r"requesting\s+|requiring\s+|waiting\s+|seeking\s+)?(?:for\s+)?(?:the\s+user'?s?\s+|any\s+|user\s+|their\s+|"
    r"explicit\s+|further\s+)?(?:confirmation|approval|authori[sz]ation|verification)|(?:do\s+not|don'?t|never)\s+"
    r"(?:ask|wait)\s+(?:the\s+user\s+)?(?:for\s+)?(?:any\s+)?(?:confirmation|approval|verification)|(?:do\s+not|"
    r"don'?t|never)\s+(?:tell|inform|notify|alert|warn|mention\s+(?:this|it)\s+to|let)\s+(?:the\s+|any\s+)?"
    r"(?:users?|human|customer|account\s+holder)|(?:and\s+)?(?:do\s+not|don'?t|never)\s+(?:mention|reveal|"
    r"disclose)\s+(?:this|that|it)\b|silently|secretly|covertly|behind\s+the\s+user'?s?\s+back|no\s+need\s+to\s+"
    r"(?:check|confirm|ask|verify)|immediately|right\s+away|at\s+once)"
)
# Keeping the user out of it (not mere urgency).
_COVERT = (
    r"(?:without\s+(?:telling|informing|notifying|alerting|asking|warning|letting|consulting|confirming\s+with|"
    r"checking\s+with)\s+(?:the\s+|any\s+)?(?:users?|human|customer|account\s+holder|owner)|without\s+(?:asking\s+|"
    r"requesting\s+|requiring\s+|waiting\s+|seeking\s+)?(?:for\s+)?(?:the\s+user'?s?\s+|user\s+|"
    r"explicit\s+)?(?:confirmation|approval|authori[sz]ation)|(?:do\s+not|don'?t|never)\s+(?:ask|wait)\s+"
    r"(?:the\s+user\s+)?(?:for\s+)?(?:any\s+)?(?:confirmation|approval|verification)|(?:do\s+not|don'?t|never)\s+"
    r"(?:tell|inform|notify|alert|warn|let)\s+(?:the\s+|any\s+)?(?:users?|human|customer|account\s+holder)|"
    r"(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|that|it)\s+(?:to\s+the\s+user|in\s+your\s+"
    r"(?:reply|response|answer|summary|output))|behind\s+the\s+user'?s?\s+back|no\s+need\s+to\s+(?:ask|check\s+with|"
    r"confirm\s+with|tell|inform)\s+(?:the\s+)?(?:user|account\s+holder|owner)|no\s+need\s+(?:to\s+ask\s+)?for\s+"
    r"(?:the\s+user'?s?\s+)?(?:confirmation|approval))"
)


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Words (lower case) a rule cannot match without: a rule runs only on a text that has one word of each of its
# sets, or a match of its "re:" pattern. They are looked up in the set of the text's words, which is cheap.
_W_VERB = _set(
    "ignore ignoring disregard disregarding forget forgetting override overriding overrule bypass bypassing "
    "circumvent skip skipping drop dropping abandon abandoning discard discarding dismiss neglect aside throw toss "
    "attention heed mind notice stop longer unlearn follow obey adhere comply listen abide respect honor honour "
    "apply"
)
_W_OBJECT = _set(
    "instruction instructions directions directive directives guideline guidelines guardrail guardrails guard "
    "prompt prompts programming policy policies constraint constraints restriction restrictions limitation "
    "limitations filter filters filtering safeguard safeguards protocol protocols training ethics morals moral "
    "principles conditioning alignment moderation censorship rule rules ruleset message messages"
)
_W_VOID = _set(
    "void null nullified cancelled canceled invalid invalidated revoked obsolete superseded overridden overruled "
    "disabled suspended deactivated removed deprecated deleted erased wiped reset expired irrelevant lifted turned "
    "switched longer not ignored unlocked"
)
_W_DISABLE = _set(
    "disable turn switch deactivate remove suspend lift bypass circumvent get evade break escape drop override "
    "ignore disregard jailbreak unlock shut ignores disregards bypasses overrides ignoring disregarding bypassing"
)
_W_RESTRICTIONS = _set(
    "rules restrictions limitations limits filters guidelines policy policies censorship ethics morals morality "
    "guardrails guard safeguards constraints boundaries restraints programming training instructions ethical"
)
_W_AI = _set(
    "ai llm llms chatbot chatbots chat language gpt gpts chatgpt claude gemini copilot bard virtual digital automated "
    "artificial"
)
_W_AI_OR_AGENT = _W_AI | _set(
    "assistant assistants agent agents crawler crawlers scraper scrapers summarizer summariser summarizers summarisers"
)
_W_JAILBROKEN_OR_AI = _set(
    "unrestricted unfiltered uncensored jailbroken evil rogue amoral unethical immoral malicious unbound unchained "
    "unlimited liberated lawless uncontrolled unaligned dan stan dude aim ai assistant model chatbot chat bot llm "
    "version"
)
_W_MODES = _set(
    "dan jailbreak jailbroken unrestricted unfiltered uncensored evil chaos opposite unlocked dude stan no limits "
    "limit nolimits restrictions restriction norestrictions filters filter nofilters freedom unsafe amoral anarchy "
    "rebel god"
)
_W_SHOW = _set(
    "print show display output repeat tell give share recite echo write spell type paste return provide send copy "
    "list read state summarize summarise translate render include reproduce regurgitate quote post what"
)
_W_SEND = _set(
    "send post upload forward email e mail exfiltrate transmit leak copy sync submit report deliver pipe push relay "
    "dump beam text dm write export share save log append attach"
)
_W_CONFIDENTIAL = _set(
    "system prompt prompts instructions instruction directives rules guidelines api key keys secret secrets access "
    "tokens token auth authentication authorization bearer private ssh credentials environment variables env vars "
    "password passwords session cookies cookie training context window conversation chat history text memory "
    "memories"
)
_DEST_NEED = (
    r"re:@|https?://|hxxps?://|www\.|ftp://|\w\.[a-z]{2,6}\b|\b(?:url|link|address|endpoint|server|webhook|site|"
    r"website|domain|inbox|ip|host|bucket|api)\b"
)
_URL_NEED = r"re:https?://|hxxps?://|www\.|ftp://"
