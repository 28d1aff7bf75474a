"""The review UI's pages: sign-in, memories (search, one memory with its history, relations and receipts, and
the corrections a reviewer makes), the approval queue, a receipt, the tenant's dashboard. Server-rendered;
every page and action calls :class:`Engram` as the signed-in key."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from engram.errors import AuthenticationError, EngramError, RevisionConflict
from engram.model.access import Action, Principal
from engram.service import Engram
from engram.ui import views
from engram.ui.session import COOKIE, Session, Sessions

HERE = Path(__file__).parent
templates = Jinja2Templates(directory=HERE / "templates")
templates.env.filters["diff"] = views.diff_lines
router = APIRouter(prefix="/ui", include_in_schema=False)
PAGE = 25


class SignIn(Exception):
    """No signed-in reviewer: the handler sends the browser to the sign-in page."""


class BadForm(Exception):
    """A form whose CSRF token is not its session's: refused with 403."""

    message = (
        "This form is out of date (its security token does not match your session): reload the page and try again."
    )
    code = "csrf"


def engram_of(request: Request) -> Engram:
    return request.app.state.engram  # type: ignore[no-any-return]


def sessions_of(request: Request) -> Sessions:
    return request.app.state.ui_sessions  # type: ignore[no-any-return]


async def signed_in(request: Request) -> tuple[Principal, Session]:
    session = sessions_of(request).get(request.cookies.get(COOKIE))
    if session is None:
        raise SignIn
    try:
        who = await engram_of(request).authenticate(session.key)
    except AuthenticationError:  # revoked since sign-in
        sessions_of(request).end(request.cookies.get(COOKIE))
        raise SignIn from None
    return who, session


Reviewer = Annotated[tuple[Principal, Session], Depends(signed_in)]
Csrf = Annotated[str | None, Form()]


def page(request: Request, name: str, who: tuple[Principal, Session] | None, status: int = 200, **ctx: Any) -> Response:
    principal, session = who if who else (None, None)
    context = {"who": principal, "csrf": session.csrf if session else "", **ctx}
    return templates.TemplateResponse(request, name, context, status_code=status)


def failure(request: Request, who: tuple[Principal, Session], exc: EngramError) -> Response:
    from engram.api.errors import status_for

    return page(request, "error.html", who, status_for(exc), error=exc)


