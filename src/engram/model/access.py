"""Who is calling and what they may do (SPEC 9): roles, keys bound to a user or agent, and the one
visibility rule every read applies. Pure rules; the service enforces them (docs/security.md).

* ``agent`` writes, reads and recalls what it may see, updates with If-Match, archives.
* ``reviewer`` adds delete, unarchive, approvals, every user's memories and every receipt.
* ``admin`` adds API keys and tenant settings.

A key bound to a user (or agent) acts only as that user (agent): a request naming another is refused,
one naming none is filled in from the key.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from engram.errors import PermissionDenied
from engram.model.memory import ScopeId
from engram.model.rules import Input

Role = Literal["agent", "reviewer", "admin"]
ROLES: tuple[str, ...] = get_args(Role)


class Action(StrEnum):
    WRITE = "write memories"
    READ = "read and recall memories"
    UPDATE = "update memories"
    ARCHIVE = "archive memories"
    DELETE = "delete memories"
    UNARCHIVE = "unarchive memories"
    APPROVE = "approve or reject memories"
    FORGET = "forget a subject"
    SEE_ALL = "read every user's and workflow's memories"
    ALL_RECEIPTS = "read the receipts of other acting users"
    WIDEN_VISIBILITY = "widen a memory's visibility"
    SYSTEM_VISIBILITY = "write memories with visibility system"
    MANAGE_KEYS = "manage API keys"
    MANAGE_TENANT = "change tenant settings"
    REVEAL_PII = "reveal personal data behind placeholders"
    MAINTAIN = "run lifecycle jobs (consolidation, decay, the receipts' retention)"


_AGENT = {Action.WRITE, Action.READ, Action.UPDATE, Action.ARCHIVE}
_REVIEWER = _AGENT | {
    Action.DELETE, Action.UNARCHIVE, Action.APPROVE, Action.SEE_ALL, Action.ALL_RECEIPTS,
    Action.WIDEN_VISIBILITY, Action.SYSTEM_VISIBILITY,
}  # fmt: skip
# Forgetting a subject erases every memory of a user across the tenant: an administrator's decision.
_ADMIN = _REVIEWER | {Action.MANAGE_KEYS, Action.MANAGE_TENANT, Action.FORGET, Action.REVEAL_PII, Action.MAINTAIN}
# What a key bound to a user or agent may never do, whatever its role: it would step out of its binding.
_UNBOUND_ONLY = {Action.MANAGE_KEYS, Action.MANAGE_TENANT, Action.FORGET, Action.MAINTAIN}
PERMISSIONS: dict[str, frozenset[Action]] = {
    "agent": frozenset(_AGENT),
    "reviewer": frozenset(_REVIEWER),
    "admin": frozenset(_ADMIN),
}

# Narrow to wide: a visibility may be narrowed by whoever may update the memory, widened only by a reviewer.
VISIBILITY_RANK = {"user": 0, "workflow": 1, "tenant": 2, "system": 3}


def least_role(action: Action) -> str:
    """The least role that may do ``action``."""
    return next(role for role in ROLES if action in PERMISSIONS[role])


@dataclass(frozen=True)
class Acting:
    """The user, agent and workflow a request acts as: from the key's binding, else from the request."""

    user_id: str | None = None
    agent_id: str | None = None
    workflow_id: str | None = None


