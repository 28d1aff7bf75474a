"""The FastAPI application factory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi_offline import FastAPIOffline

from engram import __version__
from engram.api import (
    action_routes,
    admin_routes,
    approval_routes,
    errors,
    extract_routes,
    metrics_routes,
    openapi,
    procedure_routes,
    routes,
    session_routes,
    workflow_routes,
)
from engram.api.guard import RequestGuard
from engram.config import Settings
from engram.observability.logs import AccessLog
from engram.service import Engram
from engram.workers.jobs import background_jobs


def create_app(
    engram: Engram | None = None,
    settings: Settings | None = None,
    *,
    run_worker: bool = True,
    enrichment_interval: float = 1.0,
    max_body_bytes: int | None = None,
    local_token: str | None = None,
) -> FastAPI:
    """Build the app. Given an open ``engram`` it uses it (and leaves closing it to the caller);
    otherwise it opens one from ``settings`` on start-up and closes it on shutdown. With ``run_worker`` the
    background jobs (enrichment, the outbox) run inside the app; ``engram serve --no-jobs`` leaves them to
    ``engram worker`` processes. ``local_token`` is the CLI's token on this machine (engram.discovery)."""
    settings = settings or Settings()
    mcp_route, mcp_sessions = None, None
    if settings.mcp:
        from engram.mcp.http import mount

        mcp_route, mcp_sessions = mount(lambda: app.state.engram, settings.host)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        own = engram is None
        eng = engram if engram is not None else await Engram.open(settings)
        app.state.engram = eng
        if own:  # a server: the first write should not wait for models to load
            await eng.warm()
        workers = background_jobs(eng, enrichment_interval=enrichment_interval) if run_worker else []
        for worker in workers:
            worker.start()
        try:
            if mcp_sessions is not None:
                async with mcp_sessions():
                    yield
            else:
                yield
        finally:
            for worker in workers:
                await worker.stop()
            if own:
                await eng.close()

    # /docs and /redoc with Swagger UI's and ReDoc's scripts served from the installed package, not a CDN:
    # they work offline and behind a strict firewall.
    app = FastAPIOffline(
        static_url="/static/docs",
        title="Engram",
        version=__version__,
        summary="Durable, typed, tenant-isolated memory for AI agents",
        lifespan=lifespan,
        redirect_slashes=False,  # /v1/memories/ is a 404 with a JSON body, not a 307 to follow
    )
    if engram is not None:
        app.state.engram = engram  # usable without running the lifespan (tests, embedding in other apps)
    app.state.local_token = local_token
    errors.install(app)
    app.include_router(routes.router)
    app.include_router(admin_routes.router)
    app.include_router(approval_routes.router)
    app.include_router(extract_routes.router)
    app.include_router(workflow_routes.router)
    app.include_router(action_routes.router)
    app.include_router(session_routes.router)
    app.include_router(procedure_routes.router)
    app.add_middleware(RequestGuard, max_body_bytes=max_body_bytes or settings.max_body_bytes)
    app.add_middleware(AccessLog)  # outermost: it sees (and times) every answer, the guard's refusals included
    if settings.metrics:
        app.include_router(metrics_routes.router)
    openapi.install(app)  # every field described, every error in the body the API really sends
    if settings.ui:
        from engram import ui

        ui.install(app)
    if mcp_route is not None:  # streamable HTTP for MCP clients, behind the same API keys (docs/mcp.md)
        app.router.routes.append(mcp_route)
    return app
