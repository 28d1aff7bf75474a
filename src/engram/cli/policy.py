"""`engram policy`: a tenant's admission policy (docs/admission.md), shown and changed in process."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from engram.cli.common import DataDir, Tenant, admin_call, err, out, run, settings_for

policy_app = typer.Typer(help="Show or change a tenant's admission policy.", no_args_is_help=True)

_LISTS = {"approval_categories", "trusted_sources", "deduplicate", "pii_kinds"}


@policy_app.command("show")
def policy_show(tenant: Tenant, data_dir: DataDir = None) -> None:
    """Print the tenant's admission policy as JSON (the defaults when it was never changed)."""
    policy = run(admin_call(settings_for(data_dir), lambda m: m.admission_policy(tenant=tenant)))
    print(json.dumps(policy.model_dump(mode="json"), indent=2))


@policy_app.command("set")
def policy_set(
    tenant: Tenant,
    changes: Annotated[
        list[str],
        typer.Argument(
            metavar="CHANGES...",
            help="FIELD=VALUE pairs: secrets=reject, min_semantic_confidence=0.8, profile=transcript, "
            "approval_categories=medical_details,bank_details (lists comma-separated, empty for none).",
        ),
    ],
    data_dir: DataDir = None,
) -> None:
    """Change fields of the tenant's admission policy; the others keep their value (a new profile resets
    them to its defaults first). Prints the policy as it now is."""
    patch: dict[str, Any] = {}
    for pair in changes:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            err.print(f"[bold red]error[/]: expected FIELD=VALUE, got {pair!r}", highlight=False)
            raise typer.Exit(2)
        patch[name.strip()] = _value(name.strip(), value.strip())
    policy = run(admin_call(settings_for(data_dir), lambda m: m.update_admission_policy(patch, tenant=tenant)))
    out.print_json(json.dumps(policy.model_dump(mode="json")))


def _value(name: str, text: str) -> Any:
    if name in _LISTS:
        return [v.strip() for v in text.split(",") if v.strip()]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


@policy_app.command("rescan")
def policy_rescan(
    tenant: Tenant,
    batch: Annotated[int, typer.Option(help="Memories per batch (1-500).")] = 200,
    cursor: Annotated[str | None, typer.Option(help="Resume from this cursor (printed by an earlier run).")] = None,
    data_dir: DataDir = None,
) -> None:
    """Apply the tenant's current admission policy to its active memories, a batch at a time: secrets
    redacted, personal data masked, what now fails quarantined for review. Resumable: each batch's cursor
    goes to stderr."""
    from rich.progress import Progress

    async def go() -> tuple[int, int, int, int]:
        from engram.service import Engram

        scanned = redacted = masked = quarantined = 0
        position = cursor
        # With the embedder: a redacted memory is embedded again.
        async with await Engram.open(settings_for(data_dir)) as engram:
            with Progress(console=err, transient=True) as progress:
                task = progress.add_task("rescanning", total=None)
                while True:
                    report = await engram.rescan(batch=batch, cursor=position, tenant=tenant)
                    scanned += report.scanned
                    redacted += report.redacted
                    masked += report.masked
                    quarantined += report.quarantined
                    progress.update(task, advance=report.scanned, description=f"rescanned {scanned}")
                    if report.next_cursor is None:
                        return scanned, redacted, masked, quarantined
                    position = report.next_cursor
                    err.print(f"cursor {position}", highlight=False)

    scanned, redacted, masked, quarantined = run(go())
    out.print(f"scanned {scanned}, redacted {redacted}, masked {masked}, quarantined {quarantined}", highlight=False)
