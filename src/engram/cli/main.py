"""The `engram` command: a thin shell over the library. Errors map to exit codes in one table."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from engram import discovery
from engram import errors as e
from engram.cli.common import DataDir, Tenant, admin_call, err, out, ready, run, settings_for
from engram.cli.completion import completion
from engram.cli.consolidate import consolidate
from engram.cli.decay import decay, prune_receipts
from engram.cli.demo import demo
from engram.cli.doctor import doctor
from engram.cli.forget import forget
from engram.cli.mcp import mcp
from engram.cli.memories import get, list_memories, recall, remember
from engram.cli.policy import policy_app
from engram.cli.reembed import reembed
from engram.cli.transfer import export_memories, import_memories
from engram.cli.vault import vault_app
from engram.cli.worker import worker
from engram.config import Settings

T = TypeVar("T")

app = typer.Typer(
    name="engram",
    help="Engram: durable, typed, tenant-isolated memory for AI agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
keys_app = typer.Typer(help="Create, list and revoke API keys.", no_args_is_help=True)
bench_app = typer.Typer(help="Benchmarks that print JSON (not tests: machines are noisy).", no_args_is_help=True)
eval_app = typer.Typer(help="Retrieval quality on LoCoMo and LongMemEval, through the real write and recall paths.",
                       no_args_is_help=True)  # fmt: skip


def _version(value: bool) -> None:
    if value:
        from engram import __version__

        out.print(f"engram {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Engram: durable, typed, tenant-isolated memory for AI agents."""


def self_command() -> str:
    """How to run this very `engram` again from the current directory: `engram` when the PATH finds this one,
    else its path (``make run`` starts `.venv/bin/engram`, and the venv is seldom on the PATH)."""
    here = Path(sys.argv[0]).resolve()
    found = shutil.which("engram")
    if found is not None and Path(found).resolve() == here:
        return "engram"
    if here.name != "engram":  # started some other way (python -c, a test runner): this interpreter's script
        here = Path(sys.executable).parent / "engram"
    try:
        return shlex.quote(str(here.relative_to(Path.cwd())))
    except ValueError:
        return shlex.quote(str(here))


def _setup_logging(settings: Settings) -> None:
    from engram.observability import tracing
    from engram.observability.logs import setup

    setup(settings.log_level, settings.log_format, settings.access_log)
    tracing.configure(settings)


# --- serve ---------------------------------------------------------------------------------------------


def serve(
    data_dir: DataDir = None,
    host: Annotated[str | None, typer.Option(help="Interface to bind (env ENGRAM_HOST).")] = None,
    port: Annotated[int | None, typer.Option(help="Port (env ENGRAM_PORT).")] = None,
    jobs: Annotated[
        bool,
        typer.Option("--jobs/--no-jobs", help="Run the background jobs here too (--no-jobs: `engram worker` does)."),
    ] = True,
) -> None:
    """Run the REST API (and the background jobs: enrichment, the outbox) on the embedded or external
    PostgreSQL."""
    settings = settings_for(data_dir, host=host, port=port)
    _setup_logging(settings)
    run(_serve(settings, jobs=jobs))


async def _serve(settings: Settings, *, jobs: bool = True) -> None:
    import uvicorn

    from engram.api import create_app
    from engram.api.server import Server
    from engram.service import Engram

    sock = _bind(settings.host, settings.port)  # fail fast, before starting anything
    where = (
        "external PostgreSQL (DATABASE_URL)" if settings.database_url else f"embedded PostgreSQL in {settings.data_dir}"
    )
    err.print(f"Starting Engram on {where} ...", highlight=False)
    try:
        engram = await Engram.open(settings)
    except BaseException:
        sock.close()
        raise
    try:
        await ready(engram)
        token = discovery.new_token()
        app = create_app(
            engram, settings, run_worker=jobs, enrichment_interval=settings.enrichment_interval, local_token=token
        )
        config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="warning", lifespan="on")
        server = Server(config)
        url = f"http://{settings.host}:{settings.port}"
        data_opt = "" if settings.database_url else f" --data-dir {shlex.quote(str(settings.data_dir))}"
        out.print(f"Engram is listening on {url}  (API docs: {url}/docs)", highlight=False)
        out.print(
            f"Create an API key in another terminal:  {self_command()} keys create --tenant my-team --role agent"
            f"{data_opt}",
            highlight=False,
        )
        discovery.publish(settings.data_dir, _local_url(settings.host, settings.port), token)
        await server.serve(sockets=[sock])
    finally:
        discovery.withdraw(settings.data_dir)
        sock.close()
        await engram.close()


