"""The memory API over HTTP: commit, list, read, edit, delete, forget, export and import
(docs/api.md, Memories; docs/recall.md, Memory records and Writing memories)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pysqlite3.dbapi2 as sqlite
import pytest
import sqlite_vec
from sqlalchemy import text

from app.settings import Settings
from tests.conftest import app_client

MASKED = "[masked: sensitive memory]"
MODEL_ID = "multilingual-e5-small-q4"


# --- helpers -------------------------------------------------------------------------------


def assert_envelope(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}, body
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    assert isinstance(body["error"]["details"], dict)
    return body


async def remember(
    client: httpx.AsyncClient,
    content: str,
    category: str = "preferences",
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    response = await client.post(
        "/memories", json={"content": content, "category": category, **extra}, headers=headers
    )
    assert response.status_code == 200, response.text
    return response.json()


async def add(
    client: httpx.AsyncClient,
    content: str,
    category: str = "preferences",
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Commit a memory that must be new; returns the memory object."""
    body = await remember(client, content, category, headers, **extra)
    assert body["action"] == "ADD", body
    return body["memory"]


async def list_items(
    client: httpx.AsyncClient, headers: dict[str, str] | None = None, **params: Any
) -> list[dict[str, Any]]:
    response = await client.get("/memories", params={"limit": 200, **params}, headers=headers)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["nextCursor"] is None
    return body["items"]


async def search(
    client: httpx.AsyncClient, query: str, headers: dict[str, str] | None = None, **options: Any
) -> dict[str, Any]:
    response = await client.post(
        "/memories/search", json={"query": query, **options}, headers=headers
    )
    assert response.status_code == 200, response.text
    return response.json()


async def search_contents(client: httpx.AsyncClient, query: str, **options: Any) -> list[str]:
    return [hit["content"] for hit in (await search(client, query, **options))["results"]]


