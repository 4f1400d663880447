"""A long message (a big tool output) is indexed by its first 32 KB, so that indexing never holds the
write lock for long (1 MB of base64 took most of a second); keyword search still finds a term
anywhere in it, and its search text, snippets and expand are whole."""

from __future__ import annotations

import base64
import random

import httpx
import pytest

from app.db.sqlite.message_fts import MAX_INDEXED_CHARS
from tests.helpers.messages import tool_call, tool_result, user

LONG = base64.b64encode(random.Random(3).randbytes(200_000)).decode()


async def archived(client: httpx.AsyncClient, session_id: str, output: str) -> None:
    messages = [
        user("dump the blob"),
        tool_call("t1", "exec", {"command": "cat blob"}),
        tool_result("t1", "exec", output),
    ]
    assert (
        await client.post("/after-turn", json={"sessionId": session_id, "messages": messages})
    ).status_code == 200
    commit = await client.post(
        f"/sessions/{session_id}/commit", json={"keepRecentCount": 0, "wait": True}
    )
    assert commit.json()["archive"]["status"] == "completed"


async def search(client: httpx.AsyncClient, session_id: str, query: str, **options: object) -> dict:
    response = await client.post(
        "/archives/search", json={"sessionId": session_id, "query": query, **options}
    )
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("case_sensitive", [False, True])
async def test_keyword_search_finds_a_term_past_the_indexed_part(
    client: httpx.AsyncClient, case_sensitive: bool
) -> None:
    output = f"{LONG}\nTAIL-MARKER-7Q deploy finished at the very end"
    assert len(output) > 5 * MAX_INDEXED_CHARS
    await archived(client, "s-long", output)
    found = await search(client, "s-long", "TAIL-MARKER-7Q finished", caseSensitive=case_sensitive)
    assert [hit["seq"] for hit in found["results"] if hit["kind"] == "message"] == [3]
    assert "TAIL-MARKER-7Q" in found["results"][0]["snippet"]
    # Keyword mode ranks partial matches after whole ones and says so: none holds both words here.
    partial = await search(client, "s-long", "TAIL-MARKER-7Q absent-word")
    assert partial["count"] >= 1 and all(
        hit.get("match") == "partial" for hit in partial["results"]
    )
    # A short message of the same session is still found through the index alone.
    short = (await search(client, "s-long", "dump the blob"))["results"]
    assert [h["seq"] for h in short if h["kind"] == "message" and h.get("match") == "all"] == [1]
    # The whole output is kept: expand returns it, regex search sees its end.
    expand = (await client.get("/archives/archive_001", params={"sessionId": "s-long"})).json()
    assert expand["messages"][2]["message"]["content"][0]["text"] == output
    assert (await search(client, "s-long", r"very\s+end$", mode="regex"))["count"] == 1


async def test_long_messages_of_other_sessions_are_not_candidates(
    client: httpx.AsyncClient,
) -> None:
    await archived(client, "s-one", f"{LONG}\nONLY-HERE-3K")
    await archived(client, "s-two", f"{LONG}\nsomething else")
    # Quoted: the exact text, not its word parts (a two-character part occurs in any long base64).
    assert (await search(client, "s-one", '"ONLY-HERE-3K"'))["count"] == 1
    assert (await search(client, "s-two", '"ONLY-HERE-3K"'))["count"] == 0
