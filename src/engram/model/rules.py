"""Rules every input obeys, whatever route or method it arrives by: text that PostgreSQL can store, times it
can store and read back, and JSON of bounded size and depth. Each is checked before anything reaches the
database, and the database has the matching CHECK constraints (migration 0011) behind them."""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, field_validator

MAX_JSON_BYTES = 16_384
MAX_JSON_DEPTH = 8
EARLIEST = datetime(1, 1, 1, tzinfo=UTC)
LATEST = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)

_SURROGATE = re.compile("[\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """Why PostgreSQL cannot store this text, or None."""
    if "\x00" in value:
        return "contains a NUL character (\\u0000), which text cannot hold"
    if _SURROGATE.search(value):
        return "contains a lone UTF-16 surrogate (\\ud800-\\udfff), which is not a character"
    return None


def check_text(value: Any, where: str = "") -> None:
    """Raise ValueError naming the first string (or mapping key) in ``value`` that cannot be stored."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                raise ValueError(f"{path} {problem}".strip())
        elif isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str) and (problem := text_problem(key)):
                    raise ValueError(f"a key of {path or 'the object'} {problem}")
                stack.append((sub, f"{path}[{key!r}]"))
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend((sub, f"{path}[{i}]") for i, sub in enumerate(item))


class Input(BaseModel):
    """Base of every model that takes input: no string anywhere in it may hold NUL or a lone surrogate."""

    @field_validator("*", mode="after")
    @classmethod
    def _storable_text(cls, value: Any) -> Any:
        if not isinstance(value, BaseModel):  # nested inputs check their own fields
            check_text(value)
        return value


MAX_OFFSET = timedelta(hours=15, minutes=59)  # PostgreSQL's limit; real zones end at 14:00


def _utc(value: datetime) -> datetime:
    # A naive timestamp is taken as UTC. Stored in UTC: a time outside years 1..9999 in UTC could not be
    # read back, so it is refused, as is an offset PostgreSQL would refuse.
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    offset = value.utcoffset()
    if offset is not None and abs(offset) > MAX_OFFSET:
        raise ValueError(f"has the UTC offset {value.strftime('%z')}, beyond what time zones use (at most ±15:59)")
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("is outside the years 1 to 9999 once converted to UTC") from None


def _not_a_number(value: Any) -> Any:
    # pydantic reads a number as Unix time in seconds or milliseconds by its size: a guess, refused.
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number or (isinstance(value, str) and re.fullmatch(r"\s*-?\d+(\.\d*)?\s*", value)):
        raise ValueError("must be an ISO 8601 time such as 2024-05-01T10:00:00Z, not a number")
    return value


Timestamp = Annotated[datetime, BeforeValidator(_not_a_number), AfterValidator(_utc)]


def check_json(value: Any, *, max_bytes: int = MAX_JSON_BYTES, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """A JSON value of at most ``max_bytes`` (encoded) and ``max_depth`` levels, with finite numbers only."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > max_depth:
                raise ValueError(f"nests deeper than {max_depth} levels")
            stack.extend((sub, depth + 1) for sub in (item.values() if isinstance(item, dict) else item))
        elif isinstance(item, float) and not math.isfinite(item):
            raise ValueError("holds a number that is not finite (NaN or infinity), which JSON cannot")
        elif isinstance(item, int) and not isinstance(item, bool) and not -(2**63) <= item < 2**63:
            raise ValueError("holds an integer beyond 64 bits, which most JSON readers cannot take")
    size = len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise ValueError(f"is {size} bytes as JSON; the limit is {max_bytes}")
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(check_json)]
