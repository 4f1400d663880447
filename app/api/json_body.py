"""Request bodies of the JSON API, decoded once and checked at C speed where their bytes allow.

Every request body model refuses what JSON can carry but the service cannot store or answer: lone
UTF-16 surrogates, non-finite numbers, nesting past the echo limit (schemas/base.py,
``json_value_problem``). Walking every value of the decoded body in Python to find them costs
more than decoding it (the history a host sends with every pre-prompt assemble is large). So
bodies are decoded by pydantic-core's JSON parser (``from_json``), which is faster than
``json.loads`` and refuses two of the three outright: it reads only well-formed
UTF-8, answers an error for a lone surrogate escape, and reads no ``NaN`` or ``Infinity``
(``allow_inf_nan=False``). What it does read, it reads as ``json.loads`` would. Only the
containers, and the floats (a literal such as ``1e400`` still reads as infinity), are then walked.

A body the parser refuses is decoded again by ``json.loads``, as Starlette decodes it: malformed
JSON gets the same error as ever, and a body with a constant, a lone surrogate, a byte-order mark
or a UTF-16 encoding is walked whole by the model and answered as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi.routing import APIRoute
from pydantic_core import from_json
from starlette.requests import Request
from starlette.responses import Response

from app.api.schemas.base import CheckedJson, nesting_and_numbers_fit


def decode_body(body: bytes) -> Any:
    """The decoded body, marked CheckedJson where the parser and the walk show it storable."""
    try:
        data = from_json(body, allow_inf_nan=False, cache_strings="keys")
    except ValueError:
        return json.loads(body)  # json.JSONDecodeError for malformed JSON, as Starlette raises it
    if type(data) is dict and nesting_and_numbers_fit(data):
        return CheckedJson(data)
    return data


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
