"""`engram policy show` and `set`, in process against a test database."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from engram.cli.main import app
from tests.conftest import service_url

runner = CliRunner()


def env(database_url: str) -> dict[str, str]:
    return {"DATABASE_URL": service_url(database_url), "ENGRAM_OWNER_DATABASE_URL": database_url}


def test_show_prints_the_defaults_and_set_changes_fields(database_url: str) -> None:
    shown = runner.invoke(app, ["policy", "show", "-t", "acme"], env=env(database_url))
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["secrets"] == "redact"
    changed = runner.invoke(
        app, ["policy", "set", "-t", "acme", "secrets=reject", "min_semantic_confidence=0.8",
              "approval_categories=medical_details,bank_details"], env=env(database_url),
    )  # fmt: skip
    assert changed.exit_code == 0, changed.output
    now = json.loads(runner.invoke(app, ["policy", "show", "-t", "acme"], env=env(database_url)).stdout)
    assert (now["secrets"], now["min_semantic_confidence"]) == ("reject", 0.8)
    assert now["approval_categories"] == ["medical_details", "bank_details"]


def test_a_bad_field_or_value_exits_2_naming_it(database_url: str) -> None:
    bad = runner.invoke(app, ["policy", "set", "-t", "acme", "secrets=shred"], env=env(database_url))
    assert bad.exit_code == 2 and "secrets" in bad.stderr
    unknown = runner.invoke(app, ["policy", "set", "-t", "acme", "colour=blue"], env=env(database_url))
    assert unknown.exit_code == 2 and "colour" in unknown.stderr
    malformed = runner.invoke(app, ["policy", "set", "-t", "acme", "secrets"], env=env(database_url))
    assert malformed.exit_code == 2 and "FIELD=VALUE" in malformed.stderr


def test_vault_keys_are_made_and_values_revealed_and_rotated(database_url: str) -> None:
    from tests.conftest import TEST_VAULT_KEYS

    made = runner.invoke(app, ["vault", "new-key", "--id", "k2"])
    assert made.exit_code == 0, made.output
    new_key = made.stdout.strip()
    assert new_key.startswith("k2:") and len(new_key) == 3 + 44
    assert runner.invoke(app, ["vault", "new-key", "--id", "bad id"]).exit_code == 2
    old = {**env(database_url), "ENGRAM_VAULT_KEYS": TEST_VAULT_KEYS, "ENGRAM_EMBEDDER": "hashing"}
    wrote = runner.invoke(app, ["remember", "-t", "acme", "Invoices go to ap@example.org"], env=old)
    assert wrote.exit_code == 0, wrote.output
    mid = json.loads(wrote.stdout)["id"]
    masked = json.loads(runner.invoke(app, ["get", "-t", "acme", mid], env=old).stdout)
    assert masked["content"] == "Invoices go to EMAIL_1"
    both = {**old, "ENGRAM_VAULT_KEYS": f"{new_key},{TEST_VAULT_KEYS}"}
    rotated = runner.invoke(app, ["vault", "rotate", "-t", "acme"], env=both)
    assert rotated.exit_code == 0 and "Sealed 1 value" in rotated.stderr, rotated.output
    locked = runner.invoke(app, ["get", "-t", "acme", "--reveal", mid], env=old)
    assert locked.exit_code == 7 and "vault key 'k2' is not configured" in locked.stderr
    shown = runner.invoke(app, ["get", "-t", "acme", "--reveal", mid], env={**old, "ENGRAM_VAULT_KEYS": new_key})
    assert shown.exit_code == 0 and json.loads(shown.stdout)["content"] == "Invoices go to ap@example.org"
