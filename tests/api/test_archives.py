"""GET /archives/{archiveId} and POST /archives/search over HTTP (docs/api.md, Archives)."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.conftest import app_client
from tests.helpers.messages import assistant, tool_call, tool_result, user

NOT_FOUND_CODE = "NOT_FOUND"


async def ingest(
    client: httpx.AsyncClient,
    session_id: str,
    messages: list[dict[str, Any]],
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    response = await client.post(
        "/after-turn", json={"sessionId": session_id, "messages": messages}, headers=headers
    )
    assert response.status_code == 200, response.text
    assert response.json()["ingested"] == len(messages)
    return response.json()


async def commit(
    client: httpx.AsyncClient, session_id: str, keep: int = 0, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    response = await client.post(
        f"/sessions/{session_id}/commit",
        json={"keepRecentCount": keep, "wait": True},
        headers=headers,
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "accepted", body
    assert body["archive"]["status"] == "completed", body
    return body


async def archive(
    client: httpx.AsyncClient,
    session_id: str,
    messages: list[dict[str, Any]],
    keep: int = 0,
    headers: dict[str, str] | None = None,
) -> str:
    """Store ``messages`` and archive them (all but ``keep``); returns the archive id."""
    await ingest(client, session_id, messages, headers)
    return (await commit(client, session_id, keep, headers))["archiveId"]


async def search(
    client: httpx.AsyncClient, session_id: str, query: str, **options: Any
) -> dict[str, Any]:
    response = await client.post(
        "/archives/search", json={"sessionId": session_id, "query": query, **options}
    )
    assert response.status_code == 200, response.text
    return response.json()


def message_hits(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [hit for hit in result["results"] if hit["kind"] == "message"]


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    return body


def mixed_turn() -> list[dict[str, Any]]:
    """A turn with a tool exchange, an unknown message field and an unknown block type."""
    return [
        user("Please list the deploy directory", channelMeta={"origin": "cli", "n": [1, 2]}),
        tool_call("call_1", "shell", {"cmd": "ls -la /srv/deploy", "cwd": "/"}, text="Listing it."),
        tool_result("call_1", "shell", "total 2\nrelease.tar\nnotes.txt"),
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "There are two files."},
                {"type": "futureBlock", "payload": {"x": 1, "nested": ["a", None, True]}},
            ],
            "stopReason": "stop",
            "timestamp": 1_760_000_999_000,
            "vendorExtension": {"latencyMs": 42},
        },
    ]


# --- expand -----------------------------------------------------------------------------------


async def test_expand_json_returns_completed_archive_with_verbatim_messages(
    client: httpx.AsyncClient,
) -> None:
    messages = mixed_turn()
    archive_id = await archive(client, "s-expand", messages)
    assert archive_id == "archive_001"

    response = await client.get(f"/archives/{archive_id}", params={"sessionId": "s-expand"})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    view = response.json()
    assert view["archiveId"] == "archive_001"
    assert view["sessionId"] == "s-expand"
    assert view["status"] == "completed"
    assert view["error"] is None
    assert isinstance(view["overview"], str) and view["overview"].strip()
    assert isinstance(view["abstract"], str) and view["abstract"].strip()
    assert view["messageCount"] == 4
    assert (view["firstSeq"], view["lastSeq"]) == (1, 4)
    assert [m["seq"] for m in view["messages"]] == [1, 2, 3, 4]
    # Stored and returned as given: tool calls, tool results, unknown fields and blocks included.
    assert [m["message"] for m in view["messages"]] == messages
    for key in ("startedAt", "endedAt", "createdAt", "completedAt"):
        assert isinstance(view[key], str) and view[key].endswith("Z"), key


async def test_an_archive_spans_the_times_its_messages_were_stored(
    client: httpx.AsyncClient,
) -> None:
    # startedAt is when the first archived message was stored, endedAt the last; a kept message
    # (keep 1) is not part of the span.
    def now() -> datetime:
        return datetime.now(UTC)

    async def store(snapshot: list[dict[str, Any]], new: int) -> None:
        body = {"sessionId": "s-span", "messages": snapshot}
        response = await client.post("/after-turn", json=body)
        assert response.status_code == 200 and response.json()["ingested"] == new, response.text

    before = now()
    first = [user("the first turn"), assistant("noted")]
    await store(first, 2)
    await asyncio.sleep(0.05)
    between = now()
    await asyncio.sleep(0.05)
    second = [*first, user("the second turn"), assistant("noted again")]
    await store(second, 2)
    after = now()
    await asyncio.sleep(0.05)
    await store([*second, user("kept live")], 1)
    archive_id = (await commit(client, "s-span", keep=1))["archiveId"]
    view = (await client.get(f"/archives/{archive_id}", params={"sessionId": "s-span"})).json()
    started = datetime.fromisoformat(view["startedAt"].replace("Z", "+00:00"))
    ended = datetime.fromisoformat(view["endedAt"].replace("Z", "+00:00"))
    assert (view["firstSeq"], view["lastSeq"]) == (1, 4)
    assert before <= started <= between <= ended <= after


async def test_expand_offset_and_limit_page_through_messages(client: httpx.AsyncClient) -> None:
    messages = [user(f"message number {i}") for i in range(1, 8)]
    archive_id = await archive(client, "s-page", messages)
    url = f"/archives/{archive_id}"

    page = (await client.get(url, params={"sessionId": "s-page", "offset": 2, "limit": 3})).json()
    assert [m["seq"] for m in page["messages"]] == [3, 4, 5]
    assert [m["message"] for m in page["messages"]] == messages[2:5]
    assert page["messageCount"] == 7  # the archive's size, not the page's
    assert (page["firstSeq"], page["lastSeq"]) == (1, 7)

    tail = (await client.get(url, params={"sessionId": "s-page", "offset": 5})).json()
    assert [m["seq"] for m in tail["messages"]] == [6, 7]
    past = (await client.get(url, params={"sessionId": "s-page", "offset": 50})).json()
    assert past["messages"] == []
    first = (await client.get(url, params={"sessionId": "s-page", "limit": 1})).json()
    assert [m["seq"] for m in first["messages"]] == [1]

    for bad in ({"offset": -1}, {"limit": 0}, {"limit": 1001}, {"format": "xml"}):
        response = await client.get(url, params={"sessionId": "s-page", **bad})
        body = assert_envelope(response, 400, "INVALID_ARGUMENT")
        assert body["error"]["details"]["errors"], bad


async def test_expand_text_format_renders_a_tool_result(client: httpx.AsyncClient) -> None:
    archive_id = await archive(client, "s-text", mixed_turn())
    abstract = (await client.get(f"/archives/{archive_id}", params={"sessionId": "s-text"})).json()[
        "abstract"
    ]

    response = await client.get(
        f"/archives/{archive_id}", params={"sessionId": "s-text", "format": "text"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert text.startswith(f"## archive_001\n**Summary**: {abstract}\n**Messages**: 4\n\n")
    blocks = text.split("\n\n")
    assert "[user]:\nPlease list the deploy directory" in blocks
    pretty_input = json.dumps({"cmd": "ls -la /srv/deploy", "cwd": "/"}, indent=2)
    assert f"[assistant]:\nListing it.\n[Tool: shell]\nInput: {pretty_input}" in text
    assert "[toolResult]:\n[Tool result: shell]\nOutput:\ntotal 2\nrelease.tar\nnotes.txt" in text
    assert "There are two files." in text
    # Message order is kept.
    assert (
        text.index("[user]:")
        < text.index("[Tool: shell]")
        < text.index("[Tool result: shell]")
        < text.index("There are two files.")
    )


async def test_archive_ids_are_sequential_per_session(client: httpx.AsyncClient) -> None:
    ids = []
    for i in range(3):
        ids.append(
            await archive(
                client, "s-seq", [user(f"batch {i} question"), assistant(f"batch {i} answer")]
            )
        )
    assert ids == ["archive_001", "archive_002", "archive_003"]
    # Another session starts its own numbering.
    assert await archive(client, "s-seq-other", [user("other session")]) == "archive_001"

    session = (await client.get("/sessions/s-seq")).json()
    assert [a["archiveId"] for a in session["archives"]] == ids
    seqs = []
    for archive_id in ids:
        view = (await client.get(f"/archives/{archive_id}", params={"sessionId": "s-seq"})).json()
        seqs.append((view["firstSeq"], view["lastSeq"]))
    assert seqs == [(1, 2), (3, 4), (5, 6)]


@pytest.mark.parametrize(
    ("archive_id", "session_id"),
    [
        ("archive_002", "s-404"),  # unknown archive of a known session
        ("archive_001", "no-such-session"),  # unknown session
        ("archive_1", "s-404"),  # well-formed, but not how this service writes the id
        ("archive_0001", "s-404"),
    ],
)
async def test_expand_unknown_or_malformed_is_404(
    client: httpx.AsyncClient, archive_id: str, session_id: str
) -> None:
    await archive(client, "s-404", [user("only message")])
    response = await client.get(f"/archives/{archive_id}", params={"sessionId": session_id})
    assert_envelope(response, 404, NOT_FOUND_CODE)
    text_response = await client.get(
        f"/archives/{archive_id}", params={"sessionId": session_id, "format": "text"}
    )
    assert_envelope(text_response, 404, NOT_FOUND_CODE)


async def test_expand_requires_session_id(client: httpx.AsyncClient) -> None:
    response = await client.get("/archives/archive_001")
    body = assert_envelope(response, 400, "INVALID_ARGUMENT")
    assert any("sessionId" in err["loc"] for err in body["error"]["details"]["errors"])


async def test_other_tenants_archive_is_answered_like_a_missing_one(make_settings: Any) -> None:
    settings = make_settings(api_keys=["k1:tenantA", "k2:tenantB"])
    a = {"Authorization": "Bearer k1"}
    b = {"Authorization": "Bearer k2"}
    async with app_client(settings) as client:
        expand = ("/archives/archive_001", {"sessionId": "shared-id"})
        search_body = {"sessionId": "shared-id", "query": "tenantsecret"}

        # What tenant B sees while the session does not exist at all.
        missing_expand = await client.get(expand[0], params=expand[1], headers=b)
        missing_session = await client.get("/sessions/shared-id", headers=b)
        missing_search = await client.post("/archives/search", json=search_body, headers=b)
        assert_envelope(missing_expand, 404, NOT_FOUND_CODE)
        assert_envelope(missing_session, 404, NOT_FOUND_CODE)
        assert_envelope(missing_search, 404, NOT_FOUND_CODE)

        assert (
            await archive(client, "shared-id", [user("tenantsecret plans")], headers=a)
            == "archive_001"
        )
        own = await client.get(expand[0], params=expand[1], headers=a)
        assert (
            own.status_code == 200
            and own.json()["messages"][0]["message"]["content"] == "tenantsecret plans"
        )

        # Now that tenant A owns it, tenant B gets exactly the same answers as before.
        for before, after in (
            (missing_expand, await client.get(expand[0], params=expand[1], headers=b)),
            (missing_session, await client.get("/sessions/shared-id", headers=b)),
            (missing_search, await client.post("/archives/search", json=search_body, headers=b)),
            (
                missing_expand,
                await client.get(expand[0], params={**expand[1], "format": "text"}, headers=b),
            ),
        ):
            assert after.status_code == before.status_code == 404
            assert after.json() == before.json()

        # Tenant B's own session of the same id is separate and never sees A's messages.
        assert (
            await archive(client, "shared-id", [user("tenant b words")], headers=b) == "archive_001"
        )
        b_search = await client.post("/archives/search", json=search_body, headers=b)
        assert b_search.status_code == 200 and b_search.json()["results"] == []
        b_view = (await client.get(expand[0], params=expand[1], headers=b)).json()
        assert [m["message"]["content"] for m in b_view["messages"]] == ["tenant b words"]

        # No key, or an unknown key: 401.
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "k1"}):
            response = await client.get(expand[0], params=expand[1], headers=headers)
            assert_envelope(response, 401, "UNAUTHENTICATED")
            response = await client.post("/archives/search", json=search_body, headers=headers)
            assert_envelope(response, 401, "UNAUTHENTICATED")


# --- search: keyword --------------------------------------------------------------------------


async def test_keyword_puts_messages_with_every_term_first(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-kw",
        [
            user("alpha bravo charlie"),
            user("alpha delta only"),
            user("bravo without the first"),
            user("nothing relevant here"),
        ],
    )
    result = await search(client, "s-kw", "alpha bravo")
    assert result["mode"] == "keyword"
    hits = message_hits(result)
    assert [(h["seq"], h["match"]) for h in hits[:1]] == [(1, "all")]
    assert hits[0]["snippet"] == "alpha bravo charlie"
    assert hits[0]["score"] is None
    assert hits[0]["archiveId"] == "archive_001"
    # Messages holding only some terms follow; a message holding none never appears.
    assert sorted(h["seq"] for h in hits[1:]) == [2, 3]
    assert {h["match"] for h in hits[1:]} == {"partial"}
    assert [h["seq"] for h in message_hits(await search(client, "s-kw", "alpha"))] == [1, 2]
    assert message_hits(await search(client, "s-kw", "zulu yankee")) == []


async def test_keyword_answers_a_natural_question(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-kw-q",
        [
            user("Caroline: I went to the science museum with my kids last weekend"),
            user("Melanie: what did you think of the new bakery?"),
            user("Caroline: the bakery was fine, did you finish the painting?"),
        ],
    )
    # Punctuation, stop words and word forms no longer stand in the way.
    hits = message_hits(
        await search(client, "s-kw-q", "Which museum did Caroline visit with her kids?")
    )
    assert hits and hits[0]["seq"] == 1
    quoted = message_hits(await search(client, "s-kw-q", '"new bakery"'))
    assert [h["seq"] for h in quoted] == [2]


async def test_keyword_treats_regex_metacharacters_literally(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-meta",
        [
            user("version a.b shipped"),
            user("version axb shipped"),
            user("call f(x) now"),
            user("call fx now"),
            user("match [z]+ here"),
            user("star a* ok"),
            user("aaaa plain"),
        ],
    )
    assert [h["seq"] for h in message_hits(await search(client, "s-meta", "a.b"))] == [1]
    assert [h["seq"] for h in message_hits(await search(client, "s-meta", "(x)"))] == [3]
    assert [h["seq"] for h in message_hits(await search(client, "s-meta", "f(x)"))] == [3]
    assert [h["seq"] for h in message_hits(await search(client, "s-meta", "[z]+"))] == [5]
    assert [h["seq"] for h in message_hits(await search(client, "s-meta", "a*"))] == [6]
    assert message_hits(await search(client, "s-meta", ".*")) == []


async def test_every_mode_finds_words_whatever_their_case(client: httpx.AsyncClient) -> None:
    """The text index matches without regard to case (on PostgreSQL it holds the text lowercased
    and the query is lowered too), in the ranked and keyword modes."""
    await archive(client, "s-anycase", [user("The KUBERNETES Cluster is up"), user("nothing")])
    for query in ("kubernetes cluster", "Kubernetes CLUSTER", "kuBERnetes"):
        for mode in ("keyword", "ranked"):
            found = await search(client, "s-anycase", query, mode=mode)
            assert [h["seq"] for h in message_hits(found)] == [1], (query, mode)


async def test_keyword_case_sensitivity(client: httpx.AsyncClient) -> None:
    await archive(client, "s-case", [user("The Kubernetes Cluster is up"), user("nothing here")])
    assert [
        h["seq"] for h in message_hits(await search(client, "s-case", "kubernetes CLUSTER"))
    ] == [1]
    assert message_hits(await search(client, "s-case", "kubernetes", caseSensitive=True)) == []
    assert [
        h["seq"]
        for h in message_hits(await search(client, "s-case", "Kubernetes", caseSensitive=True))
    ] == [1]


async def test_keyword_archive_id_narrows(client: httpx.AsyncClient) -> None:
    await archive(client, "s-narrow", [user("needleword in first")])
    await archive(client, "s-narrow", [user("needleword in second")])
    both = message_hits(await search(client, "s-narrow", "needleword"))
    assert [(h["archiveId"], h["seq"]) for h in both] == [("archive_001", 1), ("archive_002", 2)]
    only = await search(client, "s-narrow", "needleword", archiveId="archive_002")
    assert {h["archiveId"] for h in only["results"]} == {"archive_002"}
    assert [h["seq"] for h in message_hits(only)] == [2]
    for mode in ("regex", "ranked"):
        narrowed = await search(
            client, "s-narrow", "needleword", archiveId="archive_001", mode=mode
        )
        assert {h["archiveId"] for h in narrowed["results"]} == {"archive_001"}, mode
        assert [h["seq"] for h in message_hits(narrowed)] == [1], mode
    for archive_id in ("archive_009", "archive_2", "archive_0002"):
        unknown = await client.post(
            "/archives/search",
            json={"sessionId": "s-narrow", "query": "needleword", "archiveId": archive_id},
        )
        assert_envelope(unknown, 404, NOT_FOUND_CODE)


async def test_keyword_limit_and_truncated(client: httpx.AsyncClient) -> None:
    await archive(client, "s-limit", [user(f"repeatterm row {i}") for i in range(6)])
    full = await search(client, "s-limit", "repeatterm", limit=200)
    assert full["truncated"] is False
    assert [h["seq"] for h in message_hits(full)] == [1, 2, 3, 4, 5, 6]
    assert full["count"] == len(full["results"])

    limited = await search(client, "s-limit", "repeatterm", limit=2)
    assert limited["count"] == 2 and len(limited["results"]) == 2
    assert limited["truncated"] is True
    assert [h["seq"] for h in limited["results"]] == [1, 2]

    exact = await search(client, "s-limit", "repeatterm", limit=full["count"])
    assert exact["truncated"] is False and exact["count"] == full["count"]

    for bad in (0, 201):
        response = await client.post(
            "/archives/search", json={"sessionId": "s-limit", "query": "x", "limit": bad}
        )
        assert_envelope(response, 400, "INVALID_ARGUMENT")


async def test_search_finds_overviews(client: httpx.AsyncClient) -> None:
    archive_id = await archive(client, "s-ov", [user("hello there"), assistant("general kenobi")])
    overview = (await client.get(f"/archives/{archive_id}", params={"sessionId": "s-ov"})).json()[
        "overview"
    ]
    assert "Working Memory" in overview  # the fixture Working Memory heading, never in a message
    for mode, query in (
        ("keyword", "Working Memory"),
        ("regex", r"Work\w+ Mem"),
        ("ranked", "Working"),
    ):
        result = await search(client, "s-ov", query, mode=mode)
        assert all(h["kind"] == "message" for h in result["results"]), (mode, result)
        overview_hits = result["overviews"]
        assert len(overview_hits) == 1, (mode, result)
        assert overview_hits[0]["kind"] == "overview"
        hit = overview_hits[0]
        assert hit["archiveId"] == archive_id
        assert hit["seq"] is None and hit["role"] is None
        assert "Working" in hit["snippet"] and hit["snippet"] in overview
        assert message_hits(result) == []


async def test_keyword_overview_hits_are_every_overview_holding_every_term(
    client: httpx.AsyncClient,
) -> None:
    """Keyword search reads overviews through the overview index (terms of three characters or
    more) or all of them (shorter terms): either way the hits are what a brute-force search of
    the overviews finds, oldest first and at most ``limit``, and ``archiveId`` narrows them."""
    topics = ["zebrafish tank heater", "kangaroo court ruling", "zebrafish court filing"]
    ids = [
        await archive(client, "s-ovk", [user(f"we discussed the {t}"), assistant(f"noted: {t}")])
        for t in topics
    ]
    overviews = {
        a: (await client.get(f"/archives/{a}", params={"sessionId": "s-ovk"})).json()["overview"]
        for a in ids
    }
    for query in ("zebrafish", "court", "zebrafish court", "Working Memory", "we", "nothing-here"):
        terms = query.casefold().split()
        expected = [a for a in ids if all(t in overviews[a].casefold() for t in terms)]
        found = await search(client, "s-ovk", query, mode="keyword")
        assert [h["archiveId"] for h in found["overviews"]] == expected, query
        narrowed = await search(client, "s-ovk", query, mode="keyword", archiveId=ids[2])
        assert [h["archiveId"] for h in narrowed["overviews"]] == [
            a for a in expected if a == ids[2]
        ], query
        for limit in (1, 2):  # the oldest ``limit``, read a batch of ``limit`` at a time
            limited = await search(client, "s-ovk", query, mode="keyword", limit=limit)
            assert [h["archiveId"] for h in limited["overviews"]] == expected[:limit], query
    assert any("zebrafish" in overviews[a].casefold() for a in ids)  # the queries can match


async def test_query_validation(client: httpx.AsyncClient) -> None:
    await archive(client, "s-val", [user("anything")])
    for body in (
        {"sessionId": "s-val", "query": ""},
        {"sessionId": "s-val", "query": "x", "mode": "fuzzy"},
        {"sessionId": "s-val"},
        {"query": "x"},
        {"sessionId": "s-val", "query": "x", "caseSensitive": "maybe"},
    ):
        response = await client.post("/archives/search", json=body)
        body_json = assert_envelope(response, 400, "INVALID_ARGUMENT")
        assert body_json["error"]["details"]["errors"], body
    blank = await client.post("/archives/search", json={"sessionId": "s-val", "query": "   "})
    assert_envelope(blank, 400, "INVALID_ARGUMENT")
    missing = await client.post(
        "/archives/search", json={"sessionId": "nobody", "query": "anything"}
    )
    assert_envelope(missing, 404, NOT_FOUND_CODE)


# --- search: regex ----------------------------------------------------------------------------


async def test_regex_mode_uses_a_real_regex(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-re",
        [
            user("deployed v42 to prod"),
            user("deploying v7 now"),
            user("deploy v to nowhere"),
            user("DEPLOYED V9 loudly"),
        ],
    )
    result = await search(client, "s-re", r"deploy(ed|ing)\s+v\d+\b", mode="regex")
    assert result["mode"] == "regex"
    assert [h["seq"] for h in message_hits(result)] == [1, 2, 4]
    assert message_hits(result)[0]["snippet"] == "deployed v42 to prod"
    sensitive = await search(
        client, "s-re", r"deploy(ed|ing)\s+v\d+\b", mode="regex", caseSensitive=True
    )
    assert [h["seq"] for h in message_hits(sensitive)] == [1, 2]
    # "a.b" is a regex here: the dot matches any character.
    assert [
        h["seq"] for h in message_hits(await search(client, "s-re", r"^deploy.v", mode="regex"))
    ] == [3]


@pytest.mark.parametrize("pattern", ["(", "[a-", "a{2,1}", "*oops", "x)"])
async def test_regex_invalid_pattern_is_400(client: httpx.AsyncClient, pattern: str) -> None:
    await archive(client, "s-bad-re", [user("some text")])
    response = await client.post(
        "/archives/search", json={"sessionId": "s-bad-re", "query": pattern, "mode": "regex"}
    )
    assert_envelope(response, 400, "INVALID_ARGUMENT")


async def test_regex_catastrophic_backtracking_answers_promptly(make_settings: Any) -> None:
    async with app_client(make_settings(archives={"regex_timeout_ms": 200})) as client:
        await archive(client, "s-redos", [user("a" * 50 + "!"), user("x" * 5000)])
        for pattern in ("(a+)+$", "(x+x+)+y", "(x+)+y", "(.*a){12}!z"):
            started = time.monotonic()
            # Bounded here too, so that a hang is reported as a failure instead of blocking the run.
            response = await asyncio.wait_for(
                client.post(
                    "/archives/search",
                    json={"sessionId": "s-redos", "query": pattern, "mode": "regex"},
                ),
                timeout=20,
            )
            elapsed = time.monotonic() - started
            assert elapsed < 5, (pattern, elapsed)
            assert response.status_code in (200, 400), response.text
            if response.status_code == 400:
                assert_envelope(response, 400, "INVALID_ARGUMENT")
            else:
                # None of these patterns can match the stored text.
                assert message_hits(response.json()) == [], pattern
        # The service is still answering normal searches afterwards.
        ok = await search(client, "s-redos", "a{50}!", mode="regex")
        assert [h["seq"] for h in message_hits(ok)] == [1]


# --- search: ranked ---------------------------------------------------------------------------


async def test_ranked_orders_by_bm25(client: httpx.AsyncClient) -> None:
    filler = " ".join(f"filler{i}" for i in range(120))
    await archive(
        client,
        "s-rank",
        [
            user(f"{filler} kubernetes {filler}"),
            user("kubernetes kubernetes kubernetes cluster"),
            user("unrelated message about lunch"),
            user(f"kubernetes {filler}"),
        ],
    )
    result = await search(client, "s-rank", "kubernetes", mode="ranked")
    assert result["mode"] == "ranked"
    hits = message_hits(result)
    assert {h["seq"] for h in hits} == {1, 2, 4}
    assert hits[0]["seq"] == 2  # the densest message first
    scores = [h["score"] for h in result["results"]]
    assert all(isinstance(s, int | float) for s in scores)
    assert scores == sorted(scores, reverse=True)
    assert hits[0]["score"] > hits[-1]["score"]

    # With several terms, a message holding both outranks one holding either.
    await archive(
        client,
        "s-rank2",
        [
            user(f"cache layer {filler}"),
            user(f"cache eviction policy {filler}"),
            user(f"eviction notice {filler}"),
        ],
    )
    multi = message_hits(await search(client, "s-rank2", "cache eviction", mode="ranked"))
    assert multi[0]["seq"] == 2
    assert {h["seq"] for h in multi} == {1, 2, 3}


async def test_ranked_finds_a_snake_case_name_by_its_parts(client: httpx.AsyncClient) -> None:
    """The words of a name joined by underscores count as words, as those joined by hyphens do."""
    await archive(
        client,
        "s-snake",
        [
            user("pipeline runs are green again"),
            user("the nightly job failed with E_PIPELINE_4417 after the deploy"),
            user("ticket 4417 is closed"),
            user("lunch plans for friday"),
        ],
    )
    for query in ("pipeline 4417", "E_PIPELINE_4417"):
        hits = message_hits(await search(client, "s-snake", query, mode="ranked"))
        assert hits[0]["seq"] == 2, (query, hits)
        assert "E_PIPELINE_4417" in hits[0]["snippet"]


async def test_chinese_text_is_found(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-zh",
        [
            user("昨天部署失败了，需要回滚"),
            assistant("好的，我来检查部署日志"),
            user("用户喜欢喝绿茶"),
            user("今天天气不错"),
        ],
    )
    for mode in ("ranked", "keyword"):
        result = await search(client, "s-zh", "部署失败", mode=mode)
        hits = message_hits(result)
        # Both modes put the message with the whole word first; the one holding only 部署 follows.
        assert [h["seq"] for h in hits] == [1, 2], (mode, result)
        assert "昨天部署失败了" in hits[0]["snippet"]
        if mode == "ranked":
            assert hits[0]["score"] is not None
        tea = message_hits(await search(client, "s-zh", "绿茶", mode=mode))
        assert [h["seq"] for h in tea] == [3], mode
        assert "用户喜欢喝绿茶" in tea[0]["snippet"]
    regex_hits = message_hits(await search(client, "s-zh", "部署.{0,2}日志", mode="regex"))
    assert [h["seq"] for h in regex_hits] == [2]


# --- search: text format, snippets, live messages ---------------------------------------------


async def test_search_text_format(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-fmt",
        [
            user("first question"),
            assistant("first answer"),
            user("where is the invoice ledger"),
            user("the invoice ledger again"),
        ],
    )
    response = await client.post(
        "/archives/search", json={"sessionId": "s-fmt", "query": "invoice ledger", "format": "text"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    as_json = await search(client, "s-fmt", "invoice ledger")
    text = response.text
    assert text.startswith(f'Found {as_json["count"]} match(es) for "invoice ledger"')
    assert "(showing first" not in text
    said = [h["timestamp"] for h in as_json["results"]]
    assert (
        f"## Match 1: archive_001 (message 3, user, {said[0][:10]} {said[0][11:16]} UTC)\nwhere is the invoice ledger"
        in text
    )
    assert (
        f"## Match 2: archive_001 (message 4, user, {said[1][:10]} {said[1][11:16]} UTC)\nthe invoice ledger again"
        in text
    )

    limited = await client.post(
        "/archives/search",
        json={"sessionId": "s-fmt", "query": "invoice", "limit": 1, "format": "text"},
    )
    assert limited.text.startswith('Found 1 match(es) for "invoice" (showing first 1)')
    assert "## Match 2" not in limited.text

    none = await client.post(
        "/archives/search", json={"sessionId": "s-fmt", "query": "zeppelin", "format": "text"}
    )
    assert none.status_code == 200
    assert "zeppelin" in none.text
    assert "synonyms" in none.text and "shorter fragments" in none.text
    assert "## Match" not in none.text


async def test_snippet_is_bounded_around_the_match(client: httpx.AsyncClient) -> None:
    long_text = (
        ("lorem ipsum dolor " * 300) + "UNIQUEMARKER found here " + ("sit amet consectetur " * 300)
    )
    assert len(long_text) > 5000
    await archive(client, "s-snip", [user(long_text), user("short one")])
    for mode, query in (
        ("keyword", "UNIQUEMARKER"),
        ("regex", "UNIQUE[A-Z]+"),
        ("ranked", "UNIQUEMARKER"),
    ):
        hits = message_hits(await search(client, "s-snip", query, mode=mode))
        assert [h["seq"] for h in hits] == [1], mode
        snippet = hits[0]["snippet"]
        assert 0 < len(snippet) <= 700, (mode, len(snippet))
        assert "UNIQUEMARKER" in snippet, mode
        core = snippet.strip("…")
        assert core in long_text, mode
    short = message_hits(await search(client, "s-snip", "short one"))
    assert short[0]["snippet"] == "short one"


async def test_live_messages_are_not_searched(client: httpx.AsyncClient) -> None:
    await ingest(
        client,
        "s-live",
        [
            user("archivedtoken one"),
            assistant("archivedtoken two"),
            user("livetoken kept"),
            assistant("livetoken kept too"),
        ],
    )
    await commit(client, "s-live", keep=2)
    await ingest(client, "s-live", [user("livetoken added later"), user("zz 绿茶 live")])
    for mode in ("keyword", "regex", "ranked"):
        assert (await search(client, "s-live", "livetoken", mode=mode))["results"] == [], mode
        archived = message_hits(await search(client, "s-live", "archivedtoken", mode=mode))
        assert sorted(h["seq"] for h in archived) == [1, 2], mode
    assert message_hits(await search(client, "s-live", "绿茶")) == []
    assert message_hits(await search(client, "s-live", "zz")) == []


async def test_two_character_terms_are_found_wherever_they_stand(
    client: httpx.AsyncClient,
) -> None:
    """A term of two characters at the start, in the middle or at the very end of a message, or
    the whole message, in any case; messages that only come close are not hits."""
    texts = [
        "Q7 is done",  # 1: start
        "ticket q7 moved",  # 2: middle
        "look at Q7",  # 3: end
        "Q7",  # 4: the whole message
        "Q8 and 7Q only",  # 5: not a hit
        "部署完成",  # 6: a CJK pair
        "明天再部署",  # 7: the pair at the very end
    ]
    await archive(client, "s-short", [user(t) for t in texts])
    for query, expected in (("Q7", [1, 2, 3, 4]), ("q7", [1, 2, 3, 4]), ("部署", [6, 7])):
        hits = message_hits(await search(client, "s-short", query, mode="keyword"))
        assert [h["seq"] for h in hits] == expected, query


async def test_two_character_search_matches_a_substring_search_of_every_message(
    client: httpx.AsyncClient,
) -> None:
    """Random messages over a small alphabet against a brute-force substring search: every
    message that holds the term (case folded) is a whole match, no other is, in order."""
    import random

    rng = random.Random(17)
    alphabet = "abAB12 -部署"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(60)]
    await archive(client, "s-short-random", [user(t) for t in texts])
    for term in ("ab", "B1", "2a", "部署", "bb", "1b"):
        result = await search(client, "s-short-random", term, mode="keyword", limit=100)
        hits = [h for h in message_hits(result) if h["match"] == "all"]
        expected = [i + 1 for i, t in enumerate(texts) if term.lower() in t.lower()]
        assert expected and [h["seq"] for h in hits] == expected, term
