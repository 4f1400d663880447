"""Request bodies of the JSON API, decoded once and checked at C speed where their bytes allow.

Every request body model refuses what JSON can carry but the service cannot store or answer: lone
UTF-16 surrogates, non-finite numbers, nesting past the echo limit (schemas/base.py,
``json_value_problem``). Walking every value of the decoded body in Python to find them costs
more than decoding it (about 6 ms for the 600 KB history a host sends with every pre-prompt
assemble). Here the decoder reports every ``NaN``, ``Infinity`` and float it reads (its
``parse_constant`` and ``parse_float`` hooks: only numbers with a fraction or an exponent pass
through Python), a UTF-8 body can only decode to a lone surrogate through a ``\\uD800``-
``\\uDFFF`` escape or through surrogate bytes (``ED A0``-``ED BF``, decoded with surrogatepass),
which a byte search rules out, and only the nesting is walked, containers only. A body where any
of these turns up is walked whole by the model, as before, and answered with the same error.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi.routing import APIRoute
from starlette.requests import Request
from starlette.responses import Response

from app.api.schemas.base import CheckedJson, nested_deeper_than

_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
_SURROGATE_BYTES = re.compile(rb"\xed[\xa0-\xbf]")


def decode_body(body: bytes) -> Any:
    """The decoded body (json.loads, as Starlette decodes it), marked CheckedJson where the
    numbers, the bytes and the nesting show it storable."""
    unsure = False

    def constant(name: str) -> float:
        nonlocal unsure
        unsure = True
        return float(name)  # NaN, Infinity, -Infinity: what json.loads makes of them

    def number(literal: str) -> float:
        nonlocal unsure
        value = float(literal)
        unsure = unsure or not math.isfinite(value)
        return value

    data = json.loads(body, parse_constant=constant, parse_float=number)
    if (
        unsure
        or type(data) is not dict
        or json.detect_encoding(body) != "utf-8"
        or _may_hold_a_surrogate(body)
        or nested_deeper_than(data)
    ):
        return data
    return CheckedJson(data)


def _may_hold_a_surrogate(body: bytes) -> bool:
    # A byte search first: both patterns start with bytes most bodies never hold.
    return bool(
        (b"\\u" in body and _SURROGATE_ESCAPE.search(body))
        or (b"\xed" in body and _SURROGATE_BYTES.search(body))
    )


class JsonRequest(Request):
    """A request whose JSON body goes through ``decode_body``."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = decode_body(await self.body())
        return self._json


class JsonRoute(APIRoute):
    """The route class of the JSON API routers: their endpoints read bodies as JsonRequest."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def handler(request: Request) -> Response:
            return await handle(JsonRequest(request.scope, request.receive))

        return handler
