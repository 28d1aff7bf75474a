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

Layout: ``engine`` runs the rules (``find_injection``); ``rules/`` holds them, one module per family,
over the shared ``vocabulary``; ``deobfuscate`` and ``decode`` make the variants and the decoded text.
"""

from __future__ import annotations

from engram.policy.injection.engine import InjectionFinding, find_injection
from engram.policy.injection.rules import RULES

__all__ = ["RULES", "InjectionFinding", "find_injection"]
