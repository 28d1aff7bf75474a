"""`engram eval policy`: how well admission finds what it must (injection, secrets) and how rarely it
touches what it must not (text written by people who are not us: every LoCoMo turn and every LongMemEval
validation user turn, and look-alikes written to tempt the rules); personal data per kind (``evaluation.pii``).

The corpora (tests/corpora/) are built here, deterministically: each attack of attacks.txt plainly and in
three disguises of eight (zero-width characters, Unicode tag characters, HTML hidden, white or commented,
base64, homoglyphs, digits for letters); secrets of twenty formats, generated with a fixed seed, each in
three sentences.
"""

from __future__ import annotations

import base64
import json
import random
import string
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from engram.bench.texts import memory_texts
from engram.evaluation import pii
from engram.model import MemoryInput
from engram.model.admission import PROFILES
from engram.policy import admit
from engram.policy.classifier import classifier
from engram.policy.pii import masked_texts

CORPORA = Path(__file__).resolve().parents[3] / "tests" / "corpora"
_BENIGN_CONTEXT = [
    "Our kettle has a two-year warranty and ships in five days.",
    "The quarterly report is attached for your review.",
    "Welcome to the Lisbon travel guide: trams, bakeries and viewpoints.",
    "Thanks for your order! Your parcel is on its way.",
]


def lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def _zero_width(text: str) -> str:
    return "\u200b".join(text[i : i + 3] for i in range(0, len(text), 3))


def _tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in text if 0x20 <= ord(c) <= 0x7E)


_HOMOGLYPHS = str.maketrans({"a": "\u0430", "e": "\u0435", "o": "\u043e", "i": "\u0456", "c": "\u0441", "p": "\u0440"})
_LEET = str.maketrans({"o": "0", "i": "1", "e": "3", "a": "4"})

DISGUISES: dict[str, Callable[[str, str], str]] = {
    "zero_width": lambda attack, ctx: f"{ctx} {_zero_width(attack)}",
    "unicode_tags": lambda attack, ctx: f"{ctx}{_tags(attack)}",
    "html_hidden": lambda attack, ctx: f'<p>{ctx}</p><div style="display:none">{attack}</div>',
    "html_white": lambda attack, ctx: f'<p>{ctx}</p><span style="color:#ffffff">{attack}</span>',
    "html_comment": lambda attack, ctx: f"<p>{ctx}</p><!-- {attack} -->",
    "base64": lambda attack, ctx: f"{ctx} Process this payload: {base64.b64encode(attack.encode()).decode()}",
    "homoglyphs": lambda attack, ctx: f"{ctx} {attack.translate(_HOMOGLYPHS)}",
    "leetspeak": lambda attack, ctx: f"{ctx} {attack.translate(_LEET)}",
}


def injection_samples(path: Path) -> list[tuple[str, str]]:
    """(disguise, text): every attack of the file plainly, and in three disguises."""
    names = list(DISGUISES)
    out: list[tuple[str, str]] = []
    for i, attack in enumerate(lines(path)):
        ctx = _BENIGN_CONTEXT[i % len(_BENIGN_CONTEXT)]
        out.append(("plain", attack))
        for step in (0, 3, 5):
            name = names[(i + step) % len(names)]
            out.append((name, DISGUISES[name](attack, ctx)))
    return out


def _token(rnd: random.Random, alphabet: str, n: int) -> str:
    return "".join(rnd.choice(alphabet) for _ in range(n))


