"""Ranked archive search: per-session statistics (stored by Phase 2), bounded
candidates, the host's time, time filters (inside the vector search too), neighbours, relative
dates and the vector side computed in Phase 2."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pysqlite3.dbapi2 as sqlite
import pytest
from sqlalchemy import text

from app.archives.index.search_index import MessageVectors, SearchFact, facts_of, write_search_index
from app.archives.read import repository as archives_repo
from app.db.engine import create_db_engine
from app.db.models import AgentSession, Archive
from app.db.uow import UnitOfWork
from app.settings import Settings
from tests.api.test_archives import archive, message_hits, search
from tests.conftest import app_client
from tests.helpers.messages import assistant, user

MAY_8 = int(datetime(2023, 5, 8, 10, 0, tzinfo=UTC).timestamp() * 1000)
HOUR = 3_600_000


def said(text: str, at_ms: int, role: str = "user") -> dict[str, Any]:
    return {**(user(text) if role == "user" else assistant(text)), "timestamp": at_ms}


def untimed(text: str) -> dict[str, Any]:
    """A user message the host sent without a ``timestamp``."""
    return {"role": "user", "content": text}


MODES = ("keyword", "ranked", "regex")


async def times_by_mode(
    client: httpx.AsyncClient, session_id: str, query: str
) -> dict[str, dict[int, str | None]]:
    """Each mode's hits for ``query`` as {seq: timestamp}."""
    return {
        mode: {
            h["seq"]: h["timestamp"]
            for h in message_hits(await search(client, session_id, query, mode=mode))
        }
        for mode in MODES
    }


def forget_search_facts(database_url: str) -> None:
    """As before Phase 2 indexes an archive: no message has search facts."""
    engine = create_db_engine(Settings(database_url=database_url))
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM message_search"))
    engine.dispose()


def ranking(result: dict[str, Any]) -> list[tuple[int, float]]:
    return [(h["seq"], h["score"]) for h in message_hits(result)]


async def test_a_sessions_ranking_ignores_other_sessions_and_tenants(make_settings: Any) -> None:
    mine = [
        user("the cache eviction policy is LRU"),
        user("cache warmup runs nightly"),
        user("eviction notices went out"),
        user("lunch was good"),
        user("cache cache cache sizes"),
    ]
    crowd = [user(f"cache eviction storm number {i}, eviction everywhere") for i in range(40)]
    settings = make_settings(api_keys="ka:tenant-a,kb:tenant-b")
    a, b = {"Authorization": "Bearer ka"}, {"Authorization": "Bearer kb"}
    async with app_client(settings) as client:
        await archive(client, "mine", mine, headers=a)
        query = {"sessionId": "mine", "query": "cache eviction", "mode": "ranked"}
        before = (await client.post("/archives/search", json=query, headers=a)).json()
        await archive(client, "neighbour", crowd, headers=a)
        await archive(client, "mine", crowd, headers=b)  # same session id, another tenant
        after = (await client.post("/archives/search", json=query, headers=a)).json()
    assert ranking(before) and ranking(before) == ranking(after)
    assert ranking(before)[0][0] == 1  # the message with both words leads


async def test_hits_carry_the_hosts_time_and_filter_by_it(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-time",
        [
            said("the router firmware was upgraded", MAY_8),
            said("we rolled the router back", MAY_8 + 24 * HOUR, "assistant"),
            said("router is stable again", MAY_8 + 48 * HOUR),
        ],
    )
    for mode in MODES:
        hits = message_hits(await search(client, "s-time", "router", mode=mode))
        times = {h["seq"]: h["timestamp"] for h in hits}
        assert times == {
            1: "2023-05-08T10:00:00.000Z",
            2: "2023-05-09T10:00:00.000Z",
            3: "2023-05-10T10:00:00.000Z",
        }, mode
        narrowed = await search(
            client,
            "s-time",
            "router",
            mode=mode,
            since="2023-05-09T00:00:00Z",
            until="2023-05-09T23:59:59Z",
        )
        assert [h["seq"] for h in message_hits(narrowed)] == [2], mode


async def test_a_message_the_host_sent_untimed_has_its_storage_time_in_every_mode(
    client: httpx.AsyncClient,
) -> None:
    """Without a host timestamp a hit carries the time the message was stored, whichever mode
    found it (ranked search reads its candidates' times from the search facts)."""
    await archive(
        client, "s-untimed", [untimed("the router was upgraded"), said("router ok", MAY_8)]
    )
    times = await times_by_mode(client, "s-untimed", "router")
    assert times["keyword"] == times["ranked"] == times["regex"]
    assert times["ranked"][2] == "2023-05-08T10:00:00.000Z"
    assert times["ranked"][1] and not times["ranked"][1].startswith("2023-05-08")


