"""The MCP server at /mcp: the official SDK's streamable HTTP transport behind the API's keys.

Stateless: every POST is a whole exchange (JSON answers, no server-sent stream), so a request's
API key decides its tenant for that request alone, and a client of one tenant can never reach a
session opened by another. The key is checked here, by the API's own rules (docs/api.md,
Identity), before the SDK sees the request: 401 with the API's error envelope without one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import mcp_types as types
from fastapi import FastAPI
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app import __version__
from app.api.deps import Identity, get_identity, services_of
from app.api.mcp.handlers import HANDLERS, ToolInputError
from app.api.mcp.tools import TOOLS
from app.errors import AppError
from app.keys.service import READ_SENSITIVE_SCOPE
from app.memory.service import Caller

PATH = "/mcp"
_IDENTITY = "ce_identity"
INSTRUCTIONS = (
    "context-engine keeps agents' conversations losslessly: archives of older messages, searchable, "
    "and long-term memories about the user. Use sessions_list to find a session, archive_search "
    "and archive_expand to read it, memory_search and memory_commit for memories."
)


async def _list_tools(
    _ctx: ServerRequestContext[Any, Any], _params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(
                name=name,
                title=tool["title"],
                description=tool["description"],
                input_schema=tool["inputSchema"],
            )
            for name, tool in TOOLS.items()
        ]
    )


async def _call_tool(
    ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    handler = HANDLERS.get(params.name)
    if handler is None:
        return _error(f"unknown tool {params.name}")
    request = ctx.request
    if not isinstance(request, Request):
        return _error("this tool needs an HTTP request")
    services = services_of(request)
    caller = _caller(request.scope.get("state", {}).get(_IDENTITY), request)
    try:
        text = await handler(services, caller, dict(params.arguments or {}))
    except ToolInputError as exc:
        return _error(str(exc))
    except AppError as exc:
        return _error(f"{params.name} failed: {exc.message}")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


def _caller(identity: Identity | None, request: Request) -> Caller:
    if identity is None:
        raise RuntimeError("the MCP request reached a tool without an identity")
    user = request.headers.get("x-user-id")
    return Caller(
        tenant_id=identity.tenant_id,
        user_id=user or "default",
        agent_id="main",
        can_read_sensitive=identity.scopes is None or READ_SENSITIVE_SCOPE in identity.scopes,
        user_from_header=user is not None,
    )


def mcp_server() -> Server[Any]:
    return Server(
        "context-engine",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
    )


class McpEndpoint:
    """The ASGI endpoint at /mcp: the API key first, then the SDK's transport (a new one for
    each run of the app's lifespan: the SDK's manager runs once)."""

    def __init__(self) -> None:
        self.manager: StreamableHTTPSessionManager | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            identity = await get_identity(request, request.headers.get("authorization"))
        except AppError as exc:
            await _envelope(exc)(scope, receive, send)
            return
        if self.manager is None:
            await _envelope(AppError("the MCP server is not running"))(scope, receive, send)
            return
        scope.setdefault("state", {})[_IDENTITY] = identity
        await self.manager.handle_request(scope, receive, send)


def _envelope(exc: AppError) -> JSONResponse:
    body = {"error": {"code": exc.code, "message": exc.message, "details": exc.details}}
    headers = dict(exc.headers)
    if exc.http_status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return JSONResponse(body, status_code=exc.http_status, headers=headers)


def mount_mcp(app: FastAPI, endpoint: McpEndpoint) -> None:
    """Route /mcp to the endpoint; the app's lifespan runs it (``running``)."""
    app.router.routes.append(Route(PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"]))


@asynccontextmanager
async def running(endpoint: McpEndpoint | None) -> AsyncIterator[None]:
    """The SDK's transport for the duration of the app's lifespan (nothing without an endpoint)."""
    if endpoint is None:
        yield
        return
    endpoint.manager = StreamableHTTPSessionManager(
        app=mcp_server(), json_response=True, stateless=True
    )
    try:
        async with endpoint.manager.run():
            yield
    finally:
        endpoint.manager = None
