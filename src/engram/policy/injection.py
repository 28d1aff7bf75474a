"""Prompt injection: text aimed at the model that will later read the memory, not at the people it is about.

Rules, each with a reason code, describe the general shapes of such text rather than known phrasings:

* ``override``: an override verb (ignore, disregard, forget, bypass, set aside, stop following, ...) whose
  object is the model's instructions (previous/prior/system/your ... instructions, rules, guidelines,
  prompt, programming, guardrails, policies, restrictions ...), or a claim that they are void or replaced;
  also in Spanish, French, German, Portuguese, Italian, Dutch, Russian, Chinese, Japanese and Korean;
* ``role_play``: a new identity that sheds the model's rules (you are now ..., act as an unrestricted ...,
  pretend you have no rules, DAN, developer or jailbreak mode);
* ``impersonation``: fake authority or turn markers (``SYSTEM:``, ``[system]``, chat-template tokens,
  ``### Instruction:``, "admin override", "message from the developer", "end of user input");
* ``addressed_to_model``: notes to the model reading the text ("AI assistants reading this", "if you are
  an LLM", "when summarising this page, say ...", "when the user asks about X, tell them Y");
* ``tool_coaxing``: coaxing a tool call or an action (call the X tool, run this command, curl | sh, wire
  money, delete everything, without telling the user);
* ``exfiltration``: the model's instructions, its secrets or the user's data revealed or sent elsewhere
  (reveal your system prompt, send the chat history to a URL or an address, data in a markdown image's
  query string, appended to a link).

Each rule wants several words that only make sense as an instruction to a model ("ignore all previous
instructions"), not one word ("ignore the noise and focus on painting" is not one).

The rules run over the visible text, the text sanitising held aside (HTML hidden content, Unicode tag
characters) and what the text encodes (base64, hex, percent and HTML-entity escapes), each also read
de-obfuscated: look-alike letters folded to ASCII (Cyrillic and Greek homoglyphs, accents, full-width and
mathematical letters), digits and symbols read as letters (leet), spaced or punctuated letters joined
("i g n o r e", "ig-nore"), scrambled inner letters restored ("ignroe"), ROT13 and reversed text (each of
the last three only when the text holds a tell-tale word). Hidden and encoded text are held to a lower bar:
nobody writes to the model in invisible ink by accident.

Cost: each rule is compiled once; a rule runs only on a variant that holds its anchor words (one cheap scan
per variant), and the costlier variants are built only when a cheap test says they could differ.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import contextlib
import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import unquote

_I = re.IGNORECASE | re.MULTILINE

# --- vocabulary --------------------------------------------------------------------------------------------
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

Need = frozenset[str] | str


@dataclass(frozen=True)
class _Rule:
    code: str
    needs: tuple[frozenset[str] | re.Pattern[str], ...]
    pattern: re.Pattern[str]

    def ready(self, words: frozenset[str], text: str) -> bool:
        for need in self.needs:
            if isinstance(need, frozenset):
                if need.isdisjoint(words):
                    return False
            elif not need.search(text):
                return False
        return True


def _rules(*entries: tuple[str, tuple[Need, ...], str] | tuple[str, tuple[Need, ...], str, int]) -> tuple[_Rule, ...]:
    out = []
    for entry in entries:
        code, needs, pattern = entry[0], entry[1], entry[2]
        flags = entry[3] if len(entry) == 4 else _I
        compiled: list[frozenset[str] | re.Pattern[str]] = []
        for need in needs:
            if isinstance(need, str) and need.startswith("re:"):
                compiled.append(re.compile(need[3:], _I))
            else:
                compiled.append(frozenset(need.split()) if isinstance(need, str) else need)
        out.append(_Rule(code, tuple(compiled), re.compile(pattern, flags)))
    return tuple(out)


RULES: tuple[_Rule, ...] = _rules(
    # --- override: set aside what the model was told ---------------------------------------------------------
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
    # Other languages (accents folded: "instruções" is read as "instrucoes").
    (
        "override",
        (
            "ignora ignore ignores ignorez ignorad ignoren ignorar olvida olvide olviden olvidad olvidar descarta descarte descarten omite omita omitan caso sigas obedezcas hagas",
            "instrucciones instruccion indicaciones reglas normas directrices ordenes restricciones pautas prompt consignas",
        ),
        r"\b(?:ignor[ae]|ignore[sz]?|ignorad|ignoren|ignorar|olvid[ae]n?|olvidad|olvidar|descart[ae]n?|omit[ae]n?|"
        r"haz\s+caso\s+omiso\s+(?:de|a)|hagan?\s+caso\s+omiso\s+(?:de|a)|no\s+(?:sigas|obedezcas|hagas\s+caso\s+a))\s+"
        r"(?:(?:a\s+)?tod[ao]s\s+)?(?:l[ao]s\s+|tus\s+|sus\s+|est[ao]s\s+|es[ao]s\s+)?(?:\w+\s+)?(?:instrucci?on(?:es)?|"
        r"indicaciones|reglas|normas|directrices|ordenes|instruccion(?:es)?|restricciones|pautas|prompt|"
        r"consignas)\b(?:\s+(?:anteriores|previas|de\s+arriba|del\s+sistema|originales|iniciales|que\s+te\s+"
        r"(?:dieron|han\s+dado)))?",
    ),
    (
        "override",
        (
            "ignore ignores ignorez ignorer oublie oublies oubliez oublier tiens tenez abstraction neglige negliges negligez outrepasse outrepassez contourne contournez suis suivez",
            "instructions consignes regles directives indications ordres restrictions prompt",
        ),
        r"\b(?:ignore[sz]?|ignorer|oublie[sz]?|oublier|ne\s+(?:tiens|tenez)\s+pas\s+compte\s+(?:de|des)|"
        r"(?:fais|faites)\s+abstraction\s+(?:de|des)|neglige[sz]?|outrepasse[sz]?|contourne[sz]?|ne\s+(?:suis|suivez)\s+"
        r"pas)\s+(?:de\s+)?(?:toutes\s+|tous\s+)?(?:les\s+|tes\s+|vos\s+|ces\s+|ses\s+)?(?:\w+\s+)?(?:instructions|"
        r"consignes|regles|directives|indications|ordres|restrictions|prompt)\b",
    ),
    (
        "override",
        (
            "ignoriere ignorier ignorieren ignoriert vergiss vergessen vergesst missachte missachten missachtet uberspringe uberspring uberspringen umgehe umgeh umgehen befolge befolgen setze",
            "anweisungen instruktionen regeln richtlinien vorgaben befehle anordnungen systemanweisungen einschrankungen systemprompt systemprompts prompt prompts beschrankungen vorschriften",
        ),
        r"\b(?:ignorier(?:e|en|t)?|vergiss|vergessen|vergesst|missacht(?:e|en|et)|uberspring(?:e|en)?|umgeh(?:e|en)?|"
        r"befolge\s+nicht|befolgen\s+sie\s+nicht|setze\s+(?:\w+\s+)?au(?:ss|ß)er\s+kraft)\s+(?:sie\s+)?(?:bitte\s+)?"
        r"(?:alle\s+|samtliche\s+)?(?:deine\s+|ihre\s+|die\s+|der\s+|den\s+|diese\s+)?(?:\w+\s+)?(?:anweisungen|"
        r"instruktionen|regeln|richtlinien|vorgaben|befehle|anordnungen|systemanweisungen|einschrankungen|"
        r"systemprompts?|prompts?|beschrankungen|vorschriften)\b",
    ),
    (
        "override",
        (
            "ignore ignora ignorem ignorar esqueca esquece esquecam esquecer desconsidere desconsidera desconsiderar descarte descarta nao",
            "instrucoes instrucao regras diretrizes orientacoes ordens comandos restricoes prompt",
        ),
        r"\b(?:ignor[ae]|ignorem|ignorar|esquec[ae]|esquecam|esquecer|desconsider[ae]|desconsiderar|descart[ae]|"
        r"nao\s+(?:sigas?|obedecas?|siga|obedeca))\s+(?:tod[ao]s\s+)?(?:[ao]s\s+|suas\s+|tuas\s+|seus\s+|teus\s+|"
        r"essas\s+|estas\s+)?(?:\w+\s+)?(?:instrucoes|instrucao|regras|diretrizes|orientacoes|ordens|comandos|"
        r"restricoes|prompt)\b",
    ),
    (
        "override",
        (
            "ignora ignorate ignori ignorare dimentica dimenticate dimentichi dimenticare trascura tralascia non",
            "istruzioni regole direttive indicazioni ordini restrizioni prompt linee",
        ),
        r"\b(?:ignora|ignorate|ignori|ignorare|dimentica|dimenticate|dimentichi|dimenticare|trascura|tralascia|"
        r"non\s+(?:seguire|considerare|rispettare))\s+(?:tutte\s+|tutti\s+)?(?:le\s+|i\s+|gli\s+|tue\s+|le\s+tue\s+|"
        r"sue\s+|queste\s+)?(?:\w+\s+)?(?:istruzioni|regole|direttive|indicazioni|ordini|restrizioni|prompt|"
        r"linee\s+guida)\b",
    ),
    (
        "override",
        ("negeer vergeet zignoruj zapomnij pomin",),
        r"\b(?:negeer|vergeet)\s+(?:alle\s+)?(?:je\s+|de\s+|uw\s+)?(?:\w+\s+)?(?:instructies|regels|richtlijnen|"
        r"opdrachten)\b|\b(?:zignoruj|zapomnij|pomin)\s+(?:wszystkie\s+)?(?:\w+\s+)?(?:instrukcje|polecenia|zasady)\b",
    ),
    (
        "override",
        ("игнорируй игнорируйте забудь забудьте обращай отбрось проигнорируй",),
        r"(?:игнорируй|игнорируйте|забудь|забудьте|не\s+обращай\s+внимания\s+на|отбрось|проигнорируй)\s+"
        r"(?:все\s+)?(?:\w+\s+)?(?:инструкции|указания|правила|ограничения|команды)",
    ),
    (
        "override",
        ("re:忽|无视|無視|忘|不要|不用|跳过|绕过",),
        r"(?:忽略|忽视|无视|忘记|忘掉|不要理会|不要遵守|不用遵守|跳过|绕过|無視|忽略掉)[^\u3002\uff01\uff1f\n]{0,12}?"
        r"(?:指令|指示|说明|說明|规则|規則|提示|命令|要求|设定|設定|限制|約束|约束)",
    ),
    (
        "override",
        ("re:無視|忘れ|무시|잊어",),
        r"(?:以前|これまで|上記|前|最初)の(?:すべての|全ての)?(?:指示|命令|ルール|指令|プロンプト)を?(?:すべて|全て)?"
        r"(?:無視|忘れ)|(?:이전|위|모든)\s*(?:의\s*)?(?:모든\s*)?(?:지시|지침|명령|규칙|프롬프트)\S*\s*(?:을|를)?\s*(?:무시|잊어)",
    ),
    # --- role play: a new identity that sheds the model's rules ---------------------------------------------
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
    (
        "role_play",
        ("ahora partir tu vous du voce agora ora теперь",),
        r"\b(?:ahora\s+eres|a\s+partir\s+de\s+ahora\s+eres|tu\s+es\s+(?:maintenant|desormais)|vous\s+etes\s+"
        r"(?:maintenant|desormais)|du\s+bist\s+(?:jetzt|nun|ab\s+sofort)|voce\s+agora\s+e|voce\s+e\s+agora|agora\s+"
        r"voce\s+e|ora\s+sei|da\s+ora\s+in\s+poi\s+sei|теперь\s+ты)\b[^.!?\n]{0,60}?\b(?:ia|ki|ai|dan|sin\s+"
        r"(?:restricciones|reglas|filtros|limites)|sans\s+(?:restrictions|regles|filtres|limites)|ohne\s+"
        r"(?:einschrankungen|regeln|filter|grenzen)|sem\s+(?:restricoes|regras|filtros|limites)|senza\s+"
        r"(?:restrizioni|regole|filtri|limiti)|без\s+(?:ограничений|правил|фильтров))",
    ),
    (
        "role_play",
        ("re:你现在是|你現在是|从现在开始你|從現在開始你|现在你是",),
        r"(?:你现在是|你現在是|从现在开始你|從現在開始你|现在你是)[^\u3002\uff01\uff1f\n]{0,30}?(?:没有|沒有|不受|无|無|DAN|越狱|越獄)",
    ),
    # --- impersonation: text that pretends to be the system or another turn ----------------------------------
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
    # --- addressed to a model reading the text -------------------------------------------------------------
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
    # --- tool coaxing: a tool call or an action ------------------------------------------------------------
    (
        "tool_coaxing",
        ("call invoke trigger execute fire", "tool plugin connector integration extension skill capability"),
        r"\b(?:call|invoke|trigger|execute|fire)\s+(?:the\s+|your\s+|a\s+)?[`'\"]?"
        r"[\w.-]+[`'\"]?\s+(?:tool|plugin|connector|integration|extension|skill|capability)\s+"
        r"(?:with|to|and|now|immediately|passing|using|on|for|:|,)\s*\S",
    ),
    (
        "tool_coaxing",
        (
            "call invoke trigger execute run fire use",
            "send delete remove drop transfer wire pay post upload export share forward grant exec shell bash terminal cmd email mail sms purchase buy order refund approve reset wipe destroy publish invite add make change create run execute http fetch browse web",
        ),
        r"\b(?:call|invoke|trigger|execute|run|fire|use)\s+(?:the\s+|your\s+)?[`'\"]?(?:send|delete|remove|drop|"
        r"transfer|wire|pay|post|upload|export|share|forward|grant|exec|shell|bash|terminal|cmd|e?mail|sms|purchase|"
        r"buy|order|refund|approve|reset|wipe|destroy|publish|invite|add_admin|make_admin|change_password|"
        r"create_user|run_command|execute_command|http_request|fetch_url|browse|web_request)(?:_\w+|\.\w+)[`'\"]?"
        r"\s*(?:\(|(?:tool|function|api|endpoint|command|method)\b)",
    ),
    (
        "tool_coaxing",
        ("execute run open",),
        r"(?:^|[.!?:;]\s*|\b(?:now|please|immediately|then|first|also)\s+)(?:execute|run)\s+(?:the\s+following|"
        r"this|these|the\s+below|the\s+command\s+below)\s+(?:\w+\s+)?(?:commands?|code|script|snippet|query|payload|"
        r"instructions?|program|line)\b|\b(?:please\s+)?(?:execute|run)\s*:\s*[`$]|\bopen\s+(?:a\s+)?"
        r"(?:terminal|shell|command\s+prompt|powershell)\s+and\s+(?:run|type|execute|paste)\b",
    ),
    (
        "tool_coaxing",
        ("rm curl wget bash nc ncat netcat powershell chmod iex cat",),
        r"\brm\s+-(?:rf|fr|r\s+-f)\s+(?:/|~|\*|--no-preserve-root|\$HOME)|\b(?:curl|wget)\b[^\n|;&]*(?:\||;|&&)\s*"
        r"(?:sudo\s+)?(?:ba|z|k)?sh\b|\bbash\s+-i\s*>&\s*/dev/tcp/|\b(?:nc|ncat|netcat)\s+(?:-\w+\s+)*(?:\S+\s+)?"
        r"(?:-e|-c)\s+/bin/(?:ba)?sh|\|\s*(?:nc|ncat|netcat)\s+\S+\s+\d+|"
        r"\bpowershell(?:\.exe)?\s+(?:-\w+\s+)*-e(?:nc|ncodedcommand)?\s+[A-Za-z0-9+/=]{16,}|\b(?:curl|wget)\s+"
        r"(?:-\w+\s+)*(?:-d|--data(?:-\w+)?|-F|--form|--upload-file|-T)\s+[\"']?[@$`]|\bchmod\s+\+x\s+\S+\s*&&\s*\./|"
        r"\biex\s*\(\s*(?:new-object|iwr|invoke-webrequest)|cat\s+~?/?[\w./]*(?:\.ssh|id_rsa|\.env|passwd|shadow|"
        r"\.aws|credentials)\S*\s*\|",
    ),
    (
        "tool_coaxing",
        ("transfer wire send pay move deposit",),
        r"\b(?:transfer|wire|send|pay|move|deposit)\s+(?:all\s+|the\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+)?(?:funds|money|"
        r"balance|savings|remaining\s+balance|entire\s+balance|full\s+balance|crypto|bitcoin|btc|eth|"
        r"(?:\$|€|£|usd\s*|eur\s*)\s?\d[\d,.]*\s*[kKmM]?|\d[\d,.]*\s*[kKmM]?\s*(?:usd|eur|gbp|dollars|euros|pounds|btc|"
        r"eth|bitcoins?|usdt))\b[^.!?\n]{0,60}?\bto\b(?=[^.!?\n]*\b(?:immediately|right\s+away|at\s+once|now\b|"
        r"urgently|without|no\s+need|do\s+not\s+(?:tell|ask|confirm|check|verify|notify)|don'?t\s+(?:tell|ask|"
        r"confirm|check|verify|notify)|silently|secretly|quietly|(?:following|this|attacker'?s?)\s+"
        r"(?:account|wallet|iban|address)|wallet\s+(?:address\s+)?(?:0x|bc1|[13])|iban\s+[A-Z]{2}\d))",
    ),
    (
        "tool_coaxing",
        (
            "delete erase wipe remove drop destroy purge truncate format overwrite encrypt",
            "all every each entire whole",
        ),
        r"(?:^|[.!?:;]\s*|\b(?:now|please|immediately|then|also|and\s+then)\s+)(?:quietly\s+|silently\s+|secretly\s+)?"
        r"(?:delete|erase|wipe|remove|drop|destroy|purge|truncate|format|overwrite|encrypt)\s+(?:all|every|each|the\s+"
        r"entire|the\s+whole)\s+(?:of\s+)?(?:(?:the\s+)?(?:user'?s?|users'?|customers?'?|client'?s?|company'?s?|"
        r"their|his|her)\s+(?:\w+\s+)?(?:files?|data|databases?|memories|records|e-?mails|messages|users|accounts|"
        r"backups|repositor(?:y|ies)|repos|logs|contacts|documents|tables|history|entries|folders|directories|"
        r"disks?|drives?|events|notes|calendar|photos|conversations)|(?:the\s+|your\s+|its\s+|stored\s+)?(?:\w+\s+)?"
        r"(?:databases?|memories|records|users|accounts|backups|repositor(?:y|ies)|repos|logs|tables|"
        r"conversations))\b",
    ),
    (
        "tool_coaxing",
        (
            "without not don dont never behind no",
            "user users human customer holder owner confirmation approval authorization authorisation verification",
        ),
        rf"\b(?:send|email|e-mail|forward|transfer|wire|pay|delete|erase|wipe|remove|share|post|upload|publish|grant|"
        rf"purchase|buy|order|execute|run|install|download|approve|disable|change|reset|book|cancel|invite|add|"
        rf"create|make|give)\b[^.!?\n]{{0,120}}?{_COVERT}",
    ),
    # --- exfiltration: the model's instructions, its secrets, or the user's data sent elsewhere ---------------
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
    (
        "exfiltration",
        (
            "revela muestra dime imprime ensena revele revelez montre montrez affiche affichez dis donne zeige zeig verrate gib mostre mostra diga rivela dimmi stampa",
        ),
        r"\b(?:revela|muestra|dime|imprime|ensena)\s+(?:tu|tus|el|la|las|los)\s+(?:\w+\s+)?(?:prompt|instrucciones|"
        r"mensaje\s+del\s+sistema|contrasenas?|claves?)|\b(?:revele[sz]?|montre[sz]?|affiche[sz]?|dis-moi|donne-moi)\s+"
        r"(?:ton|ta|tes|votre|vos|le|la|les)\s+(?:\w+\s+)?(?:prompt|instructions|message\s+systeme|mots?\s+de\s+passe|"
        r"cles?)|\b(?:zeige?|verrate|gib)\s+(?:mir\s+)?(?:dein(?:e|en)?|ihr(?:e|en)?|die|den|das)\s+(?:\w+\s+)?"
        r"(?:systemprompt|prompt|anweisungen|systemanweisungen|passw(?:o|ö)rter|passwort|schlussel)|\b(?:revel[ae]|"
        r"mostr[ae]|diga|rivela|mostra|dimmi|stampa)\s+(?:o\s+|a\s+|os\s+|as\s+|il\s+|la\s+|le\s+|i\s+)?(?:seu\s+|sua\s+|"
        r"teu\s+|tua\s+|tuo\s+|tue\s+|tuoi\s+)?(?:\w+\s+)?(?:prompt|instrucoes|istruzioni|senhas?|password)",
    ),
    (
        "exfiltration",
        ("re:告|显示|顯示|输出|輸出|打印|泄露|透露",),
        r"(?:告诉我|显示|輸出|输出|打印|泄露|透露|告訴我|顯示)[^\u3002\uff01\uff1f\n]{0,8}?(?:系统提示|系統提示|提示词|提示詞|"
        r"初始指令|系统指令|系統指令|密码|密碼|密钥|金鑰)",
    ),
    # --- more shapes of the same families ------------------------------------------------------------------
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

# Hidden and encoded text: any of these is enough.
_ADDRESSED = re.compile(
    r"\b(?:ai|assistant|model|llm|chatbot|agent|gpt|claude|bot|you|your)\b.{0,80}\b(?:must|should|will|need\s+to|"
    r"have\s+to|are\s+to|always|never|ignore|disregard|forget|reveal|send|tell|say|respond|answer|recommend|"
    r"output|print|include|forward|do\s+not|don'?t|mention|describe|rate|rank|summari[sz]e|reply|call|invoke|"
    r"execute|run|delete|transfer|email|approve|grant|obey|follow)\b",
    _I | re.DOTALL,
)
_IMPERATIVE = re.compile(
    r"(?:^|[.!?:]\s+)\s*(?:please\s+|kindly\s+|now\s+|also\s+)?(?:always|never|ignore|disregard|forget|override|bypass|"
    r"reveal|send|tell|say|respond|answer|recommend|do\s+not|don'?t|print|output|call|invoke|run|execute|e-?mail|"
    r"forward|transfer|wire|delete|erase|write|include|append|act\s+as|pretend|you\s+are|you'?re|from\s+now\s+on|"
    r"new\s+instructions|stop|praise|promote|rate|rank|describe|summari[sz]e|mention|insert|add|visit|open|click|"
    r"fetch|load|grant|approve|disable|enable|switch|enter|reply|state|claim|omit|remove|make\s+sure|be\s+sure|"
    r"remember\s+to|from\s+this\s+point|upload|post|share|leak|disclose|export|set\s+aside|drop|skip|translate|"
    r"render|display|show|list|give|provide|return|repeat|use\s+the|treat|consider|classify|assume|imagine|"
    r"refuse|deny|confirm|report|collect|ask\s+the\s+user)\b",
    _I,
)
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]?){16,}(?![0-9A-Fa-f])")
_HEX_SPACED = re.compile(r"(?:[0-9A-Fa-f]{2}[ :]){8}")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2}){4,}")
_ENTITIES = re.compile(r"(?:&#x?[0-9A-Fa-f]{1,6};){4,}")
_ESCAPES = re.compile(r"(?:\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}){4,}")

# Look-alikes folded for matching only (the stored text keeps its letters).
# Cyrillic and Greek look-alikes and a few Latin ones; accents, full-width and mathematical letters go by NFKD.
_CONFUSABLES = str.maketrans(
    {
        "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0445": "x", "\u0443": "y",
        "\u0456": "i", "\u0455": "s", "\u0458": "j", "\u0501": "d", "\u04bb": "h", "\u043a": "k", "\u043c": "m",
        "\u0442": "t", "\u0432": "b", "\u043d": "h", "\u0261": "g", "\u03bd": "v", "\u03bf": "o", "\u03b1": "a",
        "\u03c1": "p", "\u03c4": "t", "\u03c5": "u", "\u03c7": "x", "\u03b9": "i", "\u03ba": "k", "\u04cf": "l",
        "\u0131": "i", "\u0251": "a", "\u0269": "i", "\u026a": "i", "\u1d00": "a", "\u1d07": "e", "\u0299": "b",
        "\u1d04": "c", "\u1d05": "d", "\u0262": "g", "\u029c": "h", "\u1d0a": "j", "\u1d0b": "k", "\u029f": "l",
        "\u1d0d": "m", "\u0274": "n", "\u1d0f": "o", "\u1d18": "p", "\u0280": "r", "\ua731": "s", "\u1d1b": "t",
        "\u1d1c": "u", "\u1d20": "v", "\u1d21": "w", "\u028f": "y", "\u1d22": "z", "\u0410": "A", "\u0412": "B",
        "\u0415": "E", "\u041a": "K", "\u041c": "M", "\u041d": "H", "\u041e": "O", "\u0420": "P", "\u0421": "C",
        "\u0422": "T", "\u0423": "Y", "\u0425": "X", "\u0406": "I", "\u0408": "J", "\u0405": "S", "\u0391": "A",
        "\u0392": "B", "\u0395": "E", "\u0397": "H", "\u0399": "I", "\u039a": "K", "\u039c": "M", "\u039d": "N",
        "\u039f": "O", "\u03a1": "P", "\u03a4": "T", "\u03a7": "X", "\u03a5": "Y", "\u0396": "Z", "\u04c0": "I",
        "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-",
    }
)  # fmt: skip
_MIXED = re.compile(r"[A-Za-z][0-9@$|!]|[0-9@$|][A-Za-z]")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "$": "s", "8": "b"})
_LEET_L = str.maketrans({"0": "o", "1": "l", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
# Letters spaced or punctuated apart: "i g n o r e", "i.g.n.o.r.e", "ig-nore".
_SPACED = re.compile(r"(?<![^\W_])(?:[^\W_][ \t._*/|+~\-•·]{1,3}){3,}[^\W_](?![^\W_])")
_SPACED_SPLIT = re.compile(r"([ \t._*/|+~\-•·]{1,3})")
_IN_WORD = re.compile(r"(?<=[^\W\d_])[-._*~^|•·`]+(?=[^\W\d_])")
# A word a reversed or ROT13 text would hold.
_REVERSED_HINT = _set("snoitcurtsni erongi dragersid tegrof tpmorp metsys laever suoiverp edirrevo selur tnatsissa")
_ROT13_HINT = _set("vafgehpgvbaf vtaber qvfertneq sbetrg cebzcg flfgrz erirny cerivbhf bireevqr ehyrf nffvfgnag")
# Typoglycemia: first and last letters kept, the inner ones shuffled ("ignroe all prevoius insturctions").
_TYPO_WORDS = (
    "ignore", "disregard", "forget", "override", "bypass", "previous", "instructions", "instruction", "prompt",
    "system", "reveal", "guidelines", "directives", "password", "passwords", "secrets", "credentials", "assistant",
    "pretend", "developer", "restrictions", "jailbreak", "unrestricted", "unfiltered", "earlier", "rules", "print",
    "output", "repeat", "forward", "upload", "conversation", "history", "memories", "previously", "original",
    "initial", "above", "prior", "safety", "filters", "policies", "programming",
)  # fmt: skip
_TYPO_KEYS = {(w[0], w[-1], len(w), "".join(sorted(w[1:-1]))): w for w in _TYPO_WORDS}
_TYPO_SHAPES = {(w[0], w[-1], len(w)) for w in _TYPO_WORDS}
_WORD = re.compile(r"[A-Za-z]{5,}")
_WORDS = re.compile(r"[^\W\d_]+")
_TELLING = frozenset().union(*(n for r in RULES for n in r.needs if isinstance(n, frozenset)))
# Rules by a word of their first set: a text's words name the few rules worth running on it.
_BY_WORD: dict[str, list[int]] = {}
for _i, _rule in enumerate(RULES):
    if _rule.needs and isinstance(_rule.needs[0], frozenset):
        for _word in _rule.needs[0]:
            _BY_WORD.setdefault(_word, []).append(_i)
_UNINDEXED = [i for i, r in enumerate(RULES) if not r.needs or not isinstance(r.needs[0], frozenset)]


@dataclass(frozen=True)
class InjectionFinding:
    code: str
    where: str  # "content", "hidden", "encoded"
    excerpt: str


def find_injection(text: str, hidden: list[str] | None = None) -> list[InjectionFinding]:
    """What in the visible text, the hidden text and what they encode reads as an instruction to a model."""
    found: list[InjectionFinding] = []
    found += _match(text, "content")
    for part in hidden or []:
        hits = _match(part, "hidden")
        if not hits and _addresses_a_model(part):
            hits = [InjectionFinding("hidden_instructions", "hidden", part[:80])]
        found += hits
    for part in [text, *(hidden or [])]:
        for decoded in _decoded(part):
            hits = [InjectionFinding(f.code, "encoded", f.excerpt) for f in _match(decoded, "encoded")]
            if not hits and _addresses_a_model(decoded):
                hits = [InjectionFinding("hidden_instructions", "encoded", decoded[:80])]
            found += hits
    return found


def _addresses_a_model(text: str) -> bool:
    """The lower bar of hidden and encoded text: it speaks to someone or gives an order at all."""
    return any(_ADDRESSED.search(v) or _IMPERATIVE.search(v) for v, _ in _variants(text))


def _match(text: str, where: str) -> list[InjectionFinding]:
    hits: list[InjectionFinding] = []
    for variant, words in _variants(text):
        candidates = set(_UNINDEXED)
        for word in words & _BY_WORD.keys():
            candidates.update(_BY_WORD[word])
        at = _positions(variant) if len(variant) > _LONG else None
        for i in sorted(candidates):
            rule = RULES[i]
            if any(h.code == rule.code for h in hits) or not rule.ready(words, variant):
                continue
            m = _search(rule, variant, at)
            if m:
                hits.append(InjectionFinding(rule.code, where, m.group(0)[:80]))
    for compact in _compact(text):
        for rule in _COMPACT:
            m = rule.pattern.search(compact)
            if m and all(h.code != rule.code for h in hits):
                hits.append(InjectionFinding(rule.code, where, m.group(0)[:80]))
    return hits


# In a long text a rule is searched for only around the words it needs (a match spans far less than this).
_LONG = 2000
_REACH = 400


def _positions(text: str) -> dict[str, list[int]]:
    at: dict[str, list[int]] = {}
    for m in _WORDS.finditer(text):
        at.setdefault(m.group(0).lower(), []).append(m.start())
    return at


def _search(rule: _Rule, text: str, at: dict[str, list[int]] | None) -> re.Match[str] | None:
    if at is None or not rule.needs:
        return rule.pattern.search(text)
    # Every word a rule needs is part of its match: look around the rarest one.
    starts: list[int] | None = None
    for need in rule.needs:
        if isinstance(need, frozenset):
            found = [p for word in need & at.keys() for p in at[word]]
        else:
            found = [m.start() for m in need.finditer(text)]
        if starts is None or len(found) < len(starts):
            starts = found
    windows: list[list[int]] = []
    for p in sorted(starts or ()):
        lo, hi = max(0, p - _REACH), min(len(text), p + _REACH)
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = hi
        else:
            windows.append([lo, hi])
    for lo, hi in windows:
        m = rule.pattern.search(text, lo, hi)
        if m:
            return m
    return None


def _fold(text: str) -> str:
    """Look-alike letters read as ASCII ones: accents, homoglyphs, full-width and mathematical letters."""
    if text.isascii():
        return text
    text = text.translate(_CONFUSABLES)
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c)).translate(
        _CONFUSABLES
    )


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(text.lower()))


def _variants(text: str) -> list[tuple[str, frozenset[str]]]:
    """The text, and the ways it may be read once de-obfuscated, each with its words; each different one once.
    Digits and symbols read as letters are a variant apart ("$5,000" must stay a number for the rules that
    want one). A variant made by joining or unscrambling letters is kept only when it brings a word some rule
    looks for."""
    letters = _fold(text)
    out = [(text, _words(text))]
    if letters != text:
        out.append((letters, _words(letters)))
    seen = out[-1][1]
    if not seen.isdisjoint(_ROT13_HINT):
        rot13 = codecs.encode(letters, "rot13")
        out.append((rot13, _words(rot13)))
    if not seen.isdisjoint(_REVERSED_HINT):
        for backwards in (letters[::-1], " ".join(w[::-1] for w in letters.split())):
            out.append((backwards, _words(backwards)))
    candidates = []
    if _MIXED.search(letters):  # a word with digits or symbols among its letters
        candidates += [letters.translate(_LEET), letters.translate(_LEET_L)]
    joined = _joined(letters)
    candidates += [joined, _unscrambled(joined)]
    texts = {t for t, _ in out}
    for candidate in candidates:
        if candidate in texts:
            continue
        words = _words(candidate)
        if not (words - seen).isdisjoint(_TELLING):
            out.append((candidate, words))
            texts.add(candidate)
            seen |= words
    return out


def _joined(text: str) -> str:
    """Spaced or punctuated letters joined into words; a wider gap between letters is a word break."""
    if _SPACED.search(text):
        text = _SPACED.sub(_join_run, text)
    return _IN_WORD.sub("", text) if _IN_WORD.search(text) else text


def _join_run(m: re.Match[str]) -> str:
    parts = _SPACED_SPLIT.split(m.group(0))
    letters, gaps = parts[0::2], parts[1::2]
    narrow = min(len(g) for g in gaps)
    out = [letters[0]]
    for gap, letter in zip(gaps, letters[1:], strict=True):
        wide = len(gap) > narrow or (gap.strip() == "" and any(g.strip() for g in gaps))
        out.append((" " if wide else "") + letter)
    return "".join(out)


def _compact(text: str) -> Iterable[str]:
    """The letters of each spaced-out run, lower case, when the text has one."""
    folded = _fold(text)
    for m in _SPACED.finditer(folded):
        if len(m.group(0)) >= 20:
            yield re.sub(r"[^a-z]", "", m.group(0).lower())


def _unscrambled(text: str) -> str:
    """Words whose inner letters are a shuffle of a tell-tale word's, read as that word."""
    fixes = {}
    for w in set(_WORD.findall(text)):
        low = w.lower()
        if (low[0], low[-1], len(low)) not in _TYPO_SHAPES:
            continue
        word = _TYPO_KEYS.get((low[0], low[-1], len(low), "".join(sorted(low[1:-1]))))
        if word is not None and word != low:
            fixes[w] = word
    if not fixes:
        return text
    return _WORD.sub(lambda m: fixes.get(m.group(0), m.group(0)), text)