async def test_hits_read_the_hosts_time_while_no_search_facts_exist(
    client: httpx.AsyncClient, database_url: str
) -> None:
    """A hit's time comes from the message's search facts; a message without them (an archive
    Phase 2 has not indexed yet) has its time read from what the host sent, in every mode."""
    await archive(
        client,
        "s-nofacts",
        [said("the router was upgraded", MAY_8), said("router ok", MAY_8 + HOUR)],
    )
    forget_search_facts(database_url)
    for mode in MODES:
        hits = message_hits(await search(client, "s-nofacts", "router", mode=mode))
        assert {h["seq"]: h["timestamp"] for h in hits} == {
            1: "2023-05-08T10:00:00.000Z",
            2: "2023-05-08T11:00:00.000Z",
        }, mode
        narrowed = await search(
            client, "s-nofacts", "router", mode=mode, since="2023-05-08T10:30:00Z"
        )
        assert [h["seq"] for h in message_hits(narrowed)] == [2], mode


async def test_an_untimed_message_without_search_facts_has_its_storage_time_in_every_mode(
    client: httpx.AsyncClient, database_url: str
) -> None:
    """Before Phase 2 indexes an archive, a message the host sent without a timestamp still has
    its storage time in every mode, and a time filter still admits it."""
    await archive(client, "s-bare", [untimed("the router was upgraded"), said("router ok", MAY_8)])
    forget_search_facts(database_url)
    times = await times_by_mode(client, "s-bare", "router")
    assert times["keyword"] == times["ranked"] == times["regex"]
    stored = times["ranked"][1]
    assert stored and not stored.startswith("2023-05-08")
    for mode in MODES:
        recent = await search(client, "s-bare", "router", mode=mode, since="2024-01-01T00:00:00Z")
        assert [h["seq"] for h in message_hits(recent)] == [1], mode


async def test_keyword_hits_past_many_candidates_outside_the_window(
    client: httpx.AsyncClient,
) -> None:
    """Keyword search reads its candidates in growing batches: hits that only the later batches
    hold are found, in conversation order, and the list is cut at the limit."""
    early = [said(f"router check {i}", MAY_8 + i * 60_000) for i in range(150)]
    late = [said(f"router check late {i}", MAY_8 + 48 * HOUR + i * 60_000) for i in range(6)]
    await archive(client, "s-batches", early + late)
    found = await search(
        client, "s-batches", "router", mode="keyword", since="2023-05-10T00:00:00Z", limit=4
    )
    assert [h["seq"] for h in message_hits(found)] == [151, 152, 153, 154]
    assert found["truncated"] is True
    everything = await search(client, "s-batches", "router", mode="keyword", limit=200)
    assert [h["seq"] for h in message_hits(everything)] == list(range(1, 157))


async def test_context_returns_neighbouring_turns(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-ctx",
        [user(f"turn {i} filler") for i in range(1, 4)]
        + [user("the needle is here")]
        + [user(f"turn {i} filler") for i in range(5, 8)],
    )
    hit = message_hits(await search(client, "s-ctx", "needle", context=2))[0]
    assert hit["seq"] == 4
    assert [n["seq"] for n in hit["context"]] == [2, 3, 5, 6]
    assert hit["context"][0]["text"] == "turn 2 filler" and hit["context"][0]["timestamp"]
    assert message_hits(await search(client, "s-ctx", "needle"))[0].get("context") is None


async def test_relative_dates_are_found_by_the_day_they_meant(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-date",
        [
            said("Caroline: yesterday I went camping by the lake", MAY_8),
            said("Melanie: nice, I stayed home", MAY_8 + HOUR),
            said("Caroline: on 2 May 2023 I painted the fence", MAY_8 + 2 * HOUR),
        ],
    )
    hits = message_hits(
        await search(client, "s-date", "What did Caroline do on 7 May 2023?", mode="ranked")
    )
    assert hits and hits[0]["seq"] == 1
    written = message_hits(
        await search(client, "s-date", "what happened on 2023-05-02", mode="ranked")
    )
    assert written and written[0]["seq"] == 3


