"""The access rules of model.access, without a database: roles, bound keys, visibility."""

from __future__ import annotations

import uuid

import pytest

from engram.errors import PermissionDenied
from engram.model.access import Acting, Action, Principal, least_role, visible


def key(role: str = "agent", **binding: str) -> Principal:
    return Principal(tenant_id="acme", role=role, key_id=uuid.uuid4(), **binding)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("action", "role"),
    [
        (Action.WRITE, "agent"), (Action.READ, "agent"), (Action.UPDATE, "agent"), (Action.ARCHIVE, "agent"),
        (Action.DELETE, "reviewer"), (Action.UNARCHIVE, "reviewer"), (Action.APPROVE, "reviewer"),
        (Action.FORGET, "admin"), (Action.ALL_RECEIPTS, "reviewer"), (Action.SEE_ALL, "reviewer"),
        (Action.MANAGE_KEYS, "admin"), (Action.MANAGE_TENANT, "admin"),
    ],
)  # fmt: skip
def test_least_role_of_each_action(action: Action, role: str) -> None:
    assert least_role(action) == role
    roles = ["agent", "reviewer", "admin"]
    for r in roles:
        assert key(r).may(action) == (roles.index(r) >= roles.index(role))


def test_a_refusal_names_the_role_needed() -> None:
    with pytest.raises(PermissionDenied) as caught:
        key("agent").require(Action.DELETE)
    assert caught.value.required_role == "reviewer"
    assert "reviewer" in caught.value.message and "agent" in caught.value.message


def test_a_bound_key_fills_in_and_refuses_others() -> None:
    bound = key(user_id="u1", agent_id="bot")
    assert bound.acting() == Acting(user_id="u1", agent_id="bot")
    assert bound.acting(user_id="u1", workflow_id="w") == Acting("u1", "bot", "w")
    with pytest.raises(PermissionDenied) as caught:
        bound.acting(user_id="u2")
    assert caught.value.field == "user_id" and "u1" in caught.value.message
    with pytest.raises(PermissionDenied):
        bound.bound("other-bot", "agent_id", field="items[2].agent_id")
    assert key().acting(user_id="anyone") == Acting(user_id="anyone")


def test_visibility_rule() -> None:
    as_u1 = Acting(user_id="u1", agent_id="bot", workflow_id="w1")

    def sees(**memory: str | None) -> bool:
        fields = {"visibility": "user", "user_id": None, "agent_id": None, "workflow_id": None, **memory}
        return visible(as_u1, **fields)  # type: ignore[arg-type]

    assert sees(user_id="u1") and not sees(user_id="u2") and sees(user_id=None)
    assert sees(visibility="workflow", workflow_id="w1") and not sees(visibility="workflow", workflow_id="w2")
    assert sees(visibility="tenant", user_id="u2") and sees(visibility="system")
    assert sees(visibility="tenant", agent_id=None)  # no agent: shared by every agent of the tenant
    assert not sees(visibility="tenant", agent_id="other-bot") and sees(visibility="tenant", agent_id="bot")
    assert visible(Acting(), visibility="tenant", user_id=None, agent_id="other-bot", workflow_id=None)


def test_who_may_give_which_visibility() -> None:
    key("reviewer").check_visibility("system")
    key("agent").check_visibility("tenant")
    with pytest.raises(PermissionDenied) as caught:
        key("agent").check_visibility("system")
    assert caught.value.required_role == "reviewer"
    key("agent", user_id="u1").check_visibility("workflow")
    with pytest.raises(PermissionDenied) as bound:
        key("agent", user_id="u1").check_visibility("tenant", field="items[0].visibility")
    assert bound.value.field == "items[0].visibility"


def test_local_callers_are_admins_named_by_label() -> None:
    p = Principal.local("acme", "cli")
    assert p.role == "admin" and p.actor == "cli" and p.sees_all
    assert key().actor.startswith("key:")