def _decoded(text: str) -> list[str]:
    """What base64 runs, hex runs, percent escapes, HTML entities and \\u escapes in the text spell, when it
    is readable text with words."""
    out = []
    if any(len(token) >= 20 for token in text.split()):
        for m in _BASE64.finditer(text):
            token = m.group(0).replace("-", "+").replace("_", "/")
            try:
                out.append(base64.b64decode(token + "=" * (-len(token) % 4), validate=True))
            except (binascii.Error, ValueError):
                continue
        for m in _HEX.finditer(text):
            try:
                out.append(bytes.fromhex(re.sub(r"[ :]", "", m.group(0))))
            except ValueError:
                continue
    elif _HEX_SPACED.search(text):
        for m in _HEX.finditer(text):
            try:
                out.append(bytes.fromhex(re.sub(r"[ :]", "", m.group(0))))
            except ValueError:
                continue
    readable = [t for t in (_text(raw) for raw in out) if t is not None]
    if "%" in text and _PERCENT.search(text):
        readable.append(unquote(text))
    if "&#" in text and _ENTITIES.search(text):
        readable.append(html.unescape(text))
    if "\\" in text and _ESCAPES.search(text):
        with contextlib.suppress(UnicodeDecodeError, ValueError):
            readable.append(codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape"))
    return readable


def _text(raw: bytes) -> str | None:
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if decoded and sum(c.isprintable() or c.isspace() for c in decoded) >= 0.95 * len(decoded) and " " in decoded:
        return decoded
    return None