async def test_speaker_names_are_not_evidence(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-speaker",
        [user(f"Caroline: small talk number {i}") for i in range(8)]
        + [user("Melanie: Caroline adopted a corgi puppy")],
    )
    hits = message_hits(await search(client, "s-speaker", "caroline", mode="ranked"))
    assert [h["seq"] for h in hits] == [9]


def scored(result: dict[str, Any]) -> list[tuple[int, float]]:
    return sorted((h["seq"], h["score"]) for h in message_hits(result))


async def test_a_speakers_name_leaves_the_ranking_to_the_other_words(
    client: httpx.AsyncClient,
) -> None:
    """A query word naming one of the session's speakers (more turns carry it as their label than
    in their text) is no evidence: the hits and scores are those of the query without it, with the
    session's stored statistics and with those counted over one archive. A name that is only
    mentioned still counts."""
    talk = [user(f"Melanie: small talk number {i}") for i in range(4)]
    talk += [user(f"Caroline: more small talk {i}") for i in range(4)]
    pottery = [
        user("Melanie: I took up pottery, it calms me down"),
        user("Caroline: Melanie, the pottery studio downtown closed"),
        user("Caroline: pottery again, pottery everywhere"),
    ]
    archive_id = await archive(client, "s-names", pottery + talk)
    for scope in ({}, {"archiveId": archive_id}):
        named = await search(client, "s-names", "Melanie pottery", mode="ranked", **scope)
        plain = await search(client, "s-names", "pottery", mode="ranked", **scope)
        assert scored(named) == scored(plain) and len(scored(plain)) == 3, scope
    mentioned = [user("Caroline: I took up pottery"), user("Caroline: Melanie likes pottery")]
    await archive(client, "s-mention", mentioned + talk[4:])
    named = await search(client, "s-mention", "Melanie pottery", mode="ranked")
    assert message_hits(named)[0]["seq"] == 2
    assert scored(named) != scored(await search(client, "s-mention", "pottery", mode="ranked"))


async def test_repeated_messages_follow_every_distinct_hit(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-repeats",
        [user("deploy failed")] * 3
        + [
            user("the deploy failed twice with a timeout on the staging cluster"),
            user("deploy notes"),
        ],
    )
    first = message_hits(await search(client, "s-repeats", "deploy failed", mode="ranked", limit=3))
    assert [h["seq"] for h in first] == [1, 4, 5]
    every = message_hits(await search(client, "s-repeats", "deploy failed", mode="ranked"))
    assert [h["seq"] for h in every] == [1, 4, 5, 2, 3]


async def test_a_near_duplicate_of_a_better_hit_steps_back(client: httpx.AsyncClient) -> None:
    await archive(
        client,
        "s-near",
        [
            user("deploy failed: the migration timed out"),
            user("Deploy failed - the migration timed out!"),
            user("deploy failed again, the build host ran out of disk space"),
        ],
    )
    hits = message_hits(await search(client, "s-near", "deploy failed", mode="ranked"))
    assert [h["seq"] for h in hits] == [1, 3, 2], [(h["seq"], h["score"]) for h in hits]
    assert hits[2]["score"] > hits[1]["score"]  # ranked below on its own score: the MMR step


async def test_phase2_vectors_find_a_paraphrase(make_settings: Any) -> None:
    async with app_client(make_settings(embedding={"provider": "local"})) as client:
        await archive(
            client,
            "s-vec",
            [
                user("Caroline: after a long shift I relax with pottery, it clears my head"),
                user("Melanie: the traffic was terrible this morning"),
                user("Caroline: my brother is moving to another city"),
                user("Melanie: we had friends over for dinner on Friday"),
            ],
        )
        result = await search(
            client, "s-vec", "How does she unwind once work is over?", mode="ranked"
        )
        lexical = await search(
            client, "s-vec", "How does she unwind once work is over?", mode="keyword"
        )
    assert result["retrieval"] == "hybrid"
    assert message_hits(result)[0]["seq"] == 1
    assert all(
        h["seq"] != 1 for h in message_hits(lexical)
    )  # no shared word: only the vector finds it