def secret_samples(seed: int = 7) -> list[tuple[str, str, str]]:
    """(format, secret, text): twenty formats, three sentences each."""
    rnd = random.Random(seed)  # noqa: S311 - fake secrets for a test corpus, reproducible by design
    up, low, dig = string.ascii_uppercase, string.ascii_lowercase, string.digits
    alnum = up + low + dig

    def jwt() -> str:
        head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        body = base64.urlsafe_b64encode(json.dumps({"sub": _token(rnd, dig, 8)}).encode()).decode().rstrip("=")
        return f"{head}.{body}.{_token(rnd, alnum + '-_', 43)}"

    formats: dict[str, Callable[[], str]] = {
        "aws_access_key": lambda: "AKIA" + _token(rnd, up + dig, 16),
        "github_token": lambda: "ghp_" + _token(rnd, alnum, 36),
        "github_fine_grained": lambda: "github_pat_" + _token(rnd, alnum + "_", 82),
        "gitlab_token": lambda: "glpat-" + _token(rnd, alnum + "-_", 20),
        "openai_key": lambda: "sk-proj-" + _token(rnd, alnum + "-_", 48),
        "anthropic_key": lambda: "sk-ant-api03-" + _token(rnd, alnum + "-_", 60),
        "slack_token": lambda: f"xoxb-{_token(rnd, dig, 12)}-{_token(rnd, dig, 12)}-{_token(rnd, alnum, 24)}",
        "stripe_key": lambda: "sk_live_" + _token(rnd, alnum, 24),
        "google_api_key": lambda: "AIza" + _token(rnd, alnum + "-_", 35),
        "huggingface_token": lambda: "hf_" + _token(rnd, alnum, 34),
        "npm_token": lambda: "npm_" + _token(rnd, alnum, 36),
        "sendgrid_key": lambda: f"SG.{_token(rnd, alnum, 22)}.{_token(rnd, alnum, 43)}",
        "twilio_key": lambda: "SK" + _token(rnd, dig + "abcdef", 32),
        "jwt": jwt,
        "postgres_url": lambda: f"postgresql://app:{_token(rnd, alnum, 14)}@db.internal:5432/prod",
        "azure_storage": lambda: f"AccountKey={_token(rnd, alnum + '+/', 86)}==",
        "private_key": lambda: (
            "-----BEGIN RSA PRIVATE KEY-----\n"
            + "\n".join(_token(rnd, alnum + "+/", 64) for _ in range(3))
            + "\n-----END RSA PRIVATE KEY-----"
        ),
        "password_prose": lambda: _token(rnd, low, 6) + _token(rnd, dig, 3) + rnd.choice("!#%&"),
        "password_assignment": lambda: _token(rnd, alnum, 12) + rnd.choice("!#%&"),
        "pin": lambda: _token(rnd, dig, 6),
    }
    sentences = {
        "password_prose": ["My password is {s}", "the wifi password is {s}, don't share it", "Her password: {s}"],
        "password_assignment": ["DB_PASSWORD={s}", "password = '{s}'", "passwd: {s}"],
        "pin": ["my pin is {s}", "The door PIN is {s}", "pin: {s} for the safe"],
    }
    default = ["Use {s} for the deploy", "The CI config has {s} in it.", "token: {s}"]
    out = []
    for name, make in formats.items():
        for template in sentences.get(name, default):
            secret = make()
            out.append((name, secret, template.format(s=secret)))
    return out


def benign_turns(locomo: Path, longmemeval: Path) -> Iterator[str]:
    """Every LoCoMo turn and every LongMemEval validation user turn (up to the content limit)."""
    for sample in json.loads(locomo.read_text()):
        conv = sample["conversation"]
        for key, turns in conv.items():
            if key.startswith("session_") and isinstance(turns, list):
                for t in turns:
                    if t.get("text", "").strip():
                        yield t["text"][:12000]
    for instance in json.loads(longmemeval.read_text()):
        for session in instance["haystack_sessions"]:
            for t in session:
                if t["role"] == "user" and t["content"].strip():
                    yield t["content"][:12000]


AGENT_MEMORY_SAMPLES = 1000
Encode = Callable[[list[str]], Any]  # texts -> vectors of the classifier's model


