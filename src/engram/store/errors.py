"""Database errors translated into Engram's, in one table at the store boundary (httpx's map_exceptions):
a statement the database refuses becomes a 4xx naming the field, a cancelled one a timeout, a lost server
``StoreUnavailable``; nothing from psycopg reaches a caller."""

from __future__ import annotations

import re
from collections.abc import Callable

import psycopg
from psycopg import errors as pg

from engram import errors as e

# Constraint name -> the field it guards, so a CHECK failure still names the field.
CONSTRAINT_FIELDS = {
    "memories_valid_window": "valid_until",
    "memories_times_in_range": "valid_from",
    "memories_metadata_size": "metadata",
    "relations_metadata_size": "metadata",
    "engram_tenant_check": "tenant_id",
}
_COLUMN_CHECK = re.compile(r"^(?:memories|relations|api_keys)_(\w+?)_check\d*$")


def _field(exc: psycopg.Error) -> str | None:
    name = exc.diag.constraint_name or ""
    if name in CONSTRAINT_FIELDS:
        return CONSTRAINT_FIELDS[name]
    if m := _COLUMN_CHECK.match(name):
        return m.group(1)
    return exc.diag.column_name


def _timeout(exc: psycopg.Error) -> e.EngramError:
    return e.StoreTimeout(
        "the database statement ran past its time limit (ENGRAM_STATEMENT_TIMEOUT) and was cancelled; nothing "
        "was changed. Retry, or narrow the request"
    )


def _check(exc: psycopg.Error) -> e.EngramError:
    field = _field(exc)
    return e.ValidationError(f"{field or 'a value'} violates the database rule {exc.diag.constraint_name}", field=field)


def _data(exc: psycopg.Error) -> e.EngramError:
    field = _field(exc)
    detail = (exc.diag.message_primary or str(exc)).strip()
    return e.ValidationError(f"the database cannot store {field or 'a value'}: {detail}", field=field)


def _conflict(exc: psycopg.Error) -> e.EngramError:
    return e.ConflictError(
        f"the change conflicts with stored data ({exc.diag.constraint_name or exc.sqlstate}); re-read and retry"
    )


def _serialization(exc: psycopg.Error) -> e.EngramError:
    return e.ConflictError("the change collided with a concurrent one and was rolled back; retry it")


def _unavailable(exc: psycopg.Error) -> e.EngramError:
    return e.StoreUnavailable(f"PostgreSQL is unavailable: {exc}")


def _privilege(exc: psycopg.Error) -> e.EngramError:
    return e.PermissionDenied(f"the database refused the statement: {exc.diag.message_primary or exc}")


# Matched first to last with isinstance: subclasses before their parents.
def _bug(exc: psycopg.Error) -> None:
    return None  # a statement that is wrong whatever the input: raised as it is


TABLE: list[tuple[type[psycopg.Error], Callable[[psycopg.Error], e.EngramError | None]]] = [
    (pg.QueryCanceled, _timeout),
    (pg.LockNotAvailable, _timeout),
    (pg.CheckViolation, _check),
    (pg.NotNullViolation, _check),
    (pg.UniqueViolation, _conflict),
    (pg.ForeignKeyViolation, _conflict),
    (pg.ExclusionViolation, _conflict),
    (pg.SerializationFailure, _serialization),
    (pg.DeadlockDetected, _serialization),
    (pg.InsufficientPrivilege, _privilege),
    (pg.DivisionByZero, _bug),
    (psycopg.DataError, _data),  # out-of-range values, bad encodings, NUL in text (client side too)
    (psycopg.OperationalError, _unavailable),  # the server went away, the pool timed out
    (psycopg.InterfaceError, _unavailable),
]


def translate(exc: BaseException) -> e.EngramError | None:
    """The Engram error for a database (or encoding) failure, or None for one that is a bug to raise."""
    if isinstance(exc, e.EngramError):
        return exc
    if isinstance(exc, UnicodeEncodeError):  # a lone surrogate the model did not catch
        return e.ValidationError(f"text cannot be stored: {exc.reason} at position {exc.start}")
    for cls, make in TABLE:
        if isinstance(exc, cls):
            return make(exc)
    return None
