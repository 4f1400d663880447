"""The error envelope, body limits and request ids (docs/api.md, Conventions: Errors)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from tests.conftest import app_client
from tests.helpers.messages import assistant, user

JSON = {"content-type": "application/json"}
LIMIT = 2048


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    assert response.headers.get("x-request-id")
    return body


async def seed(client: httpx.AsyncClient, session_id: str = "s-err") -> None:
    """A session with one completed archive and two live messages."""
    response = await client.post(
        "/after-turn",
        json={
            "sessionId": session_id,
            "messages": [
                user("stored question about invoices"),
                assistant("stored answer about invoices"),
            ],
        },
    )
    assert response.status_code == 200
    response = await client.post(
        f"/sessions/{session_id}/commit", json={"keepRecentCount": 0, "wait": True}
    )
    assert response.json()["archive"]["status"] == "completed"
    response = await client.post(
        "/after-turn",
        json={
            "sessionId": session_id,
            "messages": [
                user("live follow-up"),
                assistant("live reply"),
            ],
        },
    )
    assert response.status_code == 200


async def snapshot(client: httpx.AsyncClient, session_id: str = "s-err") -> tuple[Any, Any, Any]:
    session = await client.get(f"/sessions/{session_id}")
    archive = await client.get("/archives/archive_001", params={"sessionId": session_id})
    search = await client.post(
        "/archives/search", json={"sessionId": session_id, "query": "invoices"}
    )
    assert session.status_code == archive.status_code == search.status_code == 200
    return session.json(), archive.json(), search.json()["results"]


async def chunks(data: bytes, size: int = 512) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


def big_turn(session_id: str = "s-err") -> bytes:
    body = json.dumps({"sessionId": session_id, "messages": [user("padding " * 400)]}).encode()
    assert len(body) > LIMIT
    return body


# --- envelopes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b'{"sessionId": ',
        b"not json at all",
        b'{"sessionId": "s", "messages": [}',
        b"\xff\xfe\x00garbage",
    ],
)
async def test_malformed_json_is_400(client: httpx.AsyncClient, raw: bytes) -> None:
    for path in ("/after-turn", "/assemble", "/compact", "/archives/search", "/sessions/s/commit"):
        response = await client.post(path, content=raw, headers=JSON)
        assert_envelope(response, 400, "INVALID_ARGUMENT")


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/after-turn", {"sessionId": 123, "messages": []}, "sessionId"),
        ("/after-turn", {"sessionId": "s", "messages": "not a list"}, "messages"),
        (
            "/after-turn",
            {"sessionId": "s", "messages": [], "prePromptMessageCount": "many"},
            "prePromptMessageCount",
        ),
        ("/after-turn", {"messages": []}, "sessionId"),
        ("/after-turn", {"sessionId": "", "messages": []}, "sessionId"),
        ("/assemble", {"sessionId": "s", "messages": {"role": "user"}}, "messages"),
        ("/assemble", {"sessionId": ["s"], "messages": []}, "sessionId"),
        ("/compact", {"sessionId": "s", "timeoutMs": 600001}, "timeoutMs"),
        ("/archives/search", {"sessionId": "s", "query": 5}, "query"),
        ("/archives/search", {"sessionId": "s", "query": "q", "limit": "ten"}, "limit"),
        ("/sessions/s/commit", {"keepRecentCount": "all"}, "keepRecentCount"),
    ],
)
async def test_wrong_types_are_400_with_error_list(
    client: httpx.AsyncClient, path: str, body: Any, field: str
) -> None:
    response = await client.post(path, json=body)
    envelope = assert_envelope(response, 400, "INVALID_ARGUMENT")
    errors = envelope["error"]["details"]["errors"]
    assert errors and all(set(e) == {"loc", "message"} for e in errors)
    assert all(
        isinstance(e["loc"], list) and isinstance(e["message"], str) and e["message"]
        for e in errors
    )
    assert any(field in e["loc"] for e in errors), errors


async def test_wrong_types_report_every_field(client: httpx.AsyncClient) -> None:
    response = await client.post("/after-turn", json={"sessionId": 5, "messages": "abc"})
    errors = assert_envelope(response, 400, "INVALID_ARGUMENT")["error"]["details"]["errors"]
    assert {tuple(e["loc"]) for e in errors} >= {("body", "sessionId"), ("body", "messages")}


async def test_body_must_be_an_object(client: httpx.AsyncClient) -> None:
    for raw in (b"[]", b'"text"', b"42", b"null"):
        response = await client.post("/after-turn", content=raw, headers=JSON)
        assert_envelope(response, 400, "INVALID_ARGUMENT")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/no/such/route"),
        ("POST", "/v2/after-turn"),
        ("GET", "/sessions"),
        ("DELETE", "/archives"),
    ],
)
async def test_unknown_route_is_404(client: httpx.AsyncClient, method: str, path: str) -> None:
    response = await client.request(method, path)
    assert_envelope(response, 404, "NOT_FOUND")


async def test_wrong_method_has_an_envelope(client: httpx.AsyncClient) -> None:
    response = await client.get("/after-turn")
    assert response.status_code == 405
    body = response.json()
    assert body["error"]["code"] and body["error"]["message"]
    assert response.headers.get("x-request-id")


# --- body limit -------------------------------------------------------------------------------


async def test_body_over_limit_is_413(make_settings: Any) -> None:
    async with app_client(make_settings(max_body_bytes=LIMIT)) as client:
        await seed(client)
        before = await snapshot(client)
        raw = big_turn()

        with_length = client.build_request("POST", "/after-turn", content=raw, headers=JSON)
        assert with_length.headers["content-length"] == str(len(raw))
        response = await client.send(with_length)
        body = assert_envelope(response, 413, "PAYLOAD_TOO_LARGE")
        assert str(LIMIT) in body["error"]["message"]
        assert await snapshot(client) == before

        streamed = client.build_request("POST", "/after-turn", content=chunks(raw), headers=JSON)
        assert "content-length" not in streamed.headers
        assert streamed.headers.get("transfer-encoding") == "chunked"
        response = await client.send(streamed)
        assert_envelope(response, 413, "PAYLOAD_TOO_LARGE")
        assert await snapshot(client) == before

        # Other endpoints are limited the same way.
        for path in ("/assemble", "/archives/search", "/sessions/s-err/commit"):
            response = await client.post(path, content=raw, headers=JSON)
            assert_envelope(response, 413, "PAYLOAD_TOO_LARGE")
            response = await client.post(path, content=chunks(raw), headers=JSON)
            assert_envelope(response, 413, "PAYLOAD_TOO_LARGE")
        assert await snapshot(client) == before

        # A body under the limit still works, streamed or not.
        small = json.dumps({"sessionId": "s-err", "messages": [user("small one")]}).encode()
        assert len(small) < LIMIT
        ok = await client.post("/after-turn", content=chunks(small, 64), headers=JSON)
        assert ok.status_code == 200, ok.text
        assert ok.json()["ingested"] == 1


# --- request ids ------------------------------------------------------------------------------


async def test_every_response_carries_a_request_id(make_settings: Any) -> None:
    async with app_client(make_settings(max_body_bytes=LIMIT, api_keys=["k1:tenantA"])) as client:
        auth = {"Authorization": "Bearer k1"}
        responses = [
            await client.get("/healthz"),
            await client.post(
                "/after-turn", json={"sessionId": "s-id", "messages": [user("hi")]}, headers=auth
            ),
            await client.get("/sessions/s-id", headers=auth),
            await client.get("/sessions/s-id"),  # 401
            await client.get("/sessions/missing", headers=auth),  # 404
            await client.post("/after-turn", content=b"{", headers={**JSON, **auth}),  # 400
            await client.post("/after-turn", content=big_turn(), headers={**JSON, **auth}),  # 413
            await client.post(
                "/after-turn", content=chunks(big_turn()), headers={**JSON, **auth}
            ),  # 413
            await client.get("/nowhere"),  # 404
            await client.get(
                "/archives/archive_001",
                params={"sessionId": "s-id", "format": "text"},
                headers=auth,
            ),
        ]
        assert [r.status_code for r in responses] == [
            200,
            200,
            200,
            401,
            404,
            400,
            413,
            413,
            404,
            404,
        ]
        ids = [r.headers.get("x-request-id") for r in responses]
        assert all(ids), ids
        assert len(set(ids)) == len(ids)  # generated fresh for each request

        for status, send in (
            (200, lambda h: client.get("/healthz", headers=h)),
            (404, lambda h: client.get("/nowhere", headers=h)),
            (401, lambda h: client.get("/sessions/s-id", headers=h)),
            (
                400,
                lambda h: client.post("/after-turn", content=b"{", headers={**JSON, **auth, **h}),
            ),
            (
                413,
                lambda h: client.post(
                    "/after-turn", content=big_turn(), headers={**JSON, **auth, **h}
                ),
            ),
            (
                413,
                lambda h: client.post(
                    "/after-turn", content=chunks(big_turn()), headers={**JSON, **auth, **h}
                ),
            ),
        ):
            response = await send({"X-Request-Id": f"trace-{status}-abc"})
            assert response.status_code == status
            assert response.headers["x-request-id"] == f"trace-{status}-abc"


# --- rejected requests change nothing ---------------------------------------------------------


async def test_rejected_requests_leave_stored_state_unchanged(make_settings: Any) -> None:
    async with app_client(make_settings(max_body_bytes=LIMIT)) as client:
        await seed(client)
        before = await snapshot(client)
        rejected: list[tuple[int, Any]] = [
            (
                400,
                lambda: client.post(
                    "/after-turn", content=b'{"sessionId": "s-err", "messages": [', headers=JSON
                ),
            ),
            (
                400,
                lambda: client.post(
                    "/after-turn", json={"sessionId": "s-err", "messages": "new text"}
                ),
            ),
            (
                400,
                lambda: client.post(
                    "/after-turn",
                    json={
                        "sessionId": "s-err",
                        "messages": [user("sneaky")],
                        "prePromptMessageCount": -1,
                    },
                ),
            ),
            (413, lambda: client.post("/after-turn", content=big_turn(), headers=JSON)),
            (413, lambda: client.post("/after-turn", content=chunks(big_turn()), headers=JSON)),
            (400, lambda: client.post("/sessions/s-err/commit", json={"keepRecentCount": -1})),
            (400, lambda: client.post("/sessions/s-err/commit", json={"keepRecentCount": 10001})),
            (400, lambda: client.post("/sessions/s-err/commit", content=b"{oops", headers=JSON)),
            (400, lambda: client.post("/compact", json={"sessionId": "s-err", "timeoutMs": -5})),
            (
                400,
                lambda: client.post(
                    "/archives/search", json={"sessionId": "s-err", "query": "(", "mode": "regex"}
                ),
            ),
            (404, lambda: client.delete("/sessions/s-err-other")),
            (404, lambda: client.post("/sessions/s-err-other/commit", json={"keepRecentCount": 0})),
            (
                404,
                lambda: client.post(
                    "/after-turn/s-err", json={"sessionId": "s-err", "messages": [user("x")]}
                ),
            ),
            (405, lambda: client.put("/sessions/s-err", json={"messageCount": 0})),
        ]
        for status, send in rejected:
            response = await send()
            assert response.status_code == status, response.text
            assert response.json()["error"]["code"]
            assert await snapshot(client) == before, response.request.url