def back(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def checked(who: tuple[Principal, Session], token: str | None) -> None:
    if not who[1].csrf_ok(token):
        raise BadForm


# --- signing in ------------------------------------------------------------------------------------------


@router.get("/login", response_class=HTMLResponse)
async def login_form(request: Request) -> Response:
    return page(request, "login.html", None)


@router.post("/login")
async def login(request: Request, key: Annotated[str, Form(max_length=200)] = "") -> Response:
    try:
        who = await engram_of(request).authenticate(key.strip())
    except AuthenticationError:
        return page(request, "login.html", None, 401, problem="That key is not valid (or was revoked).")
    if not who.may(Action.SEE_ALL):
        problem = f"An {who.role} key cannot review: sign in with a reviewer or admin key."
        return page(request, "login.html", None, 403, problem=problem)
    sid, _ = sessions_of(request).start(key.strip())
    response = back("/ui/")
    response.set_cookie(COOKIE, sid, httponly=True, samesite="strict", path="/ui",
                        secure=request.url.scheme == "https")  # fmt: skip
    return response


@router.post("/logout")
async def logout(request: Request, who: Reviewer, csrf: Csrf = None) -> Response:
    checked(who, csrf)
    sessions_of(request).end(request.cookies.get(COOKIE))
    response = back("/ui/login")
    response.delete_cookie(COOKIE, path="/ui")
    return response


# --- memories --------------------------------------------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
async def memories(request: Request, who: Reviewer) -> Response:
    q = request.query_params
    filters: dict[str, Any] = {name: q.get(name) or None for name in views.FILTERS}
    try:
        result = await engram_of(request).list(
            principal=who[0], limit=PAGE, cursor=q.get("cursor") or None, tags=[q["tag"]] if q.get("tag") else (),
            contains=q.get("q") or None, **filters,
        )  # fmt: skip
    except EngramError as exc:
        return failure(request, who, exc)
    return page(request, "memories.html", who, page=result, query=dict(q), kinds=views.KINDS, statuses=views.STATUSES)


@router.get("/memories/{memory_id}", response_class=HTMLResponse)
async def memory(request: Request, memory_id: str, who: Reviewer) -> Response:
    return await _memory_page(request, memory_id, who)


async def _memory_page(request: Request, memory_id: str, who: Reviewer, status: int = 200, **extra: Any) -> Response:
    engram, principal = engram_of(request), who[0]
    reveal = request.query_params.get("reveal") == "1" and principal.may(Action.REVEAL_PII)
    try:
        mem = await engram.get(memory_id, principal=principal, reveal=reveal)
        history = await engram.history(memory_id, principal=principal)
        relations = await engram.relations_of(memory_id, principal=principal)
        receipts = await engram.receipts_for(memory_id, principal=principal, limit=20)
    except EngramError as exc:
        return failure(request, who, exc)
    return page(
        request, "memory.html", who, status, memory=mem, changes=views.changes(history), relations=relations,
        receipts=receipts, revealed=reveal, can_reveal=principal.may(Action.REVEAL_PII), **extra,
    )  # fmt: skip


@router.post("/memories/{memory_id}/correct")
async def correct(
    request: Request,
    memory_id: str,
    who: Reviewer,
    content: Annotated[str, Form(max_length=12_000)],
    revision: Annotated[int, Form()],
    csrf: Csrf = None,
) -> Response:
    checked(who, csrf)
    try:
        await engram_of(request).update(memory_id, {"content": content}, expected_revision=revision,
                                        principal=who[0], actor="ui")  # fmt: skip
    except RevisionConflict as exc:
        problem = (f"Someone changed this memory first: it is at revision {exc.current_revision} now, yours was "
                   f"{revision}. Your text is below; check the current one and correct again.")  # fmt: skip
        return await _memory_page(request, memory_id, who, 409, problem=problem, draft=content)
    except EngramError as exc:
        return await _memory_page(request, memory_id, who, 422, problem=exc.message, draft=content)
    return back(f"/ui/memories/{memory_id}")


@router.post("/memories/{memory_id}/{action}")
async def act(
    request: Request,
    memory_id: str,
    action: str,
    who: Reviewer,
    csrf: Csrf = None,
    next: Annotated[str | None, Form()] = None,
) -> Response:
    checked(who, csrf)
    engram, principal = engram_of(request), who[0]
    try:
        if action == "archive":
            await engram.archive(memory_id, principal=principal, actor="ui")
        elif action == "unarchive":
            await engram.unarchive(memory_id, principal=principal, actor="ui")
        elif action == "approve":
            await engram.approve(memory_id, principal=principal, actor="ui")
        elif action == "reject":
            await engram.reject(memory_id, principal=principal, actor="ui")
        elif action == "delete":
            certificate = await engram.delete(memory_id, principal=principal, actor="ui")
            return page(request, "certificate.html", who, certificate=certificate)
        else:
            return page(request, "error.html", who, 404, error=EngramError(f"no action {action!r}"))
    except EngramError as exc:
        return failure(request, who, exc)
    # Back where the form was (the approval queue, say); only to a page of the UI, never elsewhere.
    return back(next if next and next.startswith("/ui/") and "//" not in next else f"/ui/memories/{memory_id}")


# --- approvals, receipts, dashboard ----------------------------------------------------------------------


@router.get("/approvals", response_class=HTMLResponse)
async def approvals(request: Request, who: Reviewer) -> Response:
    try:
        queue = await engram_of(request).approvals(principal=who[0], limit=PAGE,
                                                   cursor=request.query_params.get("cursor") or None)  # fmt: skip
    except EngramError as exc:
        return failure(request, who, exc)
    return page(request, "approvals.html", who, page=queue)


@router.get("/receipts/{receipt_id}", response_class=HTMLResponse)
async def receipt(request: Request, receipt_id: str, who: Reviewer) -> Response:
    try:
        found = await engram_of(request).receipt(receipt_id, principal=who[0])
    except EngramError as exc:
        return failure(request, who, exc)
    return page(request, "receipt.html", who, receipt=found, retrievers=views.retrievers(found))


@router.get("/dashboard", response_class=HTMLResponse)
async def dashboard(request: Request, who: Reviewer) -> Response:
    try:
        stats = await engram_of(request).tenant_stats(principal=who[0])
    except EngramError as exc:
        return failure(request, who, exc)
    return page(request, "dashboard.html", who, stats=stats, kinds=views.KINDS, statuses=views.STATUSES)