def _local_url(host: str, port: int) -> str:
    """How a client on this machine reaches a server bound to ``host``."""
    if host in ("0.0.0.0", ""):  # noqa: S104 - a comparison, not a bind
        return f"http://127.0.0.1:{port}"
    if host == "::":
        return f"http://[::1]:{port}"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say they are TCP, and
    # with it on, every response after the first on a kept-alive connection waited 40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise e.ValidationError(
            f"cannot listen on {host}:{port}: {exc.strerror}; choose another with --port or ENGRAM_PORT", field="port"
        ) from exc
    sock.listen(2048)
    sock.setblocking(False)
    return sock


# --- migrate -------------------------------------------------------------------------------------------


def migrate(data_dir: DataDir = None) -> None:
    """Apply pending schema migrations (automatic on the embedded database; needed for DATABASE_URL)."""
    run(_migrate(settings_for(data_dir)))


async def _migrate(settings: Settings) -> None:
    from engram.service import migrate_database

    done = await migrate_database(settings)
    if done:
        for mig in done:
            out.print(f"applied {mig.version:04d}_{mig.name}", highlight=False)
    else:
        out.print("schema is up to date", highlight=False)


# --- keys ----------------------------------------------------------------------------------------------


@keys_app.command("create")
def keys_create(
    tenant: Tenant,
    role: Annotated[str, typer.Option(help="agent, reviewer or admin.")] = "agent",
    name: Annotated[str, typer.Option(help="A label to recognise the key by.")] = "",
    user_id: Annotated[str | None, typer.Option(help="Bind the key to this user: it acts only as them.")] = None,
    agent_id: Annotated[str | None, typer.Option(help="Bind the key to this agent: it acts only as it.")] = None,
    can_reveal: Annotated[
        bool, typer.Option("--can-reveal", help="Let the key reveal personal data (admins may without it).")
    ] = False,
    data_dir: DataDir = None,
) -> None:
    """Create an API key bound to one tenant and role (and optionally a user and agent). The key is printed
    once, alone on the last line."""
    from engram.model.access import ROLES

    if role not in ROLES:
        err.print(f"[bold red]error[/]: --role must be one of {', '.join(ROLES)}, got {role!r}", highlight=False)
        raise typer.Exit(2)
    spec = {"role": role, "name": name, "user_id": user_id, "agent_id": agent_id, "can_reveal": can_reveal}
    made = run(admin_call(settings_for(data_dir), lambda m: m.create_key(spec, tenant=tenant), create=True))
    bound = ", ".join(f"{k} {v}" for k, v in (("user", user_id), ("agent", agent_id)) if v)
    err.print(
        f"Created {role} key {made.id} for tenant {tenant}{f' (bound to {bound})' if bound else ''}. "
        "Store it now; it is not shown again."
    )
    print(made.key)


@keys_app.command("list")
def keys_list(tenant: Tenant, data_dir: DataDir = None) -> None:
    """List a tenant's keys (never the secrets)."""
    rows = run(admin_call(settings_for(data_dir), lambda m: m.list_keys(tenant=tenant)))
    for r in rows:
        state = "revoked" if r.revoked_at else "active"
        bound = " ".join(f"{k}={v}" for k, v in (("user", r.user_id), ("agent", r.agent_id)) if v)
        out.print(
            f"{r.id}  {r.role:<8}  {r.prefix}...  {state:<7}  {r.name}{'  ' + bound if bound else ''}",
            highlight=False,
            markup=False,
        )


@keys_app.command("revoke")
def keys_revoke(
    tenant: Tenant, key_id: Annotated[str, typer.Argument(help="The key's id.")], data_dir: DataDir = None
) -> None:
    """Revoke a key (takes effect within 10 seconds on running servers)."""
    run(admin_call(settings_for(data_dir), lambda m: m.revoke_key(key_id, tenant=tenant)))
    out.print(f"revoked {key_id}")


# --- evaluation ----------------------------------------------------------------------------------------

Preset = Annotated[str | None, typer.Option(help="hybrid, dense or lexical (default: all three).")]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON only (one object per preset).")]
EvalDataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="Database directory to reuse (default: a temporary one).")
]
Limit = Annotated[int | None, typer.Option(help="Only the first N questions (per conversation for LoCoMo).")]