async def export_records(
    client: httpx.AsyncClient, headers: dict[str, str] | None = None, **params: Any
) -> list[dict[str, Any]]:
    response = await client.get("/memories/export", params=params, headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    assert response.text == "" or response.text.endswith("\n")
    return [json.loads(line) for line in response.text.splitlines()]


async def import_records(
    client: httpx.AsyncClient, records: list[dict[str, Any]], headers: dict[str, str] | None = None
) -> dict[str, Any]:
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    response = await client.post(
        "/memories/import",
        content=body.encode(),
        headers={"Content-Type": "application/x-ndjson", **(headers or {})},
    )
    assert response.status_code == 200, response.text
    return response.json()


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def record(
    memory_id: str, content: str, category: str = "events", owner: str = "default", **fields: Any
) -> dict[str, Any]:
    """A memory as /memories/export writes it (the fields import needs, plus any given)."""
    kind = "agent" if category in {"experiences", "skills", "tools"} else "user"
    return {
        "id": memory_id,
        "uri": f"viking://{kind}/{owner}/memories/{category}/imported-{memory_id[:8]}.md",
        "category": category,
        "title": content[:60],
        "abstract": content,
        "content": content,
        "ownerKind": kind,
        "ownerId": owner,
        "source": {"kind": "api"},
        **fields,
    }


@contextmanager
def open_db(path: Path) -> Iterator[sqlite.Connection]:
    conn = sqlite.connect(str(path))
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    try:
        yield conn
    finally:
        conn.close()


def chunk_ids(path: Path, memory_id: str) -> list[int]:
    with open_db(path) as conn:
        return [
            r[0]
            for r in conn.execute("SELECT id FROM memory_chunks WHERE memory_id = ?", (memory_id,))
        ]


def index_counts(path: Path, chunks: list[int]) -> dict[str, int]:
    """Rows of the given chunks in the word index and in the vector table."""
    marks = ",".join("?" * len(chunks))
    with open_db(path) as conn:
        fts = conn.execute(
            f"SELECT count(*) FROM memory_fts WHERE rowid IN ({marks})", chunks
        ).fetchone()[0]
        vec = conn.execute(
            f"SELECT count(*) FROM memory_vec WHERE chunk_id IN ({marks})", chunks
        ).fetchone()[0]
    return {"fts": fts, "vec": vec}


def fts_hits(path: Path, word: str) -> int:
    with open_db(path) as conn:
        return conn.execute(
            "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", (f'"{word}"',)
        ).fetchone()[0]


def memory_row_count(path: Path) -> int:
    with open_db(path) as conn:
        return conn.execute("SELECT count(*) FROM memories").fetchone()[0]


def audit_rows(path: Path, memory_id: str) -> list[dict[str, Any]]:
    with open_db(path) as conn:
        conn.row_factory = sqlite.Row
        rows = conn.execute(
            "SELECT action, actor, reason, before_json, after_json, created_at, tenant_id FROM memory_audit "
            "WHERE memory_id = ? ORDER BY id",
            (memory_id,),
        ).fetchall()
    return [dict(r) for r in rows]


def local_settings(make_settings: Callable[..., Settings], **overrides: Any) -> Settings:
    return make_settings(embedding={"provider": "local"}, **overrides)


# --- POST /memories --------------------------------------------------------------------------


async def test_add_returns_the_memory_object(client: httpx.AsyncClient) -> None:
    body = await remember(
        client,
        "The user likes green tea in the morning.",
        "preferences",
        headers={"X-User-Id": "alice"},
        confidence=0.8,
        priority=3,
    )
    assert body["action"] == "ADD"
    memory = body["memory"]
    assert re.fullmatch(
        r"viking://user/alice/memories/preferences/[a-z0-9-]+\.md", memory["uri"]
    ), memory["uri"]
    assert memory["category"] == "preferences"
    assert memory["content"] == "The user likes green tea in the morning."
    assert memory["abstract"] == "The user likes green tea in the morning."
    assert memory["title"]
    assert memory["version"] == 1
    assert memory["source"] == {"kind": "api"}
    assert memory["sensitivity"] == "allowed"
    assert memory["confidence"] == 0.8 and memory["priority"] == 3
    assert memory.get("expiresAt") is None
    assert memory["ownerKind"] == "user" and memory["ownerId"] == "alice"
    created = parse_iso(memory["createdAt"])
    assert abs(datetime.now(UTC) - created) < timedelta(minutes=1)
    assert memory["updatedAt"] == memory["createdAt"]

    fetched = await client.get(f"/memories/{memory['id']}")
    assert fetched.status_code == 200, fetched.text
    view = fetched.json()
    for key in (
        "id",
        "uri",
        "category",
        "title",
        "abstract",
        "content",
        "confidence",
        "sensitivity",
        "version",
        "source",
        "createdAt",
        "updatedAt",
    ):
        assert view[key] == memory[key], key
    assert {"expiresAt", "observedAt"} <= set(view)


async def test_experience_and_profile_uris(client: httpx.AsyncClient) -> None:
    experience = await add(
        client,
        "## Situation\n- deploy failed\n## Approach\n- rerun migrations\n"
        "## Reflect\n- check migrations first",
        "experiences",
        agentId="builder",
    )
    assert re.fullmatch(
        r"viking://agent/builder/memories/experiences/[a-z0-9-]+\.md", experience["uri"]
    ), experience["uri"]
    assert experience["ownerKind"] == "agent" and experience["ownerId"] == "builder"

    profile = await add(client, "Name: Alice", "profile", headers={"X-User-Id": "alice"})
    assert profile["uri"] == "viking://user/alice/memories/profile.md"
    other = await add(client, "Name: Bob", "profile", userId="bob")
    assert other["uri"] == "viking://user/bob/memories/profile.md"


async def test_same_content_again_is_none(client: httpx.AsyncClient) -> None:
    first = await add(client, "The user prefers dark mode in every editor.")
    again = await remember(client, "The user prefers dark mode in every editor.")
    assert again["action"] == "NONE"
    assert again["memory"]["id"] == first["id"]
    # Same normalised text: case, spacing and punctuation do not make a new memory.
    variant = await remember(client, "  the user prefers DARK mode, in every editor ")
    assert variant["action"] == "NONE"
    assert [m["id"] for m in await list_items(client)] == [first["id"]]


async def test_near_duplicate_is_none_and_a_different_fact_is_added(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(local_settings(make_settings)) as client:
        first = await add(client, "The user likes green tea in the morning.")
        assert first["embeddingModel"] == MODEL_ID
        paraphrase = await remember(client, "In the morning the user likes green tea.")
        assert paraphrase["action"] == "NONE", paraphrase
        assert paraphrase["memory"]["id"] == first["id"]
        different = await remember(client, "The user's favourite programming language is Rust.")
        assert different["action"] == "ADD", different
        # The same sentence in another category is not a duplicate of this one.
        elsewhere = await remember(client, "The user likes green tea in the morning.", "entities")
        assert elsewhere["action"] == "ADD", elsewhere
        ids = {m["id"] for m in await list_items(client)}
        assert ids == {first["id"], different["memory"]["id"], elsewhere["memory"]["id"]}


async def test_a_fact_that_differs_in_one_value_is_not_a_duplicate(
    make_settings: Callable[..., Settings],
) -> None:
    """The local model puts these pairs within cosine 0.95 (0.993, 0.966, 0.971): the vector alone
    took the second of each for a duplicate and lost it. A text that adds a word is kept."""
    pairs = [
        (
            "The deploy key lives in the vault under ops/prod.",
            "The deploy key lives in the vault under ops/staging.",
        ),
        (
            "The user's flight to Tokyo leaves on Friday.",
            "The user's flight to Tokyo leaves on Monday.",
        ),
        (
            "The user ran the Taihu half marathon in under two hours.",
            "The user ran the Donghu half marathon in under two hours.",
        ),
    ]
    async with app_client(local_settings(make_settings)) as client:
        for first_text, second_text in pairs:
            first = await add(client, first_text)
            second = await remember(client, second_text)
            assert second["action"] == "ADD", second
            assert second["memory"]["id"] != first["id"]
        # A text that adds nothing to a memory it is near is still its duplicate.
        shorter = await remember(client, "The user ran the Donghu half marathon.")
        assert shorter["action"] == "NONE", shorter
        assert shorter["memory"]["id"] == second["memory"]["id"]
        contents = sorted(m["content"] for m in await list_items(client))
        assert contents == sorted(text for pair in pairs for text in pair)


async def test_second_profile_commit_updates_the_profile(client: httpx.AsyncClient) -> None:
    first = await add(client, "Name: Alice", "profile")
    second = await remember(client, "Lives in Berlin", "profile")
    assert second["action"] == "UPDATE"
    profile = second["memory"]
    assert profile["id"] == first["id"]
    assert profile["uri"] == first["uri"] == "viking://user/default/memories/profile.md"
    assert profile["version"] == 2
    assert "Name: Alice" in profile["content"] and "Lives in Berlin" in profile["content"]
    assert parse_iso(profile["updatedAt"]) >= parse_iso(first["updatedAt"])
    assert [m["id"] for m in await list_items(client, category="profile")] == [first["id"]]
    found = await search(client, "Berlin")
    assert [hit["id"] for hit in found["results"]] == [first["id"]]


async def test_never_store_is_not_stored(client: httpx.AsyncClient, db_path: Path) -> None:
    response = await client.post(
        "/memories",
        json={
            "content": "My therapist is Dr. Quentin Blake",
            "category": "entities",
            "sensitivity": "never-store",
        },
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"action", "reason"}
    assert body["action"] == "NONE" and isinstance(body["reason"], str) and body["reason"]
    assert await list_items(client) == []
    assert await search_contents(client, "Quentin") == []
    assert memory_row_count(db_path) == 0


async def test_content_that_is_only_a_secret_is_none(
    client: httpx.AsyncClient, db_path: Path
) -> None:
    secret = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
    body = await remember(client, secret, "entities")
    assert body["action"] == "NONE" and body.get("reason"), body
    assert "memory" not in body
    assert await list_items(client) == []
    assert memory_row_count(db_path) == 0


async def test_secret_inside_content_is_stored_redacted(
    client: httpx.AsyncClient, db_path: Path
) -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2
    memory = await add(
        client, f"The deploy bot uses the token {secret} for the infra repo", "tools"
    )
    assert "[REDACTED:" in memory["content"] and secret not in memory["content"]
    assert secret not in memory["title"] and secret not in memory["abstract"]
    fetched = (await client.get(f"/memories/{memory['id']}")).json()
    assert "[REDACTED:" in fetched["content"] and secret not in json.dumps(fetched)
    # Nothing written anywhere holds the secret: the row, its chunks, the word index, the audit.
    with open_db(db_path) as conn:
        stored = [r[0] for r in conn.execute("SELECT content || title || abstract FROM memories")]
        chunk_texts = [r[0] for r in conn.execute("SELECT text FROM memory_chunks")]
        audits = [r[0] for r in conn.execute("SELECT after_json FROM memory_audit")]
    assert stored and chunk_texts and audits
    assert all(secret not in text for text in stored + chunk_texts + audits)
    assert fts_hits(db_path, secret) == 0
    assert await search_contents(client, secret, mode="bm25") == []
    assert len(await search_contents(client, "deploy bot infra", mode="bm25")) == 1


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("category", "hobbies"),
        ("sensitivity", "secret"),
        ("category", None),
        ("ttlDays", 0),
        ("confidence", 2),
    ],
)
async def test_invalid_fields_are_400(client: httpx.AsyncClient, field: str, value: Any) -> None:
    body = {"content": "The user likes tea", "category": "preferences", field: value}
    response = await client.post("/memories", json=body)
    error = assert_envelope(response, 400, "INVALID_ARGUMENT")["error"]
    assert any(e["loc"][-1] == field for e in error["details"]["errors"]), error
    assert await list_items(client) == []