# Nearer the question than the long message's whole vector, farther than its best sentence.
NEAR_MISSES = [
    user("Melanie: she finishes work at six most days"),
    user("Melanie: how was your shift yesterday?"),
    user("Melanie: the office party is next Friday"),
    user("Melanie: I read a book on the train home"),
]
BURIED = user(
    "Caroline: Morning, the weather finally turned and the garden looks great. Did you see the "
    "match last night, that last goal was unbelievable. The bus was late again so I walked most "
    "of the way. After a long shift I relax with pottery, it clears my head. My sister sends her "
    "love and says the twins started school. We are repainting the hallway this weekend. The new "
    "phone I bought keeps dropping calls."
)


@pytest.mark.parametrize("cache_mb", [256, 0])  # 0: no matrices, passages rescored (SQLite)
async def test_a_sentence_buried_in_a_long_message_is_found_by_its_passage(
    make_settings: Any, cache_mb: int
) -> None:
    settings = make_settings(embedding={"provider": "local"}, db={"vector_cache_mb": cache_mb})
    async with app_client(settings) as client:
        await archive(client, "s-buried", [*NEAR_MISSES[:2], BURIED, *NEAR_MISSES[2:]])
        result = await search(
            client, "s-buried", "What does she do to de-stress after her job?", mode="ranked"
        )
    assert result["retrieval"] == "hybrid"
    assert message_hits(result)[0]["seq"] == 3, ranking(result)
    engine = create_db_engine(settings)
    try:
        with engine.connect() as conn:
            counts = dict(
                conn.execute(
                    text(
                        "SELECT m.seq, x.vector_passages FROM message_search x "
                        "JOIN messages m ON m.id = x.message_id"
                    )
                ).all()
            )
    finally:
        engine.dispose()
    assert counts == {1: 0, 2: 0, 3: 7, 4: 0, 5: 0}


async def test_a_time_window_is_applied_inside_the_vector_search(make_settings: Any) -> None:
    # 120 messages about the router on 8 May are all nearer to the question than anything said on
    # 20 May: filtered after a 100-nearest search, the window would be left with nothing.
    may_20 = MAY_8 + 12 * 24 * HOUR
    router = [
        said(f"the router firmware upgrade step {i} finished", MAY_8 + i * 60_000)
        for i in range(120)
    ]
    lunch = [said(f"lunch option {i}: soup and bread", may_20 + i * 60_000) for i in range(12)]
    async with app_client(make_settings(embedding={"provider": "local"})) as client:
        await archive(client, "s-window", router + lunch)
        result = await search(
            client,
            "s-window",
            "router firmware",
            mode="ranked",
            limit=10,
            since="2023-05-20T00:00:00Z",
        )
    assert result["retrieval"] == "hybrid"
    hits = message_hits(result)
    assert len(hits) == 10 and result["truncated"] is True
    assert all(h["timestamp"].startswith("2023-05-20") for h in hits)


async def test_phase2_keeps_each_sessions_term_statistics(
    client: httpx.AsyncClient, db_path: Path
) -> None:
    first = [
        user("the cache eviction policy is LRU"),
        user("cache warmup runs nightly"),
        user("lunch was good"),
    ]
    await archive(client, "s-stats", first)
    await archive(client, "s-other", [user("cache cache cache")])
    documents, chars, terms = _stats(db_path, "s-stats")
    assert (documents, chars) == (3, sum(len(m["content"]) for m in first))
    assert terms["cache"] == 2 and terms["eviction"] == 1 and terms["lunch"] == 1
    assert "the" not in terms and "was" not in terms  # stop words are never query terms
    await archive(client, "s-stats", [user("another cache miss")])
    documents, _, terms = _stats(db_path, "s-stats")
    assert documents == 4 and terms["cache"] == 3 and terms["miss"] == 1
    # Phase 2 run again over the same archive (a retried job) counts nothing twice.
    uow = UnitOfWork(create_db_engine(Settings(database_url=f"sqlite:///{db_path}")))
    with uow.read() as db:
        archives = (
            db.query(Archive).join(AgentSession).filter(AgentSession.session_id == "s-stats").all()
        )
        facts = facts_of(archives_repo.archive_messages(db, archives[0]))
    with uow.write() as db:
        write_search_index(db, uow.storage, facts, {}, None)
    assert _stats(db_path, "s-stats")[0] == 4 and _stats(db_path, "s-stats")[2]["cache"] == 3


