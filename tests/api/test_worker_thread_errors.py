"""A use case that fails in a worker thread answers 500, whatever it raised.

StopIteration (a ``next()`` that found nothing) cannot be handed to an asyncio future: without
app/core/threads.py the request it was part of never answered.
"""

from __future__ import annotations

import asyncio

import pytest

import app.assembly.service as assembly_service
import app.memory.service as memory_service
from tests.conftest import app_client


def found_nothing(*_args: object) -> None:
    raise StopIteration


async def bounded(call):  # type: ignore[no-untyped-def]
    return await asyncio.wait_for(call, timeout=30)


@pytest.mark.parametrize(
    ("module", "name", "path", "body"),
    [
        (
            assembly_service,
            "assemble_pre_prompt",
            "/assemble",
            {"sessionId": "s", "messages": [], "prompt": "hi"},
        ),
        (
            memory_service,
            "clean_new_memory",
            "/memories",
            {"content": "likes tea", "category": "preferences"},
        ),
    ],
)
async def test_stop_iteration_in_a_worker_thread_is_a_500(
    make_settings, monkeypatch, module, name, path, body
):
    monkeypatch.setattr(module, name, found_nothing)
    async with app_client(make_settings(), raise_app_exceptions=False) as client:
        response = await bounded(client.post(path, json=body))
        assert response.status_code == 500
        assert response.json()["error"]["code"] == "INTERNAL"
        # The service goes on answering.
        assert (await bounded(client.get("/healthz"))).status_code == 200