async def test_missing_content_is_400(client: httpx.AsyncClient) -> None:
    assert_envelope(
        await client.post("/memories", json={"category": "preferences"}), 400, "INVALID_ARGUMENT"
    )
    assert_envelope(
        await client.post("/memories", json={"content": "", "category": "events"}),
        400,
        "INVALID_ARGUMENT",
    )


async def test_ttl_days_sets_expires_at(client: httpx.AsyncClient) -> None:
    memory = await add(client, "The user is in Lisbon this week", "events", ttlDays=2)
    expires = parse_iso(memory["expiresAt"])
    created = parse_iso(memory["createdAt"])
    assert abs(expires - (created + timedelta(days=2))) < timedelta(seconds=1)
    fetched = (await client.get(f"/memories/{memory['id']}")).json()
    assert fetched["expiresAt"] == memory["expiresAt"]
    # Not yet expired: listed and searchable.
    assert [m["id"] for m in await list_items(client)] == [memory["id"]]
    assert await search_contents(client, "Lisbon") == ["The user is in Lisbon this week"]


async def test_expired_memory_is_hidden_from_list_and_search_but_exported(
    client: httpx.AsyncClient,
) -> None:
    now = datetime.now(UTC)
    expired = record(
        "11111111-0000-4000-8000-000000000001",
        "Parked the car on level 4 near the lift",
        expiresAt=iso(now - timedelta(hours=1)),
        createdAt=iso(now - timedelta(days=3)),
        updatedAt=iso(now - timedelta(days=3)),
    )
    live = record(
        "11111111-0000-4000-8000-000000000002",
        "Parked the bike at the station",
        expiresAt=iso(now + timedelta(days=3)),
        createdAt=iso(now - timedelta(days=1)),
        updatedAt=iso(now - timedelta(days=1)),
    )
    assert (await import_records(client, [expired, live]))["imported"] == 2

    assert [m["id"] for m in await list_items(client)] == [live["id"]]
    assert [m["id"] for m in await list_items(client, q="Parked")] == [live["id"]]
    found = await search(client, "parked car lift", mode="bm25")
    assert [hit["id"] for hit in found["results"]] == [live["id"]]
    exported = {r["id"]: r for r in await export_records(client)}
    assert set(exported) == {expired["id"], live["id"]}
    assert exported[expired["id"]]["expiresAt"] == expired["expiresAt"]