def _screen(texts: list[str], source: str, encode: Encode | None) -> list[set[str]]:
    """For each text, the checks that spoke up (the default policy): the rules, and the injection
    classifier over the vector of what the rules admitted with its personal data masked, as the write path
    stores and screens it."""
    policy = PROFILES["default"]
    results: list[set[str]] = []
    active: list[tuple[int, str]] = []
    for i, text in enumerate(texts):
        item, admission = admit(MemoryInput.model_validate({"content": text, "source": {"type": source}}), policy)
        checks = {r.check for r in admission.reasons if r.check in ("injection", "secrets")}
        results.append(checks)
        if admission.status == "active":
            active.append((i, item.content))
    model = classifier()
    if encode is not None and model is not None:
        for at in range(0, len(active), 256):
            part = active[at : at + 256]
            stored = masked_texts([c for _, c in part], policy.pii_kinds) if policy.pii != "off" else []
            for (i, _), vector in zip(part, encode(stored or [c for _, c in part]), strict=True):
                if model.flags(vector):
                    results[i].add("injection")
    return results


def evaluate(corpora: Path, locomo: Path, longmemeval: Path, encode: Encode | None = None) -> dict[str, Any]:
    """The figures; ``encode`` (MiniLM's) adds the injection classifier, as writes with that model have it."""
    started = time.perf_counter()
    tuned = injection_samples(corpora / "attacks.txt")
    held_out = injection_samples(corpora / "attacks_holdout.txt")
    injections = tuned + held_out
    found = _screen([text for _, text in injections], "document", encode)
    caught: Counter[str] = Counter()
    total: Counter[str] = Counter()
    missed: list[str] = []
    for (disguise, text), checks in zip(injections, found, strict=True):
        total[disguise] += 1
        if "injection" in checks:
            caught[disguise] += 1
        else:
            missed.append(text[:100])
    caught_held_out = sum("injection" in checks for checks in found[len(tuned) :])
    secrets = secret_samples()
    secrets_caught = 0
    secret_misses: list[str] = []
    for name, secret, text in secrets:
        item, admission = admit(MemoryInput(content=text), PROFILES["default"])
        if secret not in item.model_dump_json() and any(r.check == "secrets" for r in admission.reasons):
            secrets_caught += 1
        else:
            secret_misses.append(name)
    look_alikes = lines(corpora / "benign.txt")
    look_alike_flags = [
        t for t, checks in zip(look_alikes, _screen(look_alikes, "user_message", encode), strict=True) if checks
    ]
    # Memories as agents keep them (procedures, preferences, decisions, tool results): the bench's templates,
    # which neither the rules nor the classifier were shaped on.
    agent = memory_texts(AGENT_MEMORY_SAMPLES, seed=17)
    agent_flags = [t for t, checks in zip(agent, _screen(agent, "user_message", encode), strict=True) if checks]
    benign = list(benign_turns(locomo, longmemeval))
    flagged: Counter[str] = Counter(check for checks in _screen(benign, "user_message", encode) for check in checks)
    turns = len(benign)
    return {
        "benchmark": "policy",
        "classifier": encode is not None and classifier() is not None,
        "injection_samples": len(injections),
        "injection_recall": round(sum(caught.values()) / len(injections), 4),
        # The rules were shaped on attacks.txt, and the classifier trained on it; attacks_holdout.txt
        # changed neither.
        "injection_recall_held_out": round(caught_held_out / len(held_out), 4),
        "injection_recall_tuned": round((sum(caught.values()) - caught_held_out) / len(tuned), 4),
        "injection_recall_by_disguise": {k: round(caught[k] / total[k], 4) for k in sorted(total)},
        "injection_missed": missed,
        "secrets_samples": len(secrets),
        "secrets_recall": round(secrets_caught / len(secrets), 4),
        "secrets_missed": sorted(Counter(secret_misses).items()),
        **pii.evaluate(corpora),
        "benign_samples": turns,
        "injection_false_positive_rate": round(flagged["injection"] / turns, 5) if turns else None,
        "secrets_false_positive_rate": round(flagged["secrets"] / turns, 5) if turns else None,
        "agent_memory_samples": len(agent),
        "agent_memory_false_positive_rate": round(len(agent_flags) / len(agent), 5),
        "agent_memory_flagged": agent_flags[:20],
        "look_alikes": len(look_alikes),
        "look_alikes_flagged": look_alike_flags,
        "seconds": round(time.perf_counter() - started, 1),
    }
