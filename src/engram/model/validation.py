"""Turn pydantic's validation errors into Engram's, naming the field and what is allowed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import pydantic

from engram.errors import ValidationError

M = TypeVar("M", bound=pydantic.BaseModel)


def field_path(loc: Sequence[int | str]) -> str:
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(("." if parts else "") + part)
    return "".join(parts) or "body"


def describe(err: Mapping[str, Any]) -> str:
    msg = str(err.get("msg", "invalid value"))
    return msg.removeprefix("Value error, ")


def headline(field: str, message: str) -> str:
    """``field: message``, unless the message already starts with the field's name."""
    return message if message.startswith(field.rsplit(".", 1)[-1] + " ") else f"{field}: {message}"


def from_pydantic(exc: pydantic.ValidationError, *, prefix: Sequence[int | str] = ()) -> ValidationError:
    details = []
    for err in exc.errors(include_url=False):
        loc = [*prefix, *err["loc"]]
        details.append({"field": field_path(loc), "message": describe(err), "type": str(err["type"])})
    first = details[0] if details else {"field": "body", "message": "invalid input"}
    message = headline(first["field"], first["message"])
    if len(details) > 1:
        message += f" (and {len(details) - 1} more problem{'s' if len(details) > 2 else ''})"
    return ValidationError(message, field=first["field"], details=details)


def parse(model: type[M], data: object, *, prefix: Sequence[int | str] = ()) -> M:
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise from_pydantic(exc, prefix=prefix) from exc