# --- GET /memories ---------------------------------------------------------------------------


async def test_list_filters_by_category_text_and_owner(client: httpx.AsyncClient) -> None:
    tea = await add(client, "Alice drinks oolong tea", "preferences", userId="alice")
    trip = await add(client, "Alice flew to Osaka in May", "events", userId="alice")
    bob = await add(client, "Bob drinks espresso", "preferences", userId="bob")
    skill = await add(client, "Use ripgrep for code search", "skills", agentId="builder")
    main_tool = await add(client, "The shell tool needs absolute paths", "tools")

    assert {m["id"] for m in await list_items(client, userId="alice")} == {
        tea["id"],
        trip["id"],
        main_tool["id"],
    }
    assert [m["id"] for m in await list_items(client, userId="alice", category="events")] == [
        trip["id"]
    ]
    assert [m["id"] for m in await list_items(client, userId="bob", category="preferences")] == [
        bob["id"]
    ]
    assert {m["id"] for m in await list_items(client, userId="alice", q="DRINKS")} == {tea["id"]}
    assert await list_items(client, userId="alice", q="espresso") == []
    assert {m["id"] for m in await list_items(client, userId="bob", agentId="builder")} == {
        bob["id"],
        skill["id"],
    }
    assert [m["id"] for m in await list_items(client, agentId="builder", category="skills")] == [
        skill["id"]
    ]
    # The X-User-Id header selects the user as well.
    via_header = await list_items(client, headers={"X-User-Id": "bob"}, category="preferences")
    assert [m["id"] for m in via_header] == [bob["id"]]
    # Newest first.
    listed = await list_items(client, userId="alice")
    assert [m["id"] for m in listed] == [main_tool["id"], trip["id"], tea["id"]]


async def test_list_pagination_returns_every_item_once(client: httpx.AsyncClient) -> None:
    created = [
        await add(client, f"Fact number {i}: the user owns plant species {i * 7}", "entities")
        for i in range(11)
    ]
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        params: dict[str, Any] = {"limit": 4}
        if cursor:
            params["cursor"] = cursor
        response = await client.get("/memories", params=params)
        assert response.status_code == 200, response.text
        page = response.json()
        assert len(page["items"]) <= 4
        seen.extend(m["id"] for m in page["items"])
        pages += 1
        cursor = page["nextCursor"]
        if cursor is None:
            break
        assert pages < 10
    assert pages == 3
    assert len(seen) == len(set(seen)) == 11
    assert seen == [m["id"] for m in reversed(created)]  # newest first across pages


async def test_list_of_exactly_one_full_page_has_no_cursor(client: httpx.AsyncClient) -> None:
    for i in range(3):
        await add(client, f"Server rack {i} sits in row {i + 10}", "entities")
    page = (await client.get("/memories", params={"limit": 3})).json()
    assert len(page["items"]) == 3 and page["nextCursor"] is None


@pytest.mark.parametrize("params", [{"limit": 0}, {"limit": 201}, {"limit": "many"}])
async def test_list_rejects_bad_limits(client: httpx.AsyncClient, params: dict[str, Any]) -> None:
    assert_envelope(await client.get("/memories", params=params), 400, "INVALID_ARGUMENT")


# --- GET /memories/{id} ----------------------------------------------------------------------


def without_ids(body: dict[str, Any], *ids: str) -> str:
    text = json.dumps(body, sort_keys=True)
    for memory_id in ids:
        text = text.replace(memory_id, "<id>")
    return text


