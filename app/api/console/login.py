"""The console's front door: sign in with an API key, sign out."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request, Response
from starlette.concurrency import run_in_threadpool

from app.api.console.auth import clear_session_cookie, console_keys, same_origin, set_session_cookie
from app.api.console.rendering import ConsoleRoute, page, redirect, safe_next

router = APIRouter(prefix="/console", route_class=ConsoleRoute)


@router.get("")
async def console_home(request: Request) -> Response:
    return redirect(request, "/console/sessions")


@router.get("/login")
async def login_form(request: Request, next: str | None = None) -> Response:
    if not await run_in_threadpool(console_keys(request).required):
        return redirect(request, safe_next(next))
    return page(request, "login.html", {"user": None, "next": safe_next(next), "error": None})


@router.post("/login", dependencies=[Depends(same_origin)])
async def login(
    request: Request,
    api_key: Annotated[str, Form(max_length=4096)] = "",
    next: Annotated[str, Form(max_length=2048)] = "/console",
) -> Response:
    keys = console_keys(request)
    token = await run_in_threadpool(keys.token_for, api_key.strip())
    if token is None:
        context = {"user": None, "next": safe_next(next), "error": "That API key is not valid."}
        return page(request, "login.html", context, status=401)
    response = redirect(request, safe_next(next))
    set_session_cookie(response, token, secure=request.url.scheme == "https")
    return response


@router.post("/logout", dependencies=[Depends(same_origin)])
async def logout(request: Request) -> Response:
    response = redirect(request, "/console/login")
    clear_session_cookie(response)
    return response