@eval_app.command("locomo")
def eval_locomo(
    preset: Preset = None,
    data: Annotated[Path | None, typer.Option(help="Path to locomo10.json.")] = None,
    as_json: AsJson = False,
    data_dir: EvalDataDir = None,
    limit: Limit = None,
) -> None:
    """LoCoMo turn-level evidence recall@1/5/10/20, MRR, NDCG@10 per category, and recall latency."""
    from engram.evaluation import locomo
    from engram.evaluation.runner import default_data

    dataset = locomo.load(data or default_data("locomo/locomo10.json"))
    _run_eval(lambda m, p: locomo.evaluate(m, dataset, p, limit=limit), preset, as_json, data_dir,
              columns=("recall@1", "recall@5", "recall@10", "recall@20", "mrr", "ndcg@10"))  # fmt: skip


@eval_app.command("summarise")
def eval_summarise(
    preset: Annotated[str, typer.Option(help="Recall preset, the same for raw turns and summaries.")] = "hybrid",
    data: Annotated[Path | None, typer.Option(help="Path to locomo10.json.")] = None,
    as_json: AsJson = False,
    data_dir: EvalDataDir = None,
    limit: Limit = None,
) -> None:
    """LoCoMo recall@10 over the extractive summariser's memories against raw turns, and their size."""
    from engram.evaluation import locomo, summarise
    from engram.evaluation.runner import default_data, engram_for_eval

    dataset = locomo.load(data or default_data("locomo/locomo10.json"))

    async def go() -> dict[str, Any]:
        async with engram_for_eval(data_dir, settings_for(None)) as engram:
            return await summarise.evaluate(engram, dataset, preset, limit=limit)

    result = run(go())
    if as_json:
        print(json.dumps(result))
        return
    for key in ("recall@10_summaries", "recall@10_raw", "recall@10_ratio", "char_ratio", "turns", "summaries"):
        out.print(f"{key}: {result.get(key)}", highlight=False)


@eval_app.command("longmemeval")
def eval_longmemeval(
    preset: Preset = None,
    data: Annotated[Path | None, typer.Option(help="Path to longmemeval_s_cleaned_subset60.json.")] = None,
    as_json: AsJson = False,
    data_dir: EvalDataDir = None,
    limit: Limit = None,
) -> None:
    """LongMemEval (S subset) under the official rules: session- and turn-level recall_any/all and nDCG."""
    from engram.evaluation import longmemeval
    from engram.evaluation.runner import default_data

    dataset = longmemeval.load(data or default_data("longmemeval/longmemeval_s_cleaned_subset60.json"))
    _run_eval(lambda m, p: longmemeval.evaluate(m, dataset, p, limit=limit), preset, as_json, data_dir,
              columns=("recall_all@5", "recall_all@10", "recall_any@5", "ndcg_any@5"))  # fmt: skip


@eval_app.command("policy")
def eval_policy(
    corpora: Annotated[
        Path | None, typer.Option(help="Directory of attacks.txt, attacks_holdout.txt, benign.txt.")
    ] = None,
    locomo: Annotated[Path | None, typer.Option(help="Path to locomo10.json (benign turns).")] = None,
    longmemeval: Annotated[
        Path | None, typer.Option(help="Path to longmemeval_s_validation110.json (benign user turns).")
    ] = None,
    classifier: Annotated[
        bool, typer.Option(help="Add the injection classifier (loads MiniLM; about 4 minutes on 2 cores).")
    ] = True,
    as_json: AsJson = False,
) -> None:
    """Admission's detection recall (injection, secrets) on built corpora, and its false-positive rates on
    text written by people: every LoCoMo turn and every LongMemEval validation user turn."""
    from engram.evaluation import policy
    from engram.evaluation.runner import default_data

    encode = None
    if classifier:
        from engram.providers.local import LocalMiniLM

        model = LocalMiniLM()
        model.load()
        encode = model.encode_sync
    result = policy.evaluate(
        corpora or policy.CORPORA,
        locomo or default_data("locomo/locomo10.json"),
        longmemeval or default_data("longmemeval/longmemeval_s_validation110.json"),
        encode,
    )
    if as_json:
        print(json.dumps(result))
        return
    _print_bench("admission policy", {k: v for k, v in result.items() if not isinstance(v, list | dict)}, False)


def _run_eval(
    evaluate: Callable[[Any, str], Awaitable[dict[str, Any]]],
    preset: str | None,
    as_json: bool,
    data_dir: Path | None,
    *,
    columns: tuple[str, ...],
) -> None:
    from engram.evaluation.runner import engram_for_eval

    presets = [preset] if preset else ["dense", "lexical", "hybrid"]

    async def go() -> list[dict[str, Any]]:
        async with engram_for_eval(data_dir, settings_for(None)) as engram:
            return [await evaluate(engram, p) for p in presets]

    results = run(go())
    if as_json:
        for r in results:
            print(json.dumps(r))
        return
    from rich.table import Table

    table = Table(title=f"engram eval {results[0]['benchmark']} ({results[0]['questions']} questions)")
    for col in ("preset", *columns, "p50 ms", "p95 ms"):
        table.add_column(col, justify="right")
    for r in results:
        table.add_row(r["preset"], *(f"{r[c]:.3f}" for c in columns),
                      f"{r['latency_ms']['p50']:.1f}", f"{r['latency_ms']['p95']:.1f}")  # fmt: skip
    out.print(table)