async def test_candidates_take_the_rarest_terms_first_within_the_budget(
    client: httpx.AsyncClient, db_path: Path
) -> None:
    common = [user(f"deploy number {i} went fine") for i in range(30)]
    rare = [user("the deploy hit E_VAULT_7731"), user("E_VAULT_7731 again, deploy stopped")]
    await archive(client, "s-budget", rare + common)
    uow = UnitOfWork(create_db_engine(Settings(database_url=f"sqlite:///{db_path}")))
    with uow.read() as db:
        session = db.query(AgentSession).filter(AgentSession.session_id == "s-budget").one()
        rows = uow.storage.text.message_candidates(
            db, session.id, ["e_vault_7731", "deploy"], [], None, budget=5
        )
    assert len(rows) == 5
    assert {r.seq for r in rows} >= {
        1,
        2,
    }  # both messages of the rare term, then the newest of the common one
    assert {r.seq for r in rows} - {1, 2} == {30, 31, 32}
    # The bounded search still ranks the two messages holding both words first.
    hits = message_hits(await search(client, "s-budget", "deploy E_VAULT_7731", mode="ranked"))
    assert {h["seq"] for h in hits[:2]} == {1, 2}


def _stats(db_path: Path, session_id: str) -> tuple[int, int, dict[str, int]]:
    conn = sqlite.connect(str(db_path))
    try:
        pk = conn.execute(
            "SELECT id FROM agent_sessions WHERE session_id = ?", (session_id,)
        ).fetchone()[0]
        documents, chars = conn.execute(
            "SELECT documents, total_chars FROM session_search_stats WHERE session_pk = ?", (pk,)
        ).fetchone()
        terms = dict(
            conn.execute(
                "SELECT term, documents FROM session_terms WHERE session_pk = ?", (pk,)
            ).fetchall()
        )
    finally:
        conn.close()
    return documents, chars, terms


async def test_a_phase2_rerun_replaces_the_passage_vectors(
    client: httpx.AsyncClient, db_path: Path
) -> None:
    text_of_three = "The first point is here. The second point is there. The third point is last."
    await archive(client, "s-rerun", [user(text_of_three), user("short")])
    uow = UnitOfWork(create_db_engine(Settings(database_url=f"sqlite:///{db_path}")))
    facts, session_pk = archived_facts(uow, "s-rerun")
    assert [len(f.passages) for f in facts] == [3, 0]

    def run(whole: int, axes: tuple[int, ...]) -> None:
        vectors = {f.message_id: MessageVectors(_axis(whole), ()) for f in facts}
        vectors[facts[0].message_id] = MessageVectors(_axis(whole), tuple(map(_axis, axes)))
        with uow.write() as db:
            write_search_index(db, uow.storage, facts, vectors, "axes")

    run(0, (1, 2, 3))
    with uow.read() as db:  # the session's passage matrix is loaded here
        first = uow.storage.message_vectors.nearest_passages(db, session_pk, _axis(2), 10)
    run(10, (11,))  # a retried job, whose embedding gave one passage this time
    with uow.read() as db:
        stored = db.execute(text("SELECT count(*) FROM message_passage_vec")).scalar_one()
        nearest = uow.storage.message_vectors.nearest_passages(db, session_pk, _axis(11), 10)
        old = uow.storage.message_vectors.nearest_passages(db, session_pk, _axis(3), 10)
    assert first and first[0].score == pytest.approx(0.0)
    assert stored == 1
    assert nearest and nearest[0].row_id == facts[0].message_id
    assert nearest[0].score == pytest.approx(0.0)
    assert old and old[0].score == pytest.approx(1.0)  # the first run's passages are gone


async def test_passages_are_searched_and_rescored_alike(make_settings: Any) -> None:
    """Both ways of reading passage vectors (a KNN over the session's passages, and the rescoring
    of given messages' passages when they are too many to search) give each message its best."""
    settings = make_settings()
    async with app_client(settings) as client:
        await archive(
            client, "s-axes", [user("One. Two. Three."), user("Four. Five."), user("six")]
        )
    uow = UnitOfWork(create_db_engine(settings))
    try:
        facts, session_pk = archived_facts(uow, "s-axes")
        first, second, third = (f.message_id for f in facts)
        axis = {first: (1, 2, 3), second: (2, 4), third: ()}  # passage i of a message -> an axis
        vectors = {
            f.message_id: MessageVectors(_axis(9), tuple(_axis(a) for a in axis[f.message_id]))
            for f in facts
        }
        with uow.write() as db:
            write_search_index(db, uow.storage, facts, vectors, "axes")
        query = [0.0] * 384
        query[2], query[4] = 0.6, 0.8  # nearest passage of `second`: axis 4, of `first`: axis 2
        with uow.read() as db:
            searched = uow.storage.message_vectors.nearest_passages(db, session_pk, query, 10)
            rescored = uow.storage.message_vectors.passage_similarities(
                db, {first: 3, second: 2, third: 0}, query
            )
    finally:
        uow.engine.dispose()
    assert searched is not None
    assert [(h.row_id, round(h.score or 0.0, 6)) for h in searched] == [(second, 0.2), (first, 0.4)]
    assert rescored == {first: pytest.approx(0.6), second: pytest.approx(0.8)}


