"""Requests that once got a 500, a response off its schema or an undocumented answer: each now gets
the 4xx envelope (or the documented shape) it should."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from app.api.schemas.memories import MemoryObject
from tests.helpers.messages import assistant, user

# --- helpers -------------------------------------------------------------------------------


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "details"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    return body


async def add_memory(
    client: httpx.AsyncClient, content: str, category: str = "entities"
) -> dict[str, Any]:
    response = await client.post("/memories", json={"content": content, "category": category})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["action"] == "ADD", body
    return body["memory"]  # type: ignore[no-any-return]


async def openapi_operation(client: httpx.AsyncClient, path: str, method: str) -> dict[str, Any]:
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    return response.json()["paths"][path][method]  # type: ignore[no-any-return]


# --- 500s ----------------------------------------------------------------------------------


async def test_an_archive_offset_past_the_database_integer_is_400(
    client: httpx.AsyncClient,
) -> None:
    # Was a 500: the offset reached SQLite, which cannot bind an integer that large.
    await client.post(
        "/after-turn", json={"sessionId": "s-off", "messages": [user("hi"), assistant("hello")]}
    )
    commit = await client.post("/sessions/s-off/commit", json={"keepRecentCount": 0, "wait": True})
    archive_id = commit.json()["archiveId"]
    response = await client.get(
        f"/archives/{archive_id}", params={"sessionId": "s-off", "offset": 420867343482640907894784}
    )
    body = assert_envelope(response, 400, "INVALID_ARGUMENT")
    assert body["error"]["details"]["errors"][0]["loc"] == ["query", "offset"]
    # The largest offset allowed still answers, with no messages left to show.
    largest = await client.get(
        f"/archives/{archive_id}", params={"sessionId": "s-off", "offset": 2**31 - 1}
    )
    assert largest.status_code == 200, largest.text
    assert largest.json()["messages"] == []


# --- responses off their schema ------------------------------------------------------------


async def test_a_committed_memory_keeps_its_null_fields(client: httpx.AsyncClient) -> None:
    # The memory object lost observedAt, supersededBy and embeddingModel (required, nullable).
    memory = await add_memory(client, "The staging database runs on port 5433")
    MemoryObject.model_validate(memory)
    assert (
        memory["observedAt"] is None
        and memory["supersededBy"] is None
        and memory["embeddingModel"] is None
    )
    refused = await client.post(
        "/memories",
        json={"content": "secret", "category": "entities", "sensitivity": "never-store"},
    )
    assert refused.json() == {"action": "NONE", "reason": "never-store"}


async def test_export_errors_are_documented_as_json(client: httpx.AsyncClient) -> None:
    # The 4xx of /memories/export were documented as text/plain, and 200 as text/plain too.
    response = await client.get("/memories/export", headers={"X-User-Id": "u" * 257})
    assert_envelope(response, 400, "INVALID_ARGUMENT")
    operation = await openapi_operation(client, "/memories/export", "get")
    assert set(operation["responses"]["200"]["content"]) == {"application/x-ndjson"}
    for status in ("400", "401", "404", "413", "500"):
        assert set(operation["responses"][status]["content"]) == {"application/json"}, status


# --- undocumented answers ------------------------------------------------------------------


async def test_a_stale_memory_version_is_a_documented_409(client: httpx.AsyncClient) -> None:
    memory = await add_memory(client, "The release train leaves on Thursdays")
    response = await client.patch(
        f"/memories/{memory['id']}", json={"content": "Fridays"}, headers={"If-Match": "0"}
    )
    body = assert_envelope(response, 409, "CONFLICT")
    assert body["error"]["details"] == {"currentVersion": 1}
    operation = await openapi_operation(client, "/memories/{memoryId}", "patch")
    assert "409" in operation["responses"]


@pytest.mark.parametrize(
    ("path", "allow"),
    [
        ("/memories/some-id", "DELETE, GET, PATCH"),
        ("/sessions/some-session", "DELETE, GET"),
        ("/archives/search", "POST"),
        ("/memories", "GET, POST"),
    ],
)
async def test_a_405_allows_every_method_of_the_path(
    client: httpx.AsyncClient, path: str, allow: str
) -> None:
    # The router named only the first route matching the path (GET for /memories/{memoryId}).
    response = await client.request("OPTIONS", path)
    assert_envelope(response, 405, "INVALID_ARGUMENT")
    assert response.headers["allow"] == allow


# --- schema-valid requests refused, schema-violating ones accepted -------------------------


async def test_patch_with_null_category_and_sensitivity_changes_neither(
    client: httpx.AsyncClient,
) -> None:
    # The schema allows null; the service answered 400 "unknown category None".
    memory = await add_memory(client, "The on-call phone is in the blue drawer")
    response = await client.patch(
        f"/memories/{memory['id']}", json={"category": None, "sensitivity": None, "priority": 3}
    )
    assert response.status_code == 200, response.text
    patched = response.json()
    assert (patched["category"], patched["sensitivity"], patched["priority"]) == (
        "entities",
        "allowed",
        3,
    )
    assert (patched["ownerKind"], patched["ownerId"], patched["uri"]) == (
        memory["ownerKind"],
        memory["ownerId"],
        memory["uri"],
    )


async def test_if_match_is_documented_and_checked_as_a_version(client: httpx.AsyncClient) -> None:
    memory = await add_memory(client, "The printer on floor two jams on A3")
    url = f"/memories/{memory['id']}"
    assert_envelope(
        await client.patch(url, json={"priority": 1}, headers={"If-Match": "null"}),
        400,
        "INVALID_ARGUMENT",
    )
    weak = await client.patch(url, json={"priority": 1}, headers={"If-Match": 'W/"1"'})
    assert weak.status_code == 200, weak.text
    operation = await openapi_operation(client, "/memories/{memoryId}", "patch")
    header = next(p for p in operation["parameters"] if p["name"] == "If-Match")
    # A string with the version pattern, not a nullable one: "null" is not a version.
    assert header["schema"]["type"] == "string" and "pattern" in header["schema"]


async def test_forget_needs_days_or_subject_and_says_so(client: httpx.AsyncClient) -> None:
    assert_envelope(
        await client.post("/memories/forget", json={"dryRun": True}), 400, "INVALID_ARGUMENT"
    )
    schema = (await client.get("/openapi.json")).json()["components"]["schemas"]["ForgetRequest"]
    assert [branch["required"] for branch in schema["anyOf"]] == [["days"], ["subject"]]


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/memories/forget", {"subject": "x", "dryRun": 0}),
        ("/memories/search", {"query": "x", "explain": 0}),
        ("/memories/search", {"query": "x", "limit": "5"}),
        ("/memories/search", {"query": "x", "limit": True}),
        ("/memories", {"content": "x", "category": "entities", "confidence": False}),
        ("/memories", {"content": "x", "category": "entities", "priority": "1"}),
        ("/archives/search", {"sessionId": "s", "query": "x", "caseSensitive": 0}),
        ("/sessions/s/commit", {"keepRecentCount": True}),
        ("/sessions/s/commit", {"wait": "yes"}),
    ],
)
async def test_rest_bodies_refuse_values_of_the_wrong_json_type(
    client: httpx.AsyncClient, path: str, body: dict[str, Any]
) -> None:
    # These were coerced (0 to false, false to 0, "5" to 5) and answered 200.
    response = await client.post(path, json=body)
    assert_envelope(response, 400, "INVALID_ARGUMENT")


async def test_a_whole_float_is_still_an_integer(client: httpx.AsyncClient) -> None:
    response = await client.post("/memories/search", json={"query": "x", "limit": 5.0})
    assert response.status_code == 200, response.text
    assert_envelope(
        await client.post("/memories/search", json={"query": "x", "limit": 5.5}),
        400,
        "INVALID_ARGUMENT",
    )


# --- values the decoder reads but nothing downstream can hold ------------------------------


async def test_a_nul_in_an_archive_search_is_dropped_as_capture_drops_it(
    client: httpx.AsyncClient,
) -> None:
    # Was a 500: the NUL ended SQLite's full-text query early ("unterminated string").
    await client.post(
        "/after-turn",
        json={"sessionId": "s-nul", "messages": [user("a\x00bcd here"), assistant("ok")]},
    )
    await client.post("/sessions/s-nul/commit", json={"keepRecentCount": 0, "wait": True})
    for mode in ("keyword", "ranked"):
        response = await client.post(
            "/archives/search", json={"sessionId": "s-nul", "query": "a\x00bcd", "mode": mode}
        )
        assert response.status_code == 200, response.text
        assert [hit["seq"] for hit in response.json()["results"] if hit["kind"] == "message"] == [
            1
        ], mode
    only_nuls = await client.post(
        "/archives/search", json={"sessionId": "s-nul", "query": "\x00\x00\x00\x00"}
    )
    assert_envelope(only_nuls, 400, "INVALID_ARGUMENT")


def raw_json(value: dict[str, Any], **tokens: str) -> bytes:
    """``value`` as JSON with each ``"@name@"`` string replaced by a raw token (NaN, \\ud800)."""
    text = json.dumps(value)
    for name, token in tokens.items():
        text = text.replace(f'"@{name}@"', token)
    return text.encode()


@pytest.mark.parametrize(
    ("path", "body"),
    [
        # Each was a 500: SQLite and the response encoder cannot hold a lone surrogate.
        (
            "/after-turn",
            raw_json(
                {"sessionId": "s-u", "messages": [{"role": "user", "content": "@bad@"}]},
                bad='"a\\ud800b"',
            ),
        ),
        (
            "/assemble",
            raw_json(
                {"sessionId": "s-u", "messages": [{"role": "user", "content": "@bad@"}]},
                bad='"\\udfff"',
            ),
        ),
        (
            "/after-turn",
            raw_json(
                {
                    "sessionId": "s-u",
                    "runtimeContext": {"sessionKey": "@bad@"},
                    "messages": [user("hi")],
                },
                bad='"k\\ud800"',
            ),
        ),
        # int(inf) of the budget and of the current token count.
        (
            "/after-turn",
            raw_json({"sessionId": "s-u", "messages": [], "tokenBudget": "@bad@"}, bad="1e400"),
        ),
        ("/compact", raw_json({"sessionId": "s-u", "currentTokenCount": "@bad@"}, bad="Infinity")),
        (
            "/memories",
            raw_json({"content": "x", "category": "entities", "source": {"n": "@bad@"}}, bad="NaN"),
        ),
    ],
)
async def test_unstorable_json_values_are_400(
    client: httpx.AsyncClient, path: str, body: bytes
) -> None:
    response = await client.post(path, content=body, headers={"content-type": "application/json"})
    assert_envelope(response, 400, "INVALID_ARGUMENT")


async def test_json_nested_too_deep_to_echo_is_400(client: httpx.AsyncClient) -> None:
    # Was a 500 from /assemble: the echoed message ran past the response encoder's depth.
    deep: Any = "leaf"
    for _ in range(300):
        deep = [deep]
    messages = [{"role": "user", "content": "hi", "extra": deep}]
    for path in ("/after-turn", "/assemble"):
        response = await client.post(path, json={"sessionId": "s-deep", "messages": messages})
        body = assert_envelope(response, 400, "INVALID_ARGUMENT")
        assert "nested" in body["error"]["message"]
    # Depth well within the bound still goes through.
    shallow: Any = "leaf"
    for _ in range(50):
        shallow = [shallow]
    ok = await client.post(
        "/after-turn", json={"sessionId": "s-deep", "messages": [user("hi", extra=shallow)]}
    )
    assert ok.status_code == 200, ok.text


# --- /memories/import and the list cursor --------------------------------------------------

RECORD = {
    "id": "7d5c4b1e-0000-4000-8000-000000000001",
    "uri": "viking://user/default/memories/entities/x.md",
    "category": "entities",
    "content": "The lab door code changed",
    "ownerKind": "user",
    "ownerId": "default",
}


@pytest.mark.parametrize(
    "change",
    [
        {"content": 5},
        {"content": None},
        {"confidence": "abc"},
        {"confidence": None},
        {"priority": "x"},
        {"priority": 2**70},
        {"version": None},
        {"expiresAt": "garbage"},
        {"createdAt": 5},
        {"observedAt": "2020-13-45"},
        {"id": 5},
        {"uri": None},
        {"ownerKind": 5},
        {"ownerId": None},
        {"title": 5},
        {"source": "text"},
        {"supersededBy": 5},
    ],
)
async def test_import_refuses_a_record_with_a_bad_field(
    client: httpx.AsyncClient, change: dict[str, Any]
) -> None:
    # Each was a 500 (int(), float(), fromisoformat() or the database on an unchecked value), or was
    # stored and made every later read of the memory a 500.
    response = await client.post(
        "/memories/import", content=json.dumps({**RECORD, **change}) + "\n"
    )
    body = assert_envelope(response, 400, "INVALID_ARGUMENT")
    assert body["error"]["details"]["line"] == 1
    assert (await client.get("/memories/export")).text == ""


@pytest.mark.parametrize("line", ["[" * 100_000, '{"id": "x", "confidence": NaN}'])
async def test_import_refuses_lines_json_cannot_carry(client: httpx.AsyncClient, line: str) -> None:
    response = await client.post("/memories/import", content=line + "\n")
    assert_envelope(response, 400, "INVALID_ARGUMENT")


async def test_import_takes_a_time_without_offset_as_utc(client: httpx.AsyncClient) -> None:
    # Was a 500: the naive time reached a UTC column.
    record = {**RECORD, "createdAt": "2020-01-02T03:04:05", "expiresAt": "2099-01-01"}
    response = await client.post("/memories/import", content=json.dumps(record) + "\n")
    assert response.status_code == 200, response.text
    stored = (await client.get(f"/memories/{RECORD['id']}")).json()
    assert stored["createdAt"].startswith("2020-01-02T03:04:05") and stored["expiresAt"].startswith(
        "2099-01-01T00:00:00"
    )


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("9999-12-31T23:59:59-10:00", "9999-12-31T23:59:59.999"),
        ("0001-01-01T00:00:00+05:00", "0001-01-01T00:00:00"),
    ],
)
async def test_import_keeps_a_time_past_the_utc_range_at_its_edge(
    client: httpx.AsyncClient, given: str, stored: str
) -> None:
    # Was a 500, then a 400 for a time the schema calls valid: past year 9999 (or before year 1) in
    # UTC, the nearest time the database holds says the same ("never expires").
    response = await client.post(
        "/memories/import", content=json.dumps({**RECORD, "expiresAt": given}) + "\n"
    )
    assert response.status_code == 200, response.text
    assert (await client.get(f"/memories/{RECORD['id']}")).json()["expiresAt"].startswith(stored)


async def test_import_documents_its_body(client: httpx.AsyncClient) -> None:
    operation = await openapi_operation(client, "/memories/import", "post")
    assert "application/x-ndjson" in operation["requestBody"]["content"]


@pytest.mark.parametrize(
    "cursor",
    ["2020-01-01|abc", "2020-01-01", "0001-01-01T00:00:00+05:00|x", "123456789012345678|x"],
)
async def test_a_list_cursor_the_service_never_returned_is_400(
    client: httpx.AsyncClient, cursor: str
) -> None:
    # Was a 500: a time without offset, or one before year 1 in UTC, reached the database.
    response = await client.get("/memories", params={"cursor": cursor})
    body = assert_envelope(response, 400, "INVALID_ARGUMENT")
    assert body["error"]["details"]["errors"][0]["loc"] == ["query", "cursor"]


async def test_an_earlier_message_with_a_list_as_tool_call_id_is_captured(
    client: httpx.AsyncClient,
) -> None:
    # Was a 500: capture's pre-filter put the host's toolCallId (here a list) in a set.
    snapshot = [
        {"role": "user", "content": "first"},
        {"role": "user", "content": "0", "toolCallId": []},
    ]
    response = await client.post("/after-turn", json={"sessionId": "s-ids", "messages": snapshot})
    assert response.status_code == 200, response.text
    again = await client.post(
        "/after-turn",
        json={
            "sessionId": "s-ids",
            "messages": [*snapshot, user("next")],
            "prePromptMessageCount": 2,
        },
    )
    assert again.status_code == 200, again.text
    assert (again.json()["ingested"], again.json()["duplicates"]) == (1, 0)


async def test_a_stored_assistant_with_an_odd_stop_reason_is_assembled(
    client: httpx.AsyncClient,
) -> None:
    # Was a 500: the pairing repair looked the stopReason (here a list) up in a set.
    call = {
        "role": "assistant",
        "stopReason": ["error"],
        "content": [
            {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a.py"}}
        ],
    }
    result = {
        "role": "toolResult",
        "toolCallId": "c1",
        "toolName": "read",
        "content": [{"type": "text", "text": "x"}],
    }
    messages = [user("read a.py"), call, result]
    stored = await client.post("/after-turn", json={"sessionId": "s-stop", "messages": messages})
    assert stored.status_code == 200, stored.text
    response = await client.post(
        "/assemble", json={"sessionId": "s-stop", "messages": messages, "prompt": "next?"}
    )
    assert response.status_code == 200, response.text
    assert [m["role"] for m in response.json()["messages"]] == ["user", "assistant", "toolResult"]


async def test_block_type_that_is_not_a_string_is_stored_not_a_500(client):
    odd = {
        "role": "user",
        "content": [
            {"type": ["text"], "text": "hi"},
            {"type": {"k": 1}},
            {"type": "text", "text": "ok"},
        ],
    }
    stored = await client.post("/after-turn", json={"sessionId": "odd", "messages": [odd]})
    assembled = await client.post(
        "/assemble", json={"sessionId": "odd", "messages": [odd], "prompt": "x"}
    )
    assert stored.status_code == 200 and stored.json()["ingested"] == 1
    returned = assembled.json()["messages"]
    # Every assembled message is dated; the undated stored one gets the current time.
    assert assembled.status_code == 200 and isinstance(returned[0].pop("timestamp"), int)
    assert returned == [odd]


async def test_a_relative_day_past_the_calendar_is_no_date(client: httpx.AsyncClient) -> None:
    # Was a 500: "3000000天后" (3,000,000 days later) resolved past year 9999 and raised, in the
    # memory's index text and in the query of a search.
    text = "我们99999999999天前见过，3000000天后再见"
    memory = await add_memory(client, text)
    found = await client.post("/memories/search", json={"query": text, "mode": "bm25"})
    assert found.status_code == 200, found.text
    assert [hit["id"] for hit in found.json()["results"]] == [memory["id"]]
    await client.post(
        "/after-turn", json={"sessionId": "s-days", "messages": [user(text), assistant("ok")]}
    )
    await client.post("/sessions/s-days/commit", json={"keepRecentCount": 0, "wait": True})
    ranked = await client.post(
        "/archives/search", json={"sessionId": "s-days", "query": text, "mode": "ranked"}
    )
    assert ranked.status_code == 200, ranked.text
    assert ranked.json()["count"] >= 1
