"""POST /memories/search over HTTP with the bundled local embedding model (docs/recall.md, Hybrid
search): Chinese and cross-language queries, identifiers by keyword, modes, explain, filters,
temporal decay, MMR, keyword-only degradation and isolation between tenants and users."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from app.settings import Settings
from tests.conftest import app_client

FILLERS = [
    "The user's cat is named Miso.",
    "The user works as a nurse at the city hospital.",
    "The user prefers window seats on planes.",
    "The user is learning to play the piano.",
    "The user's birthday is in October.",
    "The user drives an electric car.",
]
CHINESE_FILLERS = [
    "用户的猫叫味噌。",
    "用户在医院当护士。",
    "用户坐飞机喜欢靠窗的座位。",
    "用户正在学弹钢琴。",
    "用户的生日在十月。",
    "用户开电动车。",
]


@pytest.fixture
async def client(make_settings: Callable[..., Settings]) -> AsyncIterator[httpx.AsyncClient]:
    """One app with the real local embedding model per test."""
    async with app_client(make_settings(embedding={"provider": "local"})) as c:
        yield c


async def add(
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
    body = response.json()
    assert body["action"] == "ADD", body
    return body["memory"]


async def add_all(
    client: httpx.AsyncClient, contents: list[str], category: str = "preferences", **extra: Any
) -> list[dict[str, Any]]:
    return [await add(client, content, category, **extra) for content in contents]


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def record(
    content: str,
    category: str = "cases",
    owner: str = "default",
    memory_id: str | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """An exported memory line; import stores it as given (no dedupe), which lets a test hold
    memories that commit_memory would merge as near-duplicates."""
    memory_id = memory_id or str(uuid.uuid4())
    kind = "agent" if category in {"experiences", "skills", "tools"} else "user"
    return {
        "id": memory_id,
        "uri": f"viking://{kind}/{owner}/memories/{category}/m-{memory_id[:8]}.md",
        "category": category,
        "title": fields.pop("title", content[:60]),
        "abstract": content,
        "content": content,
        "ownerKind": kind,
        "ownerId": owner,
        "source": {"kind": "api"},
        **fields,
    }


async def import_records(
    client: httpx.AsyncClient, records: list[dict[str, Any]], headers: dict[str, str] | None = None
) -> None:
    body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    response = await client.post("/memories/import", content=body.encode(), headers=headers)
    assert response.status_code == 200, response.text
    assert response.json()["imported"] == len(records)


async def search(
    client: httpx.AsyncClient, query: str, headers: dict[str, str] | None = None, **options: Any
) -> dict[str, Any]:
    response = await client.post(
        "/memories/search", json={"query": query, **options}, headers=headers
    )
    assert response.status_code == 200, response.text
    return response.json()


async def contents(client: httpx.AsyncClient, query: str, **options: Any) -> list[str]:
    return [hit["content"] for hit in (await search(client, query, **options))["results"]]


# --- language ------------------------------------------------------------------------------


async def test_chinese_query_finds_chinese_memory(client: httpx.AsyncClient) -> None:
    await add_all(client, CHINESE_FILLERS)
    await add(client, "用户喜欢喝绿茶")
    await add(client, "The user drinks black coffee at work.")
    for mode in ("hybrid", "bm25"):
        result = await search(client, "绿茶", mode=mode, explain=True)
        assert result["mode"] == mode
        first = result["results"][0]
        assert first["content"] == "用户喜欢喝绿茶", mode
        assert first["explain"]["text"] > 0, mode
    # In bm25 mode only keyword matches come back.
    assert await contents(client, "绿茶", mode="bm25") == ["用户喜欢喝绿茶"]
    assert (await contents(client, "用户喜欢喝什么茶"))[0] == "用户喜欢喝绿茶"


async def test_chinese_query_finds_english_memory(client: httpx.AsyncClient) -> None:
    await add_all(client, FILLERS, userId="english")
    await add(client, "The user is allergic to peanuts.", userId="english")
    for query in ("花生过敏", "用户对什么食物过敏"):
        result = await search(client, query, userId="english", explain=True)
        assert result["mode"] == "hybrid"
        first = result["results"][0]
        assert first["content"] == "The user is allergic to peanuts.", (query, result["results"])
        assert (
            first["explain"]["text"] == 0 and first["explain"]["vector"] > 0
        )  # found by meaning alone


async def test_english_query_finds_chinese_memory(client: httpx.AsyncClient) -> None:
    await add_all(client, CHINESE_FILLERS, userId="chinese")
    await add(client, "用户对花生过敏。", userId="chinese")
    for query in ("peanut allergy", "Which food is the user allergic to?"):
        result = await search(client, query, userId="chinese")
        assert result["results"][0]["content"] == "用户对花生过敏。", (query, result["results"])


# --- identifiers by keyword ----------------------------------------------------------------


async def test_error_code_is_found_by_keyword_among_similar_memories(
    client: httpx.AsyncClient,
) -> None:
    codes = [
        "ERR_CONN_RESET_4011",
        "ERR_CONN_RESET_4013",
        "ERR_CONN_REFUSED_4012",
        "ERR_SOCKET_RESET_4012",
        "ERR_CONN_TIMEOUT_5003",
        "ERR_CONN_RESET_4102",
        "ERR_TLS_RESET_4012",
    ]
    template = "The payments API call failed with connection error {} after a network blip."
    await import_records(client, [record(template.format(code)) for code in codes])
    target = template.format("ERR_CONN_RESET_4012")
    await import_records(client, [record(target)])

    bm25 = await search(client, "ERR_CONN_RESET_4012", mode="bm25")
    assert [hit["content"] for hit in bm25["results"]] == [target]
    for query in ("ERR_CONN_RESET_4012", "what does ERR_CONN_RESET_4012 mean"):
        hybrid = await search(client, query, explain=True)
        assert hybrid["mode"] == "hybrid"
        assert len(hybrid["results"]) == 8  # the similar memories come back by meaning...
        first, *rest = hybrid["results"]
        assert first["content"] == target, query  # ...but the exact code is first
        assert first["explain"]["text"] > 0 and all(hit["explain"]["text"] == 0 for hit in rest)


async def test_host_name_is_found_by_keyword_among_similar_memories(
    client: httpx.AsyncClient,
) -> None:
    template = "The database host {} ran out of disk space during the nightly backup."
    hosts = [
        "db-prod-3",
        "db-prod-5",
        "db-prod-12",
        "db-staging-7",
        "db-dev-7",
        "db-prod-17",
        "db-prod-70",
    ]
    await import_records(client, [record(template.format(host)) for host in hosts])
    target = template.format("db-prod-7")
    await import_records(client, [record(target)])
    for mode in ("bm25", "hybrid"):
        result = await search(client, "db-prod-7", mode=mode, explain=True)
        first, *rest = result["results"]
        assert first["content"] == target, (mode, result["results"])
        assert all(first["score"] > hit["score"] for hit in rest), mode
        assert all(first["explain"]["text"] > hit["explain"]["text"] for hit in rest), mode


# --- modes and explain ---------------------------------------------------------------------


async def test_vector_mode_finds_by_meaning_without_shared_words(client: httpx.AsyncClient) -> None:
    await add_all(client, FILLERS)
    result = await search(client, "feline companion", mode="vector", explain=True)
    assert result["mode"] == "vector"
    assert result["results"][0]["content"] == "The user's cat is named Miso."
    assert len(result["results"]) == len(FILLERS)
    for hit in result["results"]:
        assert hit["explain"]["text"] == 0
        assert hit["score"] == pytest.approx(hit["explain"]["vector"], abs=1e-5)
    # The same query has no keyword match at all.
    assert (await search(client, "feline companion", mode="bm25"))["results"] == []


async def test_explain_returns_each_component(client: httpx.AsyncClient) -> None:
    await add_all(client, FILLERS)
    await add(client, "The user enjoys hiking in the Alps every summer.")
    plain = await search(client, "hiking Alps")
    assert all("explain" not in hit for hit in plain["results"])
    result = await search(client, "hiking Alps", explain=True)
    first = result["results"][0]
    assert first["content"] == "The user enjoys hiking in the Alps every summer."
    explain = first["explain"]
    assert set(explain) == {"vector", "text", "decay", "mmr"}
    assert all(isinstance(explain[k], float) for k in ("vector", "text", "decay", "mmr"))
    assert 0 < explain["vector"] <= 1 and 0 < explain["text"] <= 1
    assert explain["decay"] == 1.0  # preferences are evergreen
    assert first["score"] == pytest.approx(
        0.7 * explain["vector"] + 0.3 * explain["text"], abs=1e-5
    )
    hit_keys = {
        "id",
        "uri",
        "category",
        "title",
        "abstract",
        "content",
        "score",
        "level",
        "createdAt",
        "updatedAt",
        "explain",
    }
    assert hit_keys <= set(first)
    scores = [hit["score"] for hit in result["results"]]
    assert scores[0] == max(scores)


async def test_keyword_only_without_an_embedding_provider(
    make_settings: Callable[..., Settings],
) -> None:
    async with app_client(make_settings(embedding={"provider": "none"})) as client:
        memory = await add(client, "The user's favourite band is Radiohead.")
        assert memory.get("embeddingModel") is None
        await add(client, "The user plays tennis on Thursdays.")
        for mode in ("hybrid", "vector", "bm25"):
            result = await search(client, "Radiohead band", mode=mode, explain=True)
            assert result["mode"] == "bm25", mode
            [hit] = result["results"]
            assert hit["id"] == memory["id"] and hit["explain"]["vector"] == 0
        assert (await search(client, "music group"))["results"] == []


# --- filters -------------------------------------------------------------------------------


async def test_score_threshold_filters(client: httpx.AsyncClient) -> None:
    await add_all(client, FILLERS)
    everything = (await search(client, "cat named Miso"))["results"]
    assert len(everything) == len(FILLERS)
    scores = sorted((hit["score"] for hit in everything), reverse=True)
    threshold = (scores[0] + scores[1]) / 2
    kept = (await search(client, "cat named Miso", scoreThreshold=threshold))["results"]
    assert [hit["content"] for hit in kept] == ["The user's cat is named Miso."]
    assert all(hit["score"] >= threshold for hit in kept)
    middle = scores[len(scores) // 2]
    some = (await search(client, "cat named Miso", scoreThreshold=middle))["results"]
    assert len(some) == sum(1 for s in scores if s >= middle)
    assert all(hit["score"] >= middle for hit in some)
    # No keyword match and nothing above the threshold: nothing at all.
    assert (await search(client, "feline companion", mode="vector", scoreThreshold=0.99))[
        "results"
    ] == []


@pytest.mark.parametrize(
    "body",
    [
        {"scoreThreshold": 1.5},
        {"limit": 0},
        {"limit": 101},
        {"mode": "fuzzy"},
        {"categories": ["hobbies"]},
        {"query": ""},
    ],
)
async def test_bad_search_requests_are_400(client: httpx.AsyncClient, body: dict[str, Any]) -> None:
    response = await client.post("/memories/search", json={"query": "tea", **body})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "INVALID_ARGUMENT"


async def test_limit_caps_the_results(client: httpx.AsyncClient) -> None:
    await add_all(client, FILLERS)
    assert len((await search(client, "the user", limit=2))["results"]) == 2


async def test_categories_filter(client: httpx.AsyncClient) -> None:
    pref = await add(client, "The user likes sushi for dinner.", "preferences")
    event = await add(client, "The user had sushi with Ana last Friday.", "events")
    entity = await add(client, "Sushi Sato is the user's favourite restaurant.", "entities")
    assert {hit["id"] for hit in (await search(client, "sushi"))["results"]} == {
        pref["id"],
        event["id"],
        entity["id"],
    }
    events = (await search(client, "sushi", categories=["events"]))["results"]
    assert [hit["id"] for hit in events] == [event["id"]]
    two = (await search(client, "sushi", categories=["preferences", "entities"]))["results"]
    assert {hit["id"] for hit in two} == {pref["id"], entity["id"]}
    assert all(hit["category"] in {"preferences", "entities"} for hit in two)
    assert (await search(client, "sushi", categories=["cases"]))["results"] == []


async def test_target_uri_prefix_filter(client: httpx.AsyncClient) -> None:
    pref = await add(client, "The user deploys with Kubernetes.", "preferences")
    case = await add(client, "A Kubernetes deploy failed because of a missing secret.", "cases")
    experience = await add(
        client,
        "## Situation\n- Kubernetes deploy\n## Approach\n- apply manifests\n"
        "## Reflect\n- check secrets first",
        "experiences",
    )
    assert {hit["id"] for hit in (await search(client, "Kubernetes deploy"))["results"]} == {
        pref["id"],
        case["id"],
        experience["id"],
    }

    agent = await search(
        client, "Kubernetes deploy", targetUri="viking://agent/main/memories/experiences/"
    )
    assert [hit["id"] for hit in agent["results"]] == [experience["id"]]
    user = (await search(client, "Kubernetes deploy", targetUri="viking://user/default/memories/"))[
        "results"
    ]
    assert {hit["id"] for hit in user} == {pref["id"], case["id"]}
    assert all(hit["uri"].startswith("viking://user/default/memories/") for hit in user)
    cases = await search(
        client, "Kubernetes deploy", targetUri="viking://user/default/memories/cases"
    )
    assert [hit["id"] for hit in cases["results"]] == [case["id"]]
    exact = (await search(client, "Kubernetes deploy", targetUri=pref["uri"]))["results"]
    assert [hit["id"] for hit in exact] == [pref["id"]]
    assert (await search(client, "Kubernetes deploy", targetUri="viking://user/someone-else/"))[
        "results"
    ] == []


# --- ranking -------------------------------------------------------------------------------


async def test_temporal_decay_on_dated_categories_only(client: httpx.AsyncClient) -> None:
    now = datetime.now(UTC)
    text = "The user went to a jazz concert at the Blue Note club."

    def dated(category: str, days: int, memory_id: str) -> dict[str, Any]:
        return record(
            text,
            category,
            memory_id=memory_id,
            title="Jazz concert",
            observedAt=iso(now - timedelta(days=days)),
        )

    # Equal scores would put the latest observed first: the scores and decay factors are asserted.
    old_event, new_event = (
        "00000000-0000-4000-8000-00000000e001",
        "00000000-0000-4000-8000-00000000e002",
    )
    old_pref, new_pref = (
        "00000000-0000-4000-8000-00000000f001",
        "00000000-0000-4000-8000-00000000f002",
    )
    await import_records(
        client,
        [
            dated("events", 200, old_event),
            dated("events", 1, new_event),
            dated("preferences", 200, old_pref),
            dated("preferences", 1, new_pref),
        ],
    )

    events = (await search(client, "jazz concert", categories=["events"], explain=True))["results"]
    assert [hit["id"] for hit in events] == [new_event, old_event]
    new_hit, old_hit = events
    assert new_hit["explain"]["vector"] == pytest.approx(old_hit["explain"]["vector"], abs=1e-6)
    assert new_hit["explain"]["text"] == pytest.approx(old_hit["explain"]["text"], abs=1e-6)
    assert new_hit["explain"]["decay"] == pytest.approx(math.exp(-math.log(2) / 30 * 1), rel=1e-3)
    assert old_hit["explain"]["decay"] == pytest.approx(math.exp(-math.log(2) / 30 * 200), rel=1e-2)
    assert new_hit["score"] > old_hit["score"]

    prefs = (await search(client, "jazz concert", categories=["preferences"], explain=True))[
        "results"
    ]
    assert {hit["id"] for hit in prefs} == {old_pref, new_pref}
    assert [hit["explain"]["decay"] for hit in prefs] == [1.0, 1.0]
    assert prefs[0]["score"] == pytest.approx(prefs[1]["score"], abs=1e-6)
    # Age does not lower the old preference's score; of the equal scores the latest comes first.
    assert prefs[0]["id"] == new_pref


async def test_mmr_prefers_a_distinct_memory_over_a_second_near_duplicate(
    client: httpx.AsyncClient,
) -> None:
    await add_all(client, FILLERS)
    near = [
        "Always run the database migrations before you deploy the backend service.",
        "Always run the database migrations before deploying the backend service.",
        "Always run database migrations before you deploy the backend service.",
    ]
    distinct = "Database migrations are reviewed by the DBA team and kept in the schema folder."
    # Imported: commit_memory would rightly refuse the near-duplicates.
    await import_records(
        client, [record(text, "preferences", title="Deploy checklist") for text in near]
    )
    await import_records(client, [record(distinct, "preferences", title="Migration reviews")])

    result = await search(client, "run database migrations before deploying", explain=True)
    hits = result["results"]
    order = [hit["content"] for hit in hits]
    by_score = [hit["content"] for hit in sorted(hits, key=lambda h: -h["score"])]
    # By relevance alone the distinct memory comes after all three near-duplicates...
    assert set(by_score[:3]) == set(near) and by_score[3] == distinct
    # ...but diversity puts it right after the first of them.
    assert order[0] in near
    assert order[1] == distinct
    assert set(order[2:4]) == set(near) - {order[0]}
    assert hits[1]["explain"]["mmr"] > hits[2]["explain"]["mmr"]


async def test_days_find_memories_that_said_them_relatively(client: httpx.AsyncClient) -> None:
    # Each memory's relative days are resolved against when it was observed; a question's own
    # relative days against today.
    yesterday = datetime.now(UTC) - timedelta(days=1)
    boiler, bike = "00000000-0000-4000-8000-0000000b0001", "00000000-0000-4000-8000-0000000b0002"
    await import_records(
        client,
        [
            record(
                "Today I fixed the boiler in the basement.",
                "events",
                memory_id=boiler,
                observedAt=iso(yesterday),
            ),
            record(
                "Last week I fixed the bike in the basement.",
                "events",
                memory_id=bike,
                observedAt=iso(yesterday),
            ),
        ],
    )
    hits = (await search(client, "what did I fix yesterday?", explain=True))["results"]
    assert [h["id"] for h in hits] == [boiler, bike]
    assert hits[0]["explain"]["text"] > hits[1]["explain"]["text"]
    week_before = (yesterday - timedelta(days=7)).strftime("%d %B %Y")
    assert (await search(client, f"what did I fix on {week_before}?"))["results"][0]["id"] == bike


async def test_scores_are_calibrated_so_an_unrelated_memory_scores_nothing(
    client: httpx.AsyncClient,
) -> None:
    await add_all(client, FILLERS)
    hits = (await search(client, "quarterly tax filing deadline", explain=True))["results"]
    # The local model rates almost any two sentences above 0.7 in cosine; above its floor, an
    # unrelated memory keeps (almost) nothing, so recall's 0.15 threshold means something.
    assert hits and all(h["score"] < 0.15 for h in hits)
    cat = (await search(client, "what is my cat called?", explain=True))["results"][0]
    assert cat["content"] == "The user's cat is named Miso." and cat["score"] > 0.15


# --- isolation -----------------------------------------------------------------------------


async def test_tenants_and_users_never_see_each_others_memories(
    make_settings: Callable[..., Settings],
) -> None:
    settings = make_settings(embedding={"provider": "local"}, api_keys=["ka:tenantA", "kb:tenantB"])
    a = {"Authorization": "Bearer ka"}
    b = {"Authorization": "Bearer kb"}
    async with app_client(settings) as client:
        a_alice = await add(
            client,
            "Alice keeps her spare keys under the blue flowerpot.",
            headers={**a, "X-User-Id": "alice"},
        )
        a_bob = await add(
            client,
            "Bob keeps his spare keys in the garage drawer.",
            headers={**a, "X-User-Id": "bob"},
        )
        a_tool = await add(
            client, "The deploy tool needs the --force flag for hotfixes.", "tools", headers=a
        )
        b_alice = await add(
            client,
            "Tenant B's Alice keeps her keys at the office.",
            headers={**b, "X-User-Id": "alice"},
        )

        async def found(headers: dict[str, str], query: str, **body: Any) -> set[str]:
            ids: set[str] = set()
            for mode in ("hybrid", "bm25", "vector"):
                ids |= {
                    hit["id"]
                    for hit in (await search(client, query, headers=headers, mode=mode, **body))[
                        "results"
                    ]
                }
            return ids

        # Search.
        assert await found({**a, "X-User-Id": "alice"}, "spare keys") == {
            a_alice["id"],
            a_tool["id"],
        }
        assert await found({**a, "X-User-Id": "bob"}, "spare keys flowerpot") == {
            a_bob["id"],
            a_tool["id"],
        }
        assert await found({**b, "X-User-Id": "alice"}, "spare keys flowerpot deploy tool") == {
            b_alice["id"]
        }
        assert await found(b, "spare keys flowerpot deploy tool", userId="alice") == {b_alice["id"]}
        assert await found(b, "spare keys", userId="bob") == set()

        # List.
        async def listed(headers: dict[str, str], **params: Any) -> set[str]:
            response = await client.get("/memories", params=params, headers=headers)
            assert response.status_code == 200, response.text
            return {m["id"] for m in response.json()["items"]}

        assert await listed({**a, "X-User-Id": "alice"}) == {a_alice["id"], a_tool["id"]}
        assert await listed(a, userId="bob") == {a_bob["id"], a_tool["id"]}
        assert await listed({**b, "X-User-Id": "alice"}) == {b_alice["id"]}
        assert await listed(b, userId="bob") == set()
        assert await listed(b, q="flowerpot", userId="alice") == set()

        # Read.
        for memory in (a_alice, a_bob, a_tool):
            response = await client.get(f"/memories/{memory['id']}", headers=b)
            assert response.status_code == 404 and response.json()["error"]["code"] == "NOT_FOUND"
        assert (await client.get(f"/memories/{b_alice['id']}", headers=a)).status_code == 404

        # Export.
        async def exported(headers: dict[str, str], **params: Any) -> set[str]:
            response = await client.get("/memories/export", params=params, headers=headers)
            assert response.status_code == 200, response.text
            return {json.loads(line)["id"] for line in response.text.splitlines()}

        assert await exported({**a, "X-User-Id": "alice"}) == {a_alice["id"], a_tool["id"]}
        assert await exported({**b, "X-User-Id": "alice"}) == {b_alice["id"]}
        assert await exported(b, userId="bob") == set()

        # Forget in tenant B does not touch tenant A.
        response = await client.post(
            "/memories/forget", json={"subject": "keys", "userId": "alice"}, headers=b
        )
        assert response.json()["ids"] == [b_alice["id"]]
        assert await listed({**a, "X-User-Id": "alice"}) == {a_alice["id"], a_tool["id"]}

        # Importing another tenant's memory id cannot take it over.
        record_of_a = json.loads(
            (
                await client.get("/memories/export", headers={**a, "X-User-Id": "alice"})
            ).text.splitlines()[0]
        )
        hijack = json.dumps({**record_of_a, "content": "hijacked"}) + "\n"
        response = await client.post("/memories/import", content=hijack.encode(), headers=b)
        # Answered as if the id did not exist: tenant B gets its own copy under a new id.
        assert response.status_code == 200 and response.json()["ids"] != [record_of_a["id"]]
        copy = await client.get(f"/memories/{response.json()['ids'][0]}", headers=b)
        assert copy.json()["content"] == "hijacked"
        kept = await client.get(f"/memories/{record_of_a['id']}", headers=a)
        assert kept.json()["content"] == record_of_a["content"]


async def test_a_question_about_a_day_leans_on_the_memories_that_name_it(
    client: httpx.AsyncClient,
) -> None:
    # The model knows nothing of calendar days: "what did Li Na do on <day>" is nearer small talk
    # about doing things than the memory of that day, which names it relatively (observed three
    # days later). That one comes first. (A category that does not decay: these days are old.)
    hike = "00000000-0000-4000-8000-0000000d0001"
    chatter = [
        "李娜: 那天我做了什么来着？想不起来了。",
        "李娜: 你周末都做了些什么？",
        "李娜: 昨天累坏了，在沙发上就睡着了。",
        "李娜: 最近在考虑换工作。",
    ]
    moments = [datetime(2023, 5, day, 18, tzinfo=UTC) for day in (2, 6, 26, 29)]
    await import_records(
        client,
        [
            *(
                record(text, "entities", title="李娜", observedAt=iso(moment))
                for text, moment in zip(chatter, moments, strict=True)
            ),
            record(
                "李娜: 终于把车库收拾干净了。三天前我和哥哥终于爬上了峨眉山，风景太美了。",
                "entities",
                title="李娜",
                memory_id=hike,
                observedAt=iso(datetime(2023, 5, 23, 9, tzinfo=UTC)),
            ),
        ],
    )
    for question in ("李娜2023年5月20日做了什么？", "What did 李娜 do on 2023-05-20?"):
        hits = (await search(client, question, explain=True))["results"]
        assert hits[0]["id"] == hike, [(h["content"], h["explain"]) for h in hits]
        # Led by its words, not by a vector side that rates the small talk higher (0.475 against
        # 0.405 for the Chinese question): weighed 0.7 / 0.3 the lead was 0.454 to 0.406.
        assert hits[0]["score"] > 1.5 * hits[1]["score"], [(h["content"], h["score"]) for h in hits]


async def test_of_equal_scores_the_latest_observed_comes_first(client: httpx.AsyncClient) -> None:
    # Imported as given (commit_memory would keep one): the same words, observed a year apart.
    older, newer = "00000000-0000-4000-8000-0000000e0001", "00000000-0000-4000-8000-0000000e0002"
    text = "The user's standing desk is set to 112 cm."
    await import_records(
        client,
        [
            record(text, "preferences", memory_id=older, observedAt="2024-03-01T09:00:00.000Z"),
            record(text, "preferences", memory_id=newer, observedAt="2025-03-01T09:00:00.000Z"),
        ],
    )
    for mode in ("hybrid", "bm25", "vector"):
        hits = (await search(client, "standing desk height", mode=mode, explain=True))["results"]
        assert [h["id"] for h in hits] == [newer, older], mode
        assert hits[0]["explain"]["vector"] == hits[1]["explain"]["vector"], mode