async def test_unknown_and_other_tenants_memory_are_the_same_404(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(api_keys=["ka:tenantA", "kb:tenantB"])
    a_headers = {"Authorization": "Bearer ka"}
    b_headers = {"Authorization": "Bearer kb"}
    async with app_client(settings) as client:
        memory = await add(client, "Tenant A's user likes jasmine tea", headers=a_headers)
        assert (await client.get(f"/memories/{memory['id']}", headers=a_headers)).status_code == 200

        unknown_id = "00000000-0000-4000-8000-00000000dead"
        unknown = await client.get(f"/memories/{unknown_id}", headers=b_headers)
        foreign = await client.get(f"/memories/{memory['id']}", headers=b_headers)
        assert_envelope(unknown, 404, "NOT_FOUND")
        assert_envelope(foreign, 404, "NOT_FOUND")
        assert without_ids(unknown.json(), unknown_id) == without_ids(foreign.json(), memory["id"])

        # Edits and deletes from tenant B are 404 too and change nothing.
        patch = await client.patch(
            f"/memories/{memory['id']}", json={"content": "hijacked"}, headers=b_headers
        )
        assert_envelope(patch, 404, "NOT_FOUND")
        delete = await client.delete(f"/memories/{memory['id']}", headers=b_headers)
        assert_envelope(delete, 404, "NOT_FOUND")
        kept = (await client.get(f"/memories/{memory['id']}", headers=a_headers)).json()
        assert kept["content"] == "Tenant A's user likes jasmine tea" and kept["version"] == 1

        assert_envelope(await client.get(f"/memories/{memory['id']}"), 401, "UNAUTHENTICATED")


async def test_masked_memory_needs_the_read_sensitive_scope(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(api_keys=["ka:tenantA", "kc:tenantA:memories:read-sensitive"])
    plain = {"Authorization": "Bearer ka"}
    sensitive = {"Authorization": "Bearer kc"}
    content = "The user takes sertraline every morning"
    async with app_client(settings) as client:
        created = await remember(
            client, content, "entities", headers=plain, sensitivity="masked", title="Medication"
        )
        assert created["action"] == "ADD"
        memory_id = created["memory"]["id"]
        assert created["memory"]["content"] == MASKED
        assert created["memory"]["sensitivity"] == "masked"

        masked = (await client.get(f"/memories/{memory_id}", headers=plain)).json()
        assert masked["content"] == MASKED and masked["abstract"] == MASKED
        assert masked["sensitivity"] == "masked"
        [listed] = await list_items(client, headers=plain)
        assert listed["content"] == MASKED and listed["abstract"] == MASKED
        [hit] = (await search(client, "sertraline", headers=plain))["results"]
        assert hit["id"] == memory_id and hit["content"] == MASKED and hit["abstract"] == MASKED

        clear = (await client.get(f"/memories/{memory_id}", headers=sensitive)).json()
        assert clear["content"] == content and clear["abstract"] == content
        [hit] = (await search(client, "sertraline", headers=sensitive))["results"]
        assert hit["content"] == content


async def test_masked_memory_is_readable_without_api_keys(client: httpx.AsyncClient) -> None:
    memory = await add(
        client, "The user's PIN hint is the cat's birthday", "entities", sensitivity="masked"
    )
    assert memory["content"] == "The user's PIN hint is the cat's birthday"
    fetched = (await client.get(f"/memories/{memory['id']}")).json()
    assert fetched["content"] == memory["content"] and fetched["sensitivity"] == "masked"


# --- PATCH /memories/{id} --------------------------------------------------------------------


async def test_patch_with_if_match_and_body_version(client: httpx.AsyncClient) -> None:
    memory = await add(client, "The user's favourite fruit is mango", "preferences")
    url = f"/memories/{memory['id']}"

    response = await client.patch(
        url, json={"content": "The user's favourite fruit is papaya"}, headers={"If-Match": "1"}
    )
    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["version"] == 2 and updated["id"] == memory["id"]
    assert updated["content"] == "The user's favourite fruit is papaya"
    assert updated["abstract"] == "The user's favourite fruit is papaya"
    assert parse_iso(updated["updatedAt"]) >= parse_iso(memory["updatedAt"])
    assert updated["createdAt"] == memory["createdAt"]
    assert (await client.get(url)).json()["version"] == 2

    assert [hit["id"] for hit in (await search(client, "papaya"))["results"]] == [memory["id"]]
    assert (await search(client, "mango"))["results"] == []

    stale = await client.patch(
        url, json={"content": "The user's favourite fruit is kiwi"}, headers={"If-Match": "1"}
    )
    error = assert_envelope(stale, 409, "CONFLICT")["error"]
    assert error["details"]["currentVersion"] == 2

    by_body = await client.patch(url, json={"version": 2, "priority": 5, "title": "Fruit"})
    assert by_body.status_code == 200, by_body.text
    assert (
        by_body.json()["version"] == 3
        and by_body.json()["priority"] == 5
        and by_body.json()["title"] == "Fruit"
    )
    stale_body = await client.patch(url, json={"version": 2, "priority": 7})
    assert assert_envelope(stale_body, 409, "CONFLICT")["error"]["details"]["currentVersion"] == 3

    quoted = await client.patch(url, json={"confidence": 0.5}, headers={"If-Match": '"3"'})
    assert quoted.status_code == 200, quoted.text
    assert quoted.json()["version"] == 4 and quoted.json()["confidence"] == 0.5

    final = (await client.get(url)).json()
    assert final["version"] == 4 and final["priority"] == 5
    assert final["content"] == "The user's favourite fruit is papaya"


async def test_patch_without_a_version_applies(client: httpx.AsyncClient) -> None:
    memory = await add(client, "The office is on the third floor", "entities")
    response = await client.patch(
        f"/memories/{memory['id']}", json={"content": "The office is on the fifth floor"}
    )
    assert response.status_code == 200, response.text
    assert response.json()["version"] == 2


@pytest.mark.parametrize("if_match", ["abc", "v2", "*"])
async def test_patch_with_an_invalid_if_match_is_400(
    client: httpx.AsyncClient, if_match: str
) -> None:
    memory = await add(client, "The user's bike is blue", "entities")
    response = await client.patch(
        f"/memories/{memory['id']}",
        json={"content": "The user's bike is red"},
        headers={"If-Match": if_match},
    )
    assert_envelope(response, 400, "INVALID_ARGUMENT")
    assert (await client.get(f"/memories/{memory['id']}")).json()["version"] == 1


async def test_patch_rejects_bad_values_and_unknown_ids(client: httpx.AsyncClient) -> None:
    memory = await add(client, "The user's car is a hatchback", "entities")
    url = f"/memories/{memory['id']}"
    assert_envelope(await client.patch(url, json={"category": "hobbies"}), 400, "INVALID_ARGUMENT")
    assert_envelope(
        await client.patch(url, json={"sensitivity": "never-store"}), 400, "INVALID_ARGUMENT"
    )
    assert_envelope(await client.patch(url, json={"content": ""}), 400, "INVALID_ARGUMENT")
    assert_envelope(await client.patch("/memories/nope", json={"content": "x"}), 404, "NOT_FOUND")
    assert (await client.get(url)).json()["version"] == 1


async def test_patch_redacts_secrets_in_new_content(client: httpx.AsyncClient) -> None:
    memory = await add(client, "The CI job uploads to the artifacts bucket", "tools")
    secret = "AKIAIOSFODNN7EXAMPLE"
    response = await client.patch(
        f"/memories/{memory['id']}",
        json={"content": f"The CI job uploads with access key {secret}"},
    )
    assert response.status_code == 200, response.text
    assert secret not in response.json()["content"] and "[REDACTED:" in response.json()["content"]
    assert await search_contents(client, secret, mode="bm25") == []


# --- DELETE /memories/{id} and the audit trail -----------------------------------------------


async def test_delete_removes_chunks_word_index_and_vectors(
    make_settings: Callable[..., Settings],
    db_path: Path,
) -> None:
    async with app_client(local_settings(make_settings)) as client:
        doomed = await add(client, "The staging cluster runs in the Frankfurt region", "entities")
        kept = await add(client, "The user's dentist appointment is on Fridays", "events")
        doomed_chunks, kept_chunks = (
            chunk_ids(db_path, doomed["id"]),
            chunk_ids(db_path, kept["id"]),
        )
        assert doomed_chunks and kept_chunks
        assert index_counts(db_path, doomed_chunks) == {
            "fts": len(doomed_chunks),
            "vec": len(doomed_chunks),
        }
        assert fts_hits(db_path, "frankfurt") == 1

        response = await client.delete(f"/memories/{doomed['id']}")
        assert response.status_code == 200, response.text
        assert response.json() == {"id": doomed["id"], "deleted": True}

        assert chunk_ids(db_path, doomed["id"]) == []
        assert index_counts(db_path, doomed_chunks) == {"fts": 0, "vec": 0}
        assert fts_hits(db_path, "frankfurt") == 0
        assert index_counts(db_path, kept_chunks) == {
            "fts": len(kept_chunks),
            "vec": len(kept_chunks),
        }

        assert_envelope(await client.get(f"/memories/{doomed['id']}"), 404, "NOT_FOUND")
        assert_envelope(await client.delete(f"/memories/{doomed['id']}"), 404, "NOT_FOUND")
        assert [m["id"] for m in await list_items(client)] == [kept["id"]]
        for mode in ("hybrid", "bm25", "vector"):
            hits = (await search(client, "staging cluster Frankfurt", mode=mode))["results"]
            assert doomed["id"] not in [hit["id"] for hit in hits], mode


async def test_add_update_delete_write_audit_rows(client: httpx.AsyncClient, db_path: Path) -> None:
    memory = await add(client, "The user plays the cello", "preferences")
    patched = await client.patch(
        f"/memories/{memory['id']}",
        json={"content": "The user plays the viola"},
        headers={"If-Match": "1"},
    )
    assert patched.status_code == 200, patched.text
    assert (await client.delete(f"/memories/{memory['id']}")).status_code == 200

    rows = audit_rows(db_path, memory["id"])
    assert [r["action"] for r in rows] == ["ADD", "UPDATE", "DELETE"]
    assert all(
        r["actor"] == "api" and r["tenant_id"] == "default" and r["created_at"] for r in rows
    )
    add_row, update_row, delete_row = rows
    assert add_row["before_json"] is None
    assert json.loads(add_row["after_json"])["content"] == "The user plays the cello"
    before, after = json.loads(update_row["before_json"]), json.loads(update_row["after_json"])
    assert (before["content"], before["version"]) == ("The user plays the cello", 1)
    assert (after["content"], after["version"]) == ("The user plays the viola", 2)
    assert json.loads(delete_row["before_json"])["content"] == "The user plays the viola"
    assert delete_row["after_json"] is None


async def test_profile_update_writes_an_audit_row(client: httpx.AsyncClient, db_path: Path) -> None:
    profile = await add(client, "Name: Carol", "profile")
    await remember(client, "Works as a nurse", "profile")
    rows = audit_rows(db_path, profile["id"])
    assert [r["action"] for r in rows] == ["ADD", "UPDATE"]
    assert json.loads(rows[1]["before_json"])["content"] == "Name: Carol"
    assert json.loads(rows[1]["after_json"])["content"] == "Name: Carol\nWorks as a nurse"


# --- POST /memories/forget -------------------------------------------------------------------


async def test_forget_by_subject_dry_run_then_delete(
    make_settings: Callable[..., Settings], db_path: Path
) -> None:
    async with app_client(local_settings(make_settings)) as client:
        about = [
            await add(client, "The user's sister Marguerite lives in Lyon", "entities"),
            await add(client, "Marguerite's birthday is on 3 March", "events"),
            await add(client, "Skill note: MARGUERITE reviews the French translations", "skills"),
        ]
        other = await add(client, "The user's brother lives in Porto", "entities")
        bob = await add(client, "Bob's aunt Marguerite is a pilot", "entities", userId="bob")
        doomed_chunks = [c for m in about for c in chunk_ids(db_path, m["id"])]
        assert index_counts(db_path, doomed_chunks) == {"fts": 3, "vec": 3}
        wanted = {m["id"] for m in about}

        dry = await client.post("/memories/forget", json={"subject": "marguerite", "dryRun": True})
        assert dry.status_code == 200, dry.text
        assert dry.json()["deleted"] == 0 and set(dry.json()["ids"]) == wanted
        assert len(await list_items(client)) == 4
        assert index_counts(db_path, doomed_chunks) == {"fts": 3, "vec": 3}

        real = await client.post("/memories/forget", json={"subject": "Marguerite"})
        assert real.status_code == 200, real.text
        assert real.json()["deleted"] == 3 and set(real.json()["ids"]) == wanted
        assert [m["id"] for m in await list_items(client)] == [other["id"]]
        assert all(chunk_ids(db_path, memory_id) == [] for memory_id in wanted)
        assert index_counts(db_path, doomed_chunks) == {"fts": 0, "vec": 0}
        assert (await search(client, "Marguerite", mode="bm25"))["results"] == []
        # Another user's memory about the same subject stays.
        assert [m["id"] for m in await list_items(client, userId="bob")] == [bob["id"]]
        assert [r["action"] for r in audit_rows(db_path, about[0]["id"])] == ["ADD", "DELETE"]


async def test_forget_by_days_deletes_only_recent_memories(client: httpx.AsyncClient) -> None:
    now = datetime.now(UTC)
    month_ago = iso(now - timedelta(days=30))
    old = record(
        "22222222-0000-4000-8000-000000000001",
        "Visited the Louvre",
        "events",
        observedAt=month_ago,
        createdAt=month_ago,
        updatedAt=month_ago,
    )
    await import_records(client, [old])
    recent = await add(client, "Visited the Prado museum", "events")
    recent_pref = await add(client, "Prefers window seats", "preferences")

    response = await client.post("/memories/forget", json={"days": 7})
    assert response.status_code == 200, response.text
    assert response.json()["deleted"] == 2
    assert set(response.json()["ids"]) == {recent["id"], recent_pref["id"]}
    assert [m["id"] for m in await list_items(client)] == [old["id"]]


async def test_forget_by_days_and_subject_needs_both(client: httpx.AsyncClient) -> None:
    now = datetime.now(UTC)
    month_ago = iso(now - timedelta(days=30))
    old = record(
        "22222222-0000-4000-8000-000000000002",
        "Old note about Zanzibar",
        "events",
        observedAt=month_ago,
        createdAt=month_ago,
        updatedAt=month_ago,
    )
    await import_records(client, [old])
    fresh = await add(client, "New note about Zanzibar", "events")
    await add(client, "New note about Madagascar", "events")
    response = await client.post("/memories/forget", json={"days": 7, "subject": "zanzibar"})
    assert response.json()["ids"] == [fresh["id"]]


@pytest.mark.parametrize(
    "body", [{}, {"dryRun": True}, {"userId": "alice"}, {"subject": ""}, {"days": 0}]
)
async def test_forget_without_days_or_subject_is_400(
    client: httpx.AsyncClient, body: dict[str, Any]
) -> None:
    memory = await add(client, "The user collects stamps", "preferences")
    assert_envelope(await client.post("/memories/forget", json=body), 400, "INVALID_ARGUMENT")
    assert [m["id"] for m in await list_items(client)] == [memory["id"]]


# --- export / import -------------------------------------------------------------------------


async def populate(client: httpx.AsyncClient) -> None:
    await add(client, "Name: Dana", "profile")
    await remember(client, "Lives in Oslo", "profile")
    await add(
        client,
        "Dana prefers aisle seats on long flights",
        "preferences",
        confidence=0.7,
        priority=2,
    )
    await add(
        client, "Dana's passport number is stored with her lawyer", "entities", sensitivity="masked"
    )
    await add(client, "Dana is in Tromsø for the aurora this week", "events", ttlDays=5)
    await add(
        client,
        "## Situation\n- flaky test\n## Approach\n- rerun with -x\n## Reflect\n- seed the RNG",
        "experiences",
        title="Flaky tests",
    )
    await add(client, "用户喜欢喝绿茶", "preferences")


async def test_export_import_into_a_fresh_database_round_trips(
    make_settings: Callable[..., Settings],
    tmp_path: Path,
    migrated_template: Path,
) -> None:
    async with app_client(make_settings()) as source:
        await populate(source)
        exported = await export_records(source)
    assert len(exported) == 6
    assert {r["category"] for r in exported} == {
        "profile",
        "preferences",
        "entities",
        "events",
        "experiences",
    }
    assert all(r["version"] >= 1 and r["uri"].startswith("viking://") for r in exported)

    fresh_path = tmp_path / "fresh.db"
    shutil.copyfile(migrated_template, fresh_path)
    async with app_client(make_settings(database_url=f"sqlite:///{fresh_path}")) as target:
        assert await export_records(target) == []
        result = await import_records(target, exported)
        assert result["imported"] == 6 and result["ids"] == [r["id"] for r in exported]
        again = await export_records(target)
        assert again == exported
        # Imported text is indexed again.
        assert [hit["content"] for hit in (await search(target, "aisle seats"))["results"]] == [
            "Dana prefers aisle seats on long flights"
        ]
        assert "用户喜欢喝绿茶" in await search_contents(target, "绿茶")
        # Importing the same export twice replaces by id.
        await import_records(target, exported)
        assert await export_records(target) == exported
        assert len(await list_items(target)) == 6
    assert memory_row_count(fresh_path) == 6


async def test_export_import_round_trips_with_vectors(
    make_settings: Callable[..., Settings],
    tmp_path: Path,
    migrated_template: Path,
) -> None:
    async with app_client(local_settings(make_settings)) as source:
        await add(source, "The user's dog is called Biscuit", "entities")
        await add(source, "The user runs 10 km every Sunday", "events")
        exported = await export_records(source)
    assert {r["embeddingModel"] for r in exported} == {MODEL_ID}

    fresh_path = tmp_path / "fresh-vectors.db"
    shutil.copyfile(migrated_template, fresh_path)
    settings = local_settings(make_settings, database_url=f"sqlite:///{fresh_path}")
    async with app_client(settings) as target:
        await import_records(target, exported)
        assert await export_records(target) == exported
        hits = (await search(target, "pet puppy name", mode="vector"))["results"]
        assert hits[0]["content"] == "The user's dog is called Biscuit"
    with open_db(fresh_path) as conn:
        assert conn.execute("SELECT count(*) FROM memory_vec").fetchone()[0] == 2


async def test_import_with_a_bad_line_is_400_naming_the_line(client: httpx.AsyncClient) -> None:
    good = json.dumps(record("33333333-0000-4000-8000-000000000001", "A fine memory"))
    for body, line in [
        (f"{good}\n{{not json\n", 2),
        (f"{good}\n\n{json.dumps({'id': 'x', 'content': 'missing fields'})}\n", 3),
        (
            f"{json.dumps(record('33333333-0000-4000-8000-000000000002', 'x', category='hobbies'))}\n",
            1,
        ),
        (f"{good}\n[1, 2]\n", 2),
    ]:
        response = await client.post(
            "/memories/import",
            content=body.encode(),
            headers={"Content-Type": "application/x-ndjson"},
        )
        error = assert_envelope(response, 400, "INVALID_ARGUMENT")["error"]
        assert error["details"]["line"] == line
        assert f"line {line}" in error["message"]
    # A rejected import writes nothing.
    assert await list_items(client) == []


async def test_import_of_non_utf8_is_400(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/memories/import",
        content=b"\xff\xfe{}\n",
        headers={"Content-Type": "application/x-ndjson"},
    )
    assert_envelope(response, 400, "INVALID_ARGUMENT")


async def test_export_is_per_user_and_agent(client: httpx.AsyncClient) -> None:
    await add(client, "Erin likes hiking", "preferences", userId="erin")
    await add(client, "Frank likes sailing", "preferences", userId="frank")
    await add(client, "Use the staging DB for load tests", "tools", agentId="ops")
    erin = await export_records(client, userId="erin")
    assert [r["content"] for r in erin] == ["Erin likes hiking"]
    frank_ops = await export_records(client, userId="frank", agentId="ops")
    assert {r["content"] for r in frank_ops} == {
        "Frank likes sailing",
        "Use the staging DB for load tests",
    }


async def test_an_edited_memory_is_a_duplicate_of_its_new_text_not_of_its_old_one(
    client: httpx.AsyncClient,
) -> None:
    memory = await add(client, "The user drinks oolong tea.")
    response = await client.patch(
        f"/memories/{memory['id']}", json={"content": "The user drinks jasmine tea.", "version": 1}
    )
    assert response.status_code == 200, response.text
    again = await remember(client, "the user drinks JASMINE tea")
    assert (again["action"], again["memory"]["id"]) == ("NONE", memory["id"])
    assert (await remember(client, "The user drinks oolong tea."))["action"] == "ADD"


async def test_a_memory_stored_without_a_content_key_is_still_found_as_a_duplicate(
    make_settings: Callable[..., Settings],
) -> None:
    """A row written before content keys (or by hand) has none: its text is compared instead."""
    harness = app_client(make_settings())
    async with harness as client:
        memory = await add(client, "The user's team ships on Thursdays.")
        with harness.app.state.services.uow.write() as db:
            db.execute(text("UPDATE memories SET content_key = NULL"))
        again = await remember(client, "the user's team ships on thursdays")
        assert (again["action"], again["memory"]["id"]) == ("NONE", memory["id"])
