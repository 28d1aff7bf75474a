"""The review UI at /ui (SPEC 9): reviewers and admins search memories, read their provenance, history,
relations and the receipts that used them, correct, archive, delete, approve and reject; a receipt page; the
tenant's dashboard. Server-rendered, no script, no CDN (docs/ui.md)."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from engram.ui.routes import HERE, BadForm, SignIn, router, templates
from engram.ui.session import Sessions

# Only this origin's files; no inline script or style; forms post here only; never framed.
CSP = "default-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"


def install(app: FastAPI) -> None:
    app.state.ui_sessions = Sessions()
    app.include_router(router)
    app.mount("/ui/static", StaticFiles(directory=HERE / "static"), name="ui-static")

    @app.exception_handler(SignIn)
    async def _sign_in(request: Request, exc: SignIn) -> Response:
        return RedirectResponse("/ui/login", status_code=303)

    @app.exception_handler(BadForm)
    async def _bad_form(request: Request, exc: BadForm) -> Response:
        return templates.TemplateResponse(request, "error.html", {"who": None, "csrf": "", "error": exc}, 403)

    @app.middleware("http")
    async def _headers(request: Request, call_next: object) -> Response:
        response: Response = await call_next(request)  # type: ignore[operator]
        if request.url.path.startswith("/ui"):
            response.headers["Content-Security-Policy"] = CSP
            response.headers["X-Content-Type-Options"] = "nosniff"
            response.headers["Referrer-Policy"] = "same-origin"
            response.headers.setdefault("Cache-Control", "no-store")
        return response
