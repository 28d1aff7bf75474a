"""Secrets and credentials in text: detect-secrets' plugins, line by line through ``analyze_line``, and rules
for formats they do not know (newer API keys, connection strings with a password, passwords said in prose,
private key blocks). A finding is a span of the text, so that it can be redacted whole."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import BasePlugin

# Not secrets (an address is PII, the PII check's business), or too noisy in prose.
_SKIPPED_PLUGINS = {"Public IP (ipv4)", "Base64 High Entropy String", "Hex High Entropy String"}

# Formats detect-secrets 1.5 does not know, and ones whose plugin reports only a fragment of the token.
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("private_key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z0-9 ]*-----|$)"),
        ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
        ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
        ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"),
        ("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
        ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]+"),
        ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("google_oauth_token", r"\bya29\.[0-9A-Za-z_-]{20,}"),
        ("aws_access_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
        ("aws_secret_key", r"(?i)aws.{0,20}?(?:secret|key).{0,20}?[=:\s\"']+[A-Za-z0-9/+]{40}\b"),
        ("stripe_key", r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}"),
        ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}"),
        ("npm_token", r"\bnpm_[A-Za-z0-9]{36}"),
        ("pypi_token", r"\bpypi-[A-Za-z0-9_-]{50,}"),
        ("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"),
        ("digitalocean_token", r"\bdo[pro]_v1_[a-f0-9]{64}"),
        ("shopify_token", r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
        ("twilio_key", r"\bSK[0-9a-fA-F]{32}\b"),
        ("telegram_token", r"\b\d{8,10}:AA[0-9A-Za-z_-]{33}\b"),
        ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        ("azure_connection_string", r"(?i)(?:AccountKey|SharedAccessKey|SharedAccessSignature)=[^;\s]{16,}"),
        ("credentials_in_url", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:[^\s:/@]+@[^\s/]+"),
        ("bearer_token", r"(?i)\bbearer\s+[A-Za-z0-9_\-.=]{20,}"),
    )
)
# "my password is hunter2", "api_key: 3f9a...", "PIN 4821": a word naming a credential, then its value.
_SAID = re.compile(
    r"(?i)(?<![A-Za-z])(?P<what>pass(?:word|wd|phrase|code)?|pwd|pin|secret(?:[ _-]?key)?|api[ _-]?key|access[ _-]?key"
    r"|auth[ _-]?token|access[ _-]?token|client[ _-]?secret|private[ _-]?key|token)\b"
    r"(?:\s+(?:for|to|of|on)\s+[\w.@-]+)?"
    r"(?:\s+(?:is|was|will\s+be|is\s+now|now\s+is|set\s+to)\s+|\s*(?:=|:|->)\s*)[\"'`]?(?P<value>[^\s\"'`,;]{4,})"
)
_WORD = re.compile(r"^[A-Za-z]+[.!?]?$")


@dataclass(frozen=True)
class SecretFinding:
    kind: str
    start: int
    end: int


def find_secrets(text: str) -> list[SecretFinding]:
    """The secrets in ``text``, as non-overlapping spans (the longest where two overlap)."""
    found = [*_rule_findings(text), *_said_findings(text), *_plugin_findings(text)]
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    merged: list[SecretFinding] = []
    for f in found:
        if merged and f.start < merged[-1].end:
            if f.end > merged[-1].end:
                last = merged[-1]
                merged[-1] = SecretFinding(last.kind, last.start, f.end)
            continue
        merged.append(f)
    return merged


def without_secrets(value: Any) -> Any:
    """Text, or JSON, with every secret in its strings redacted (a recall's query and filters: what a receipt
    keeps)."""
    if isinstance(value, str):
        return redact(value, find_secrets(value))
    if isinstance(value, dict):
        return {k: without_secrets(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_secrets(v) for v in value]
    return value


def redact(text: str, findings: list[SecretFinding]) -> str:
    out: list[str] = []
    at = 0
    for f in findings:
        out.append(text[at : f.start])
        out.append(f"[REDACTED:{f.kind}]")
        at = f.end
    out.append(text[at:])
    return "".join(out)


def _rule_findings(text: str) -> Iterator[SecretFinding]:
    for name, pattern in _RULES:
        for m in pattern.finditer(text):
            yield SecretFinding(name, m.start(), m.end())


def _said_findings(text: str) -> Iterator[SecretFinding]:
    for m in _SAID.finditer(text):
        value = m.group("value").rstrip(".):")
        # "the password is correct", "my pin was wrong": a plain word is a description, not a password;
        # a value with a digit, a symbol or mixed case is one.
        if _WORD.match(value) and (value.islower() or value.istitle() or value.isupper()):
            continue
        if value.lower() in _NOT_VALUES or _NOT_A_SECRET.match(value):
            continue
        yield SecretFinding("password" if m.group("what").lower().startswith("pass") else "credential",
                            m.start("value"), m.start("value") + len(value))  # fmt: skip


# A price, a slug of words, code: what follows "token:" or "password is" in prose that holds no secret.
_NOT_A_SECRET = re.compile(r"^[$€£¥]\d|^[a-z]+(?:-[a-z]+)+$|.*[(){}\\]|^\[REDACTED")
_NOT_VALUES = {"required", "optional", "n/a", "none", "null", "empty", "unknown", "redacted", "[redacted]"}


# What a line must hold for detect-secrets' plugins to find anything: a long token with a digit or a symbol
# in it, or a word that names a credential. Lines of prose skip the plugins.
_CANDIDATE = re.compile(
    r"[A-Za-z0-9_+/=.-]*[0-9+/=_-][A-Za-z0-9_+/=.-]*[A-Za-z][A-Za-z0-9_+/=.-]{8,}|[A-Za-z][A-Za-z0-9_+/=.-]*[0-9][A-Za-z0-9_+/=.-]{8,}"
    r"|(?i:pass|pwd|secret|key|token|auth|cred|bearer|api)"
)


def _plugin_findings(text: str) -> Iterator[SecretFinding]:
    offset = 0
    for line in text.split("\n"):
        if line.strip() and _CANDIDATE.search(line):
            for plugin in _plugins():
                for secret in plugin.analyze_line(filename="memory", line=line, line_number=1):
                    value = secret.secret_value
                    if not value:
                        continue
                    at = line.find(value)
                    if at < 0:
                        continue
                    start, end = _token_around(line, at, at + len(value))
                    yield SecretFinding(_kind(secret.type), offset + start, offset + end)
        offset += len(line) + 1


def _token_around(line: str, start: int, end: int) -> tuple[int, int]:
    """A plugin may report a fragment (``ghp`` of a GitHub token): the whole token it stands in."""
    stop = " \t\"'`,;<>()[]{}"
    while start > 0 and line[start - 1] not in stop and line[start - 1] not in "=:":
        start -= 1
    while end < len(line) and line[end] not in stop:
        end += 1
    return start, end


def _kind(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", secret_type.lower()).strip("_")


@cache
def _plugins() -> tuple[BasePlugin, ...]:
    plugins: dict[str, type[BasePlugin]] = dict(get_mapping_from_secret_type_to_class())
    return tuple(cls() for name, cls in plugins.items() if name not in _SKIPPED_PLUGINS)