# --- benchmarks ----------------------------------------------------------------------------------------


@bench_app.command("write")
def bench_write(
    n: Annotated[int, typer.Option("--n", help="Memories per measured phase.")] = 2000,
    batch_size: Annotated[int, typer.Option(help="Items per batch write.")] = 250,
    single: Annotated[int, typer.Option(help="Memories for the single-write phase.")] = 300,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object only.")] = False,
    data_dir: Annotated[Path | None, typer.Option(help="Benchmark database directory (default: a temp dir).")] = None,
) -> None:
    """Write throughput: embedder alone, single writes, batched writes, batched writes with deferred embedding."""
    from engram.bench.write import run_write_bench

    result = run(run_write_bench(n=n, batch_size=batch_size, single=single, data_dir=data_dir))
    _print_bench("engram bench write", result, as_json)


@bench_app.command("recall")
def bench_recall(
    shape: Annotated[
        str,
        typer.Option(
            help="tenants: many tenants, one large; users: one tenant of 1,000 users; one-scope: one tenant, no users."
        ),
    ] = "tenants",
    memories: Annotated[int, typer.Option(min=10, help="Memories in all.")] = 100_000,
    tenants: Annotated[
        int, typer.Option(min=2, help="tenants shape: tenants (one holds --big-share of the rows).")
    ] = 1000,
    big_share: Annotated[float, typer.Option(help="tenants shape: share of all rows in the one big tenant.")] = 0.2,
    queries: Annotated[
        int | None, typer.Option(min=1, help="Measured recalls (default 400 for tenants, 200 else).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object only.")] = False,
    data_dir: Annotated[
        Path | None, typer.Option(help="Benchmark database directory (default: a per-user cache, reused).")
    ] = None,
) -> None:
    """Recall latency p50/p95/p99 with and without query embedding; per shape, filtered dense recall@10 vs
    exact (tenants) or hit@5 of each query's one gold fact (users, one-scope), and the plans chosen."""
    from engram.bench.facts import MAX_FACTS
    from engram.bench.recall import run_recall_bench
    from engram.bench.shapes import SHAPES, run_shape_bench

    if shape != "tenants" and shape not in SHAPES:
        raise typer.BadParameter(f"must be one of tenants, {', '.join(SHAPES)}", param_hint="--shape")
    if shape == "tenants":
        if not 0 < big_share < 1:
            raise typer.BadParameter("a share between 0 and 1, both excluded", param_hint="--big-share")
        if memories < 10 * tenants:
            raise typer.BadParameter(f"at least 10 per tenant ({10 * tenants:,} for {tenants:,} tenants)",
                                     param_hint="--memories")  # fmt: skip
        result = run(
            run_recall_bench(
                memories=memories, tenants=tenants, big_share=big_share, queries=queries or 400, data_dir=data_dir,
                settings=settings_for(None),
            )
        )  # fmt: skip
    else:
        if memories > MAX_FACTS:
            raise typer.BadParameter(
                f"at most {MAX_FACTS:,} (the distinct facts the shapes can make)", param_hint="--memories"
            )
        result = run(
            run_shape_bench(
                shape, memories=memories, queries=queries or 200, data_dir=data_dir, settings=settings_for(None)
            )
        )
    _print_bench(f"engram bench recall --shape {shape}", result, as_json)


