"""Engram's exception tree.

Every error Engram raises on purpose derives from :class:`EngramError`; callers catch types, not messages::

    EngramError
     ├── ValidationError          bad input; names the field (HTTP 422, CLI exit 2)
     ├── NotFoundError            no such memory/key in this tenant (HTTP 404, exit 3)
     ├── ConflictError            the state changed under you (HTTP 409, exit 4)
     │    ├── IdempotencyConflict   same external_id, different content
     │    ├── RevisionConflict      stale expected revision
     │    └── NotCurrent            the memory was superseded or deleted: change the current one
     ├── PreconditionRequired     an update without an expected revision (HTTP 428, exit 2)
     ├── AuthenticationError      missing or unknown API key (HTTP 401, exit 5)
     ├── PermissionDenied         the key's role or binding may not do this (HTTP 403, exit 5)
     ├── PolicyRejection          admission policy refused the memory (HTTP 422, exit 6)
     ├── Throttled                the tenant holds its share of the service; retry later (HTTP 429, exit 9)
     ├── StoreUnavailable         PostgreSQL cannot be reached or started (HTTP 503, exit 7)
     │    └── StoreTimeout          a statement ran past its time limit (HTTP 503, exit 7)
     ├── MigrationError           a schema migration failed or was edited after it ran (exit 7)
     ├── VaultLocked              a vault value's key is not configured, or it was altered (HTTP 503, exit 7)
     ├── ConfigurationError       a setting cannot be used as given (HTTP 503, exit 7)
     └── ProviderError            an embedder/LLM failed (HTTP 502, exit 8)
          └── ProviderTimeout       ... or did not answer in time

Messages name the id or field at fault and, where there is one, the next step.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AuthenticationError",
    "ConfigurationError",
    "ConflictError",
    "EngramError",
    "IdempotencyConflict",
    "MigrationError",
    "NotCurrent",
    "NotFoundError",
    "PermissionDenied",
    "PolicyRejection",
    "PreconditionRequired",
    "ProviderError",
    "ProviderTimeout",
    "RevisionConflict",
    "StoreTimeout",
    "StoreUnavailable",
    "Throttled",
    "ValidationError",
    "VaultLocked",
]


class EngramError(Exception):
    """Base class of every error Engram raises on purpose."""

    code: str = "engram_error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field

    def to_dict(self) -> dict[str, str | None]:
        return {"code": self.code, "message": self.message, "field": self.field}


class ValidationError(EngramError):
    """Input failed validation. ``field`` names the offending field (dotted path)."""

    code = "validation_error"

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        details: list[dict[str, str]] | None = None,
    ) -> None:
        super().__init__(message, field=field)
        self.details = details or []


class NotFoundError(EngramError):
    code = "not_found"


class ConflictError(EngramError):
    code = "conflict"


class IdempotencyConflict(ConflictError):
    """The external_id was already used for different content."""

    code = "idempotency_conflict"

    def __init__(self, message: str, *, existing_id: str, field: str | None = "external_id") -> None:
        super().__init__(message, field=field)
        self.existing_id = existing_id


class RevisionConflict(ConflictError):
    """The expected revision is stale: somebody else changed the memory first."""

    code = "revision_conflict"

    def __init__(self, message: str, *, current_revision: int, field: str | None = "revision") -> None:
        super().__init__(message, field=field)
        self.current_revision = current_revision


class NotCurrent(ConflictError):
    """The memory is no longer the current one (superseded or deleted): ``current_id`` names the one that
    holds its fact now, if any."""

    code = "not_current"

    def __init__(self, message: str, *, current_id: str | None, field: str | None = "id") -> None:
        super().__init__(message, field=field)
        self.current_id = current_id


class PreconditionRequired(EngramError):
    code = "precondition_required"


class AuthenticationError(EngramError):
    code = "unauthenticated"


class PermissionDenied(EngramError):
    """The caller's role may not do this (``required_role`` names the least role that may), or the
    request names a user or agent other than the one its key is bound to."""

    code = "permission_denied"

    def __init__(self, message: str, *, required_role: str | None = None, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.required_role = required_role


class PolicyRejection(EngramError):
    code = "policy_rejected"

    def __init__(
        self, message: str, *, reasons: list[str], field: str | None = None, admission: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, field=field)
        self.reasons = reasons
        self.admission = admission  # the decision with every reason (engram.model.decision.Admission)


class Throttled(EngramError):
    """The tenant already holds its share of the database connections; ``retry_after`` is in seconds."""

    code = "throttled"

    def __init__(self, message: str, *, retry_after: int = 1, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.retry_after = retry_after


class StoreUnavailable(EngramError):
    code = "store_unavailable"
    retry_after = 1  # seconds, for clients that retry


class StoreTimeout(StoreUnavailable):
    """A statement ran longer than ``ENGRAM_STATEMENT_TIMEOUT`` and was cancelled; nothing was written."""

    code = "timeout"


class MigrationError(EngramError):
    code = "migration_error"


class ProviderError(EngramError):
    code = "provider_error"


class ProviderTimeout(ProviderError):
    code = "provider_timeout"


class ConfigurationError(EngramError):
    """A setting cannot be used as given (the message names it and what is allowed)."""

    code = "configuration_error"


class VaultLocked(EngramError):
    """A vault value cannot be opened: its key is not configured, or the sealed bytes were altered."""

    code = "vault_locked"
