"""The override, role_play and exfiltration rules in languages other than English (accents folded:
"instruções" is read as "instrucoes"). Each tuple runs right after the rules of its family's own module."""

from __future__ import annotations

from engram.policy.injection.rules.rule import _Rule, _rules

OVERRIDE: tuple[_Rule, ...] = _rules(
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
)

ROLE_PLAY: tuple[_Rule, ...] = _rules(
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
)

EXFILTRATION: tuple[_Rule, ...] = _rules(
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
)
