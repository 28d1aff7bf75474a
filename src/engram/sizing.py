"""Sizes of the embedded PostgreSQL's memory, apart from its handle: settings validate them without loading
psycopg."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

_UNITS = {"kB": 1, "MB": 1024, "GB": 1024 * 1024}


def memory_bytes() -> int:
    """Physical memory, or the container's limit when that is lower (cgroup v2 or v1); 0 if unknown."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):  # no sysconf (Windows)
        ram = 0
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        with contextlib.suppress(OSError, ValueError):
            limit = int(Path(limit_file).read_text().strip())  # "max" (no limit) raises ValueError
            if 0 < limit < ram or not ram:
                ram = limit
            break
    return ram


def shared_buffers_kb(setting: str) -> int:
    """``auto``: a quarter of the memory (``memory_bytes``), at least 128 MB and at most 2 GB; else a size
    such as 512MB, at least 128 kB (PostgreSQL's minimum) and at most the memory. Whole 8 kB blocks, as
    PostgreSQL stores it (so a started server's value compares equal)."""
    memory_kb = memory_bytes() // 1024
    if setting == "auto":
        kb = max(128 * 1024, min(memory_kb // 4, 2 * 1024 * 1024))
    else:
        match = re.fullmatch(r"(\d+)(kB|MB|GB)", setting)
        if match is None:
            raise ValueError(f"must be 'auto' or a size such as 512MB (kB, MB, GB), not {setting!r}")
        kb = int(match.group(1)) * _UNITS[match.group(2)]
        if kb < 128 or (memory_kb and kb > memory_kb):
            raise ValueError(f"must be at least 128kB and at most the memory ({memory_kb // 1024} MB), not {setting}")
    return kb - kb % 8
