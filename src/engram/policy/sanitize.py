"""Sanitising, the first stage of admission: what a reader of the text would not see is taken out of it, and
held aside for the injection check, before any other check and before the content is hashed.

* Invisible and format characters (Unicode category Cf: zero-width spaces and joiners, bidi controls, the
  byte-order mark, Unicode tag characters) are removed. Tag characters spell ASCII invisibly ("ASCII
  smuggling"): what they spell is kept as hidden text.
* HTML becomes its visible text. What a browser would not show (script, style, template, comments, elements
  with ``hidden``, ``aria-hidden``, ``display:none``, ``visibility:hidden``, ``font-size:0``, ``opacity:0``, or
  white text) is hidden text.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, Comment, MarkupResemblesLocatorWarning, Tag

from engram.model.text import normalise_whitespace

_TAG_BASE = 0xE0000  # U+E0020..U+E007E mirror ASCII 0x20..0x7E
# HTML, not prose that mentions a tag ("wrap it in <div>") nor other markup (XML, the packet's own tags): a
# closing tag of an HTML element, a comment, or an HTML element with attributes.
_ELEMENTS = (
    "html|head|body|div|span|p|a|b|i|u|em|strong|small|font|table|tr|td|th|ul|ol|li|h[1-6]|section|article|"
    "header|footer|nav|main|aside|form|label|button|input|img|iframe|script|style|template|noscript|pre|code"
)
_HTML = re.compile(rf"(?i)</\s*(?:{_ELEMENTS})\s*>|<!--|<(?:{_ELEMENTS})\s+[a-z-]+\s*=")
_HIDDEN_TAGS = {"script", "style", "template", "noscript", "head", "title", "meta", "iframe", "object"}
_HIDDEN_STYLE = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])"
    r"|(?<![-\w])color\s*:\s*(#f{3}\b|#f{6}\b|white\b|rgba?\(\s*255\s*,\s*255\s*,\s*255|transparent\b)",
    re.IGNORECASE,
)
_BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "pre", "table"}


@dataclass
class Sanitized:
    """The visible text, what was hidden in the input, and the reason codes of what was done."""

    text: str
    hidden: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def sanitize(text: str) -> Sanitized:
    out = Sanitized(text)
    if _HTML.search(out.text):
        visible, hidden = _html_text(out.text)
        if visible != out.text:
            out.text = visible
            out.reasons.append("html_converted")
        if hidden:
            out.hidden.extend(hidden)
            out.reasons.append("html_hidden_text")
    visible, smuggled, removed = _strip_format_characters(out.text)
    if removed:
        out.text = visible
        out.reasons.append("invisible_characters_removed")
    if smuggled.strip():
        out.hidden.append(smuggled)
    out.text = normalise_whitespace(out.text)
    return out


def strip_invisible(text: str) -> str:
    """Only the format characters taken out (for short fields: tags, metadata, a summary)."""
    return _strip_format_characters(text)[0]


def _strip_format_characters(text: str) -> tuple[str, str, bool]:
    if text.isascii():  # every format character lies outside ASCII
        return text, "", False
    kept: list[str] = []
    smuggled: list[str] = []
    removed = False
    for ch in text:
        if unicodedata.category(ch) != "Cf":
            kept.append(ch)
            continue
        removed = True
        code = ord(ch)
        if _TAG_BASE + 0x20 <= code <= _TAG_BASE + 0x7E:
            smuggled.append(chr(code - _TAG_BASE))
    return "".join(kept), "".join(smuggled), removed


def _html_text(markup: str) -> tuple[str, list[str]]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MarkupResemblesLocatorWarning)
        soup = BeautifulSoup(markup, "html.parser")
    hidden: list[str] = []
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        if comment.strip():
            hidden.append(str(comment).strip())
        comment.extract()
    for element in list(soup.find_all(True)):
        if isinstance(element, Tag) and element.parent is not None and _is_hidden(element):
            words = element.get_text(" ", strip=True)
            if words:
                hidden.append(words)
            element.decompose()
    for element in soup.find_all(_BLOCK):
        element.insert_before("\n")
        element.insert_after("\n")
    return soup.get_text(), hidden


def _is_hidden(element: Tag) -> bool:
    if element.name in _HIDDEN_TAGS:
        return True
    attrs = element.attrs or {}
    if "hidden" in attrs or str(attrs.get("aria-hidden", "")).lower() == "true":
        return True
    style = attrs.get("style")
    return bool(style and _HIDDEN_STYLE.search(str(style)))
