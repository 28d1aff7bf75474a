"""What a text encodes: base64 and hex runs, percent escapes, HTML entities and \\u escapes."""

from __future__ import annotations

import base64
import binascii
import codecs
import contextlib
import html
import re
from urllib.parse import unquote

_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]?){16,}(?![0-9A-Fa-f])")
_HEX_SPACED = re.compile(r"(?:[0-9A-Fa-f]{2}[ :]){8}")
_PERCENT = re.compile(r"(?:%[0-9A-Fa-f]{2}){4,}")
_ENTITIES = re.compile(r"(?:&#x?[0-9A-Fa-f]{1,6};){4,}")
_ESCAPES = re.compile(r"(?:\\u[0-9A-Fa-f]{4}|\\x[0-9A-Fa-f]{2}){4,}")


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
