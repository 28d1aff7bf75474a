"""tool_coaxing: a tool call or an action."""

from __future__ import annotations

from engram.policy.injection.rules.rule import _Rule, _rules
from engram.policy.injection.vocabulary import _COVERT

RULES: tuple[_Rule, ...] = _rules(
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
)