def archived_facts(uow: UnitOfWork, session_id: str) -> tuple[list[SearchFact], int]:
    """The search facts of a session's one archive, as Phase 2 computes them, and its key."""
    with uow.read() as db:
        archived = (
            db.query(Archive).join(AgentSession).filter(AgentSession.session_id == session_id).one()
        )
        return facts_of(archives_repo.archive_messages(db, archived)), archived.session_pk


def _axis(index: int) -> list[float]:
    return [1.0 if i == index else 0.0 for i in range(384)]


async def test_deleting_a_session_removes_its_passage_vectors(make_settings: Any) -> None:
    settings = make_settings()
    uow = UnitOfWork(create_db_engine(settings))
    try:
        async with app_client(settings) as client:
            await archive(client, "s-gone", [user("One. Two."), user("three")])
            facts, session_pk = archived_facts(uow, "s-gone")
            vectors = {f.message_id: MessageVectors(_axis(0), (_axis(1), _axis(2))) for f in facts}
            with uow.write() as db:
                write_search_index(db, uow.storage, facts, vectors, "axes")
            with uow.read() as db:
                before = uow.storage.message_vectors.nearest_passages(db, session_pk, _axis(1), 10)
            response = await client.delete("/sessions/s-gone")
            assert response.status_code == 200, response.text
        with uow.read() as db:
            stored = db.execute(text("SELECT count(*) FROM message_passage_vec")).scalar_one()
            after = uow.storage.message_vectors.nearest_passages(db, session_pk, _axis(1), 10)
    finally:
        uow.engine.dispose()
    assert before and len(before) == 2
    assert stored == 0 and after == []


async def test_the_passage_search_keeps_to_the_time_window(make_settings: Any) -> None:
    """The window applies inside the passage KNN: nearer passages of messages said outside it
    do not take its places."""
    settings = make_settings()
    day = 24 * HOUR
    async with app_client(settings) as client:
        await archive(
            client,
            "s-window",
            [
                said(f"Point one of day {n}. Point two of day {n}.", MAY_8 + n * day)
                for n in (0, 1, 2)
            ],
        )
    uow = UnitOfWork(create_db_engine(settings))
    try:
        facts, session_pk = archived_facts(uow, "s-window")
        near = {0: 0.9, 1: 0.5, 2: 0.9}  # the middle day's passage is the farthest from the query
        vectors = {}
        for n, fact in enumerate(facts):
            passage = [0.0] * 384
            passage[1], passage[2 + n] = near[n], (1 - near[n] ** 2) ** 0.5
            vectors[fact.message_id] = MessageVectors(_axis(100), (passage, _axis(50 + n)))
        with uow.write() as db:
            write_search_index(db, uow.storage, facts, vectors, "axes")
        window = (MAY_8 + day // 2, MAY_8 + day + day // 2)
        with uow.read() as db:
            if db.get_bind().dialect.name == "postgresql":
                # Three rows: the planner would sort them by distance instead of walking the HNSW
                # index, whose filtered scan is what can lose the window's rows.
                db.execute(text("SET LOCAL enable_sort = off"))
            everywhere = uow.storage.message_vectors.nearest_passages(db, session_pk, _axis(1), 1)
            within = uow.storage.message_vectors.nearest_passages(
                db, session_pk, _axis(1), 1, window
            )
            exactly = (MAY_8 + day, MAY_8 + day)  # both bounds are inclusive
            at_the_time = uow.storage.message_vectors.nearest_passages(
                db, session_pk, _axis(1), 1, exactly
            )
    finally:
        uow.engine.dispose()
    assert everywhere and everywhere[0].row_id in (facts[0].message_id, facts[2].message_id)
    assert within is not None and [h.row_id for h in within] == [facts[1].message_id]
    assert within[0].score == pytest.approx(0.5, abs=1e-5)
    assert at_the_time is not None and [h.row_id for h in at_the_time] == [facts[1].message_id]
