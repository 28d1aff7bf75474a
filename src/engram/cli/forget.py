"""`engram forget`: remove everything a tenant holds of a user and print the deletion certificate."""

from __future__ import annotations

from typing import Annotated

import typer

from engram.cli.common import DataDir, Tenant, admin_call, out, run, settings_for


def forget(
    tenant: Tenant,
    user: Annotated[str, typer.Option("--user", help="The user whose memories, receipts and state go.")],
    data_dir: DataDir = None,
) -> None:
    """Forget a user (SPEC 6.5): their memories and what derives from or records them. Prints the deletion
    certificate as JSON."""
    cert = run(admin_call(settings_for(data_dir), lambda m: m.forget_subject(user, tenant=tenant)))
    out.print_json(cert.model_dump_json())