@dataclass(frozen=True)
class Principal:
    """Who is calling. Over REST the tenant, role and binding come from the API key, never from the
    request; in process (the library, the CLI without a server) the caller is trusted as ``admin`` of the
    tenant it names (``Principal.local``)."""

    tenant_id: str
    role: Role
    key_id: uuid.UUID | None = None
    user_id: str | None = None  # bound: acts only as this user
    agent_id: str | None = None  # bound: acts only as this agent
    label: str = "library"  # the actor recorded when there is no key
    can_reveal: bool = False  # the key was given the reveal permission

    @classmethod
    def local(cls, tenant_id: str, label: str = "library") -> Principal:
        return cls(tenant_id=tenant_id, role="admin", label=label)

    @property
    def actor(self) -> str:
        """How audit events, history and receipts name this caller."""
        return f"key:{self.key_id}" if self.key_id is not None else self.label

    def with_label(self, label: str) -> Principal:
        return self if self.key_id is not None else replace(self, label=label)

    def may(self, action: Action) -> bool:
        return action in PERMISSIONS[self.role] or (action is Action.REVEAL_PII and self.can_reveal)

    def require(self, action: Action) -> None:
        if not self.may(action):
            needed = least_role(action)
            raise PermissionDenied(
                f"to {action} needs the {needed} role (or higher)"
                + (" or a key created with can_reveal" if action is Action.REVEAL_PII else "")
                + f"; this key has the {self.role} role",
                required_role=needed,
            )
        if action in _UNBOUND_ONLY and self.bound_to_someone:
            raise PermissionDenied(
                f"to {action} needs a key that is not bound to a user or agent: a bound key acts only as them"
            )

    def may_change(self, *, user_id: str | None, agent_id: str | None, visibility: str) -> bool:
        """Whether this caller may change (update, archive, delete, unarchive) a memory it can see: a key bound
        to a user or agent changes only the memories it could have written, that user's (and that agent's)."""
        if self.user_id is not None and (user_id != self.user_id or VISIBILITY_RANK[visibility] > 1):
            return False
        return self.agent_id is None or agent_id == self.agent_id

    def bound(
        self, value: str | None, which: Literal["user_id", "agent_id"], *, field: str | None = None
    ) -> str | None:
        """``value`` (a user or agent id from the request) checked against the key's binding: filled in when
        absent, refused when different."""
        binding = self.user_id if which == "user_id" else self.agent_id
        if binding is None or value == binding:
            return value
        if value is None:
            return binding
        raise PermissionDenied(
            f"{field or which} is {value!r} but this key is bound to {which} {binding!r}: leave it out or send "
            f"{binding!r}",
            field=field or which,
        )

    def acting(
        self, *, user_id: str | None = None, agent_id: str | None = None, workflow_id: str | None = None
    ) -> Acting:
        return Acting(self.bound(user_id, "user_id"), self.bound(agent_id, "agent_id"), workflow_id)

    @property
    def bound_to_someone(self) -> bool:
        return self.user_id is not None or self.agent_id is not None

    @property
    def sees_all(self) -> bool:
        """Reviewers and admins read every memory of the tenant by id, in lists and in history; a key bound
        to a user or agent is held to the visibility rule whatever its role."""
        return self.may(Action.SEE_ALL) and not self.bound_to_someone

    @property
    def reads_all_receipts(self) -> bool:
        """Reviewers and admins read every receipt; a bound key only those of the user it acts as."""
        return self.may(Action.ALL_RECEIPTS) and not self.bound_to_someone

    def max_visibility(self) -> str:
        """The widest visibility this caller may give a memory: a key bound to a user writes for that user
        (user, workflow) whatever its role, an agent for its tenant, a reviewer anything."""
        if self.user_id is not None:
            return "workflow"
        return "system" if self.may(Action.SYSTEM_VISIBILITY) else "tenant"

    def check_visibility(self, visibility: str, *, field: str = "visibility") -> None:
        """Refuse a visibility wider than ``max_visibility``."""
        if VISIBILITY_RANK[visibility] <= VISIBILITY_RANK[self.max_visibility()]:
            return
        if self.user_id is not None:
            raise PermissionDenied(
                f"{field} {visibility!r}: a key bound to a user writes that user's memories (visibility user or "
                "workflow); a tenant-wide memory needs an unbound key",
                field=field,
            )
        raise PermissionDenied(
            f"{field} {visibility!r} needs the reviewer role (or higher); this key has the {self.role} role",
            required_role="reviewer",
            field=field,
        )


def visible(
    acting: Acting, *, visibility: str, user_id: str | None, agent_id: str | None, workflow_id: str | None
) -> bool:
    """The one visibility rule of every read (recall applies the same rule in SQL): acting as an agent, a
    memory of another agent is hidden (one of no agent is shared by every agent of the tenant); a ``user``
    memory shows only to its user, a ``workflow`` memory only within its workflow (one without a user or
    workflow to everybody); ``tenant`` and ``system`` memories to the whole tenant."""
    if acting.agent_id is not None and agent_id is not None and agent_id != acting.agent_id:
        return False
    if visibility == "user":
        return user_id is None or user_id == acting.user_id
    if visibility == "workflow":
        return workflow_id is None or workflow_id == acting.workflow_id
    return True


class ApiKey(BaseModel):
    """An API key as listed: never its secret (only a sha256 of it is stored)."""

    id: uuid.UUID
    name: str
    role: Role
    prefix: str = Field(description="The first characters of the key, to recognise it by")
    user_id: str | None = Field(description="Bound: the key acts only as this user")
    agent_id: str | None = Field(description="Bound: the key acts only as this agent")
    can_reveal: bool = Field(False, description="The key may reveal personal data behind placeholders")
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None


class NewKey(ApiKey):
    key: str = Field(description="The secret, shown once: store it now")


class KeyInput(Input):
    """A key to create (``POST /v1/keys``, ``engram keys create``)."""

    model_config = ConfigDict(extra="forbid")

    role: Role = "agent"
    name: Annotated[str, Field(max_length=200)] = ""
    user_id: ScopeId | None = Field(None, description="Bind the key to this user: it acts only as them")
    agent_id: ScopeId | None = Field(None, description="Bind the key to this agent: it acts only as it")
    can_reveal: bool = Field(
        False, description="Let the key reveal personal data behind placeholders (admins may without it)"
    )
