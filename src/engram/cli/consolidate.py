"""`engram consolidate`: turn an agent's repeated episodes into facts, now, and print the report."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from engram.cli.common import DataDir, Tenant, out, run, settings_for
from engram.config import Settings

if TYPE_CHECKING:
    from engram.model.consolidation import ConsolidationReport


def consolidate(
    tenant: Tenant,
    agent: Annotated[
        str | None, typer.Option("--agent", help="Whose episodes (default: those without an agent).")
    ] = None,
    min_episodes: Annotated[int, typer.Option(help="Episodes that must say the same thing (2-100).")] = 3,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Report the groups, write nothing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    data_dir: DataDir = None,
) -> None:
    """Consolidate (SPEC 6.4): episodes that keep saying the same thing become one fact derived from them.
    Idempotent: a second run writes nothing."""
    request: dict[str, object] = {"agent_id": agent, "min_episodes": min_episodes, "dry_run": dry_run}
    report = run(_consolidate(settings_for(data_dir), tenant, request))
    if as_json:
        out.print_json(report.model_dump_json())
        return
    if report.skipped_locked:
        out.print("another consolidation of this tenant and agent is running: nothing done", highlight=False)
        return
    out.print(
        f"{report.episodes} episodes, {report.groups} groups, {report.created} facts written "
        f"({report.superseded} superseded), {report.links_added} links added", highlight=False,
    )  # fmt: skip
    for fact in report.facts:
        out.print(f"  [{fact.outcome}] {fact.content}  ({len(fact.evidence)} episodes)", highlight=False, markup=False)


async def _consolidate(settings: Settings, tenant: str, request: dict[str, object]) -> ConsolidationReport:
    from engram.service import Engram

    # With the embedder configured (not loaded): episodes are compared by the vectors stored for its model,
    # as the scheduled job compares them, so both find the same groups.
    async with await Engram.open(settings, create=False) as engram:
        return await engram.consolidate(request, tenant=tenant)