@bench_app.command("scale")
def bench_scale(
    sizes: Annotated[str, typer.Option(help="Memories per point, comma-separated.")] = "10000,100000,1000000",
    shapes: Annotated[str, typer.Option(help="Shapes, comma-separated: users, one-scope.")] = "users,one-scope",
    queries: Annotated[int, typer.Option(min=1, help="Measured recalls per point.")] = 200,
    passes: Annotated[int, typer.Option(min=1, help="Rounds of the questions; each figure is their median.")] = 9,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object only.")] = False,
    data_dir: Annotated[
        Path | None, typer.Option(help="Directory of the points' databases (default: per-user caches, reused).")
    ] = None,
) -> None:
    """The users and one-scope shapes at growing sizes: recall p50/p95 per point (the median of ``passes``
    rounds) and p95's growth per 10x."""
    from engram.bench.facts import MAX_FACTS
    from engram.bench.scale import run_scale_bench
    from engram.bench.shapes import SHAPES

    try:
        counts = [int(n) for n in sizes.split(",") if n.strip()]
    except ValueError:
        raise typer.BadParameter("a comma-separated list of whole numbers", param_hint="--sizes") from None
    if not counts or any(not 10 <= n <= MAX_FACTS for n in counts):
        raise typer.BadParameter(f"at least one size, each from 10 to {MAX_FACTS:,}", param_hint="--sizes")
    names = [s.strip() for s in shapes.split(",") if s.strip()]
    if not names or any(s not in SHAPES for s in names):
        raise typer.BadParameter(f"each of {', '.join(SHAPES)}", param_hint="--shapes")
    result = run(
        run_scale_bench(
            sizes=counts, shapes=names, queries=queries, passes=passes, data_dir=data_dir, settings=settings_for(None)
        )
    )
    _print_bench("engram bench scale", result, as_json)


@bench_app.command("packet")
def bench_packet(
    items: Annotated[int, typer.Option(help="Memories of 10-20 words to pack.")] = 200,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object only.")] = False,
) -> None:
    """The packet's cost in cl100k tokens: its header, the wrapping per item, and how many memories of 10-20
    words fit in 300 tokens."""
    from engram.bench.packet import run_packet_bench

    _print_bench("engram bench packet", run_packet_bench(items=items), as_json)


@bench_app.command("isolation")
def bench_isolation(
    attackers: Annotated[int, typer.Option(help="Concurrent recalls of the attacking tenant.")] = 10,
    victim_recalls: Annotated[int, typer.Option(help="Sequential recalls of the victim tenant, measured.")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object only.")] = False,
) -> None:
    """One tenant's costly recalls (685-identifier queries over 12 KB memories) against another's latency,
    through a real `engram serve`; the victim's latency alone is measured in the same run."""
    from engram.bench.isolation import run_isolation_bench

    result = run(run_isolation_bench(attackers=attackers, victim_recalls=victim_recalls, settings=settings_for(None)))
    _print_bench("engram bench isolation", result, as_json)


def _print_bench(title: str, result: dict[str, Any], as_json: bool) -> None:
    """A benchmark's result: one JSON object, or a table of its measures."""
    if as_json:
        print(json.dumps(result))
        return
    from rich.table import Table

    table = Table(title=title)
    table.add_column("measure")
    table.add_column("value", justify="right")
    for k, v in result.items():
        table.add_row(k, f"{v:,.2f}" if isinstance(v, float) else str(v))
    out.print(table)


# `engram --help` lists the everyday commands first, in panels of what they are for.
MEMORIES, RUN, OPERATE, MEASURE = "Memories", "Run and check", "Operate a tenant", "Measure"
app.command(rich_help_panel=MEMORIES)(remember)
app.command(rich_help_panel=MEMORIES)(recall)
app.command(rich_help_panel=MEMORIES)(get)
app.command("list", rich_help_panel=MEMORIES)(list_memories)
app.command("import", rich_help_panel=MEMORIES)(import_memories)
app.command("export", rich_help_panel=MEMORIES)(export_memories)
app.command(rich_help_panel=RUN)(serve)
app.command(rich_help_panel=RUN)(demo)
app.command(rich_help_panel=RUN)(doctor)
app.command(rich_help_panel=RUN)(mcp)
app.command(rich_help_panel=RUN)(worker)
app.command(rich_help_panel=RUN)(migrate)
app.command(rich_help_panel=RUN)(completion)
app.command(rich_help_panel=OPERATE)(forget)
app.command(rich_help_panel=OPERATE)(consolidate)
app.command(rich_help_panel=OPERATE)(decay)
app.command("prune-receipts", rich_help_panel=OPERATE)(prune_receipts)
app.command(rich_help_panel=OPERATE)(reembed)
app.add_typer(keys_app, name="keys", rich_help_panel=OPERATE)
app.add_typer(policy_app, name="policy", rich_help_panel=OPERATE)
app.add_typer(vault_app, name="vault", rich_help_panel=OPERATE)
app.add_typer(eval_app, name="eval", rich_help_panel=MEASURE)
app.add_typer(bench_app, name="bench", rich_help_panel=MEASURE)


def main() -> None:
    if "_ENGRAM_COMPLETE" in os.environ:  # the shell asks for completions (`engram completion`)
        from typer._completion_classes import completion_init

        completion_init()  # what add_completion=True would do, without --install-completion on every command
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
