"""`engram vault`: the PII vault's keys (docs/admission.md): make one, and rotate a tenant's values onto the
current one."""

from __future__ import annotations

from typing import Annotated

import typer

from engram.cli.common import DataDir, Tenant, admin_call, err, run, settings_for

vault_app = typer.Typer(help="Keys of the PII vault.", no_args_is_help=True)


@vault_app.command("new-key")
def vault_new_key(
    key_id: Annotated[str, typer.Option("--id", help="The key's id (letters, digits, '_', '.', '-').")] = "k1",
) -> None:
    """Print a new key as id:base64, to put first in ENGRAM_VAULT_KEYS (keep the old ones after it until
    `engram vault rotate` has run for every tenant)."""
    from engram.errors import ConfigurationError
    from engram.service.keyring import Keyring, new_key_line

    line = new_key_line(key_id)
    try:
        Keyring.parse(line)
    except ConfigurationError as exc:
        err.print(f"[bold red]error[/]: {exc.message}", highlight=False)
        raise typer.Exit(2) from exc
    print(line)


@vault_app.command("rotate")
def vault_rotate(tenant: Tenant, data_dir: DataDir = None) -> None:
    """Seal the tenant's vault values again under the current key (the first of ENGRAM_VAULT_KEYS)."""
    done = run(admin_call(settings_for(data_dir), lambda m: m.rotate_vault(tenant=tenant)))
    err.print(f"Sealed {done} value(s) of tenant {tenant} again under the current key.")
