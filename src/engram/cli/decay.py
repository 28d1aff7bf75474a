"""`engram decay`: one decay pass now, and what it archived or expired, with why; `engram prune-receipts`:
the recall receipts the tenant's policy no longer keeps, deleted now."""

from __future__ import annotations

from typing import Annotated

import typer

from engram.cli.common import DataDir, Tenant, admin_call, out, run, settings_for


def decay(
    tenant: Tenant,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report what would change, change nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Decay (SPEC 6.3): archive the tenant's memories whose priority fell below its threshold and expire what
    its time limits end, now. Nothing is deleted."""
    report = run(admin_call(settings_for(data_dir), lambda m: m.decay(dry_run=dry_run, tenant=tenant)))
    if as_json:
        out.print_json(report.model_dump_json())
        return
    archived, expired = ("would archive", "would expire") if dry_run else ("archived", "expired")
    line = f"{report.scanned} memories looked at, {archived} {report.archived}, {expired} {report.expired}"
    out.print(f"{line}, {report.pinned} pinned", highlight=False)
    for d in report.decisions:
        out.print(f"  {d.action} {d.id}  {d.reason}  (priority {d.priority})", highlight=False, markup=False)


def prune_receipts(
    tenant: Tenant,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Count what would be deleted, delete nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Delete the tenant's recall receipts older than its lifecycle policy's receipt_days (SPEC 5.6), now."""
    report = run(admin_call(settings_for(data_dir), lambda m: m.prune_receipts(dry_run=dry_run, tenant=tenant)))
    if as_json:
        out.print_json(report.model_dump_json())
        return
    if report.before is None:
        out.print("the tenant's policy keeps receipts for ever (receipt_days is null): nothing to delete")
        return
    verb = "would delete" if dry_run else "deleted"
    out.print(f"{verb} {report.deleted} receipts created before {report.before.isoformat()}", highlight=False)
