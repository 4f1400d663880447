"""/openapi.json, /docs and /redoc: behind the API key whenever keys are configured (the document
maps the whole attack surface); open on the keyless loopback default, like everything else."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse

from app.api.deps import TenantDep

router = APIRouter(include_in_schema=False)


@router.get("/openapi.json")
async def openapi_document(request: Request, _tenant: TenantDep) -> JSONResponse:
    return JSONResponse(request.app.openapi())


@router.get("/docs")
async def swagger_ui(_tenant: TenantDep) -> HTMLResponse:
    return get_swagger_ui_html(openapi_url="/openapi.json", title="context-engine")


@router.get("/redoc")
async def redoc(_tenant: TenantDep) -> HTMLResponse:
    return get_redoc_html(openapi_url="/openapi.json", title="context-engine")
