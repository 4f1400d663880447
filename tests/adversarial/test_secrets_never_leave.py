"""Acceptance: after a conversation and a memory import holding an AWS key, a GitHub token, a private
key block, a ``password=`` line and a JWT, none of the five is in any table or index except the raw
message bodies, in any answer but archive expand, in any prompt or embedding input sent to a model;
with stored messages redacted too, none is in the SQLite file or its WAL at all."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pysqlite3.dbapi2 as sqlite
import pytest

from app.settings import Settings
from app.working_memory.document import WM_SEVEN_SECTIONS, WM_TITLE_LINE
from tests.conftest import app_client
from tests.e2e.stub_llm import StubLLM, chat_answer
from tests.helpers.messages import assistant, tool_call, tool_result, user

AWS_KEY = "AKIA4HX7Q2LMZP9RT3VW"
GITHUB_TOKEN = "ghp_R7d2Kq9mXw4Zt8Lp3Nb6Vc1Hy5Fj0Gs2Ae4u"
KEY_LINES = [
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK",
]
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(KEY_LINES) + "\n-----END RSA PRIVATE KEY-----"
)
PASSWORD = "Tr0ub4dor-3-horse-battery"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJkZXBsb3ktYm90IiwiaWF0IjoxNzYwMDAwMDAwfQ"
    ".Xq2cV8aPz4Lm9Rk1Ws7Yt3Nh6Jb0Fd5Ue8Gi2Oc4Kp"
)
# What must not appear: each secret, and each line of the key block on its own.
NEEDLES = [AWS_KEY, GITHUB_TOKEN, PASSWORD, JWT, *KEY_LINES]


def found_in(text: str) -> list[str]:
    return [needle for needle in NEEDLES if needle in text]


def conversation() -> list[dict[str, Any]]:
    return [
        user(f"Deploy with the AWS key {AWS_KEY}; the CI uses the GitHub token {GITHUB_TOKEN}."),
        tool_call(
            "t1",
            "exec",
            {"command": f"curl -H 'Authorization: Bearer {JWT}' https://deploy.internal/run"},
        ),
        tool_result(
            "t1",
            "exec",
            f"wrote id_rsa:\n{PRIVATE_KEY}\nconfig: password={PASSWORD}\nDeploy finished.",
        ),
        assistant(
            f"Deployed. For the record the session token was {JWT} and the db password={PASSWORD}."
        ),
    ]


def working_memory_echoing_secrets(_body: dict[str, Any]) -> Any:
    """A model answer that repeats two secrets it should not have seen: the output is redacted too."""
    sections = dict.fromkeys(WM_SEVEN_SECTIONS, "- (none)")
    sections["Session Title"] = "Deploy of the billing service"
    sections["Key Facts & Decisions"] = f"- deploy key {AWS_KEY}\n- token {GITHUB_TOKEN}"
    document = (
        WM_TITLE_LINE
        + "\n\n"
        + "\n\n".join(f"## {name}\n{body}" for name, body in sections.items())
    )
    return chat_answer(content=document)


def proposed_memory(_body: dict[str, Any]) -> Any:
    memory = {
        "category": "entities",
        "title": f"CI token {GITHUB_TOKEN}",
        "abstract": f"key {AWS_KEY}",
        "content": f"The deploy bot authenticates with {JWT} and password={PASSWORD}.",
        "confidence": 0.9,
        "sensitivity": "allowed",
        "observed_at": "",
        "source_seqs": [1],
    }
    return chat_answer(tool_arguments={"memories": [memory]}, tool_name="propose_memories")


def import_lines() -> str:
    record = {
        "id": "5f0c4b1e-0000-4000-8000-00000000a001",
        "category": "entities",
        "ownerKind": "user",
        "ownerId": "default",
        "uri": f"viking://user/default/memories/entities/{GITHUB_TOKEN}.md",
        "title": f"AWS {AWS_KEY}",
        "abstract": f"jwt {JWT}",
        "content": f"Key block:\n{PRIVATE_KEY}\npassword={PASSWORD}",
        "source": {
            "kind": "import",
            "note": f"token {GITHUB_TOKEN}",
            "nested": [f"password={PASSWORD}"],
        },
    }
    return json.dumps(record) + "\n"


@pytest.fixture
def stub() -> Any:
    llm = StubLLM(
        default_create=working_memory_echoing_secrets,
        by_tool={"propose_memories": [proposed_memory]},
    )
    llm.url = llm.start()  # type: ignore[attr-defined]
    yield llm
    llm.stop()


def with_models(make_settings: Callable[..., Settings], stub: StubLLM, **extra: Any) -> Settings:
    return make_settings(
        llm={"base_url": stub.url, "model": "stub", "max_attempts": 1},  # type: ignore[attr-defined]
        embedding={"provider": "openai", "base_url": stub.url, "model": "stub-embed"},  # type: ignore[attr-defined]
        **extra,
    )


async def exercise(client: httpx.AsyncClient) -> tuple[list[httpx.Response], list[httpx.Response]]:
    """The conversation, memories and an import; then every read. Returns the answers that must hold
    no secret, and the archive expands, JSON and text (the one answer that may)."""
    history = conversation()
    ok = [await client.post("/after-turn", json={"sessionId": "s-leak", "messages": history})]
    ok.append(
        await client.post(
            "/compact", json={"sessionId": "s-leak", "customInstructions": f"keep {JWT} handy"}
        )
    )
    live = [user(f"one more: password={PASSWORD} and {AWS_KEY}"), assistant("noted")]
    history += live
    ok.append(
        await client.post(
            "/after-turn",
            json={
                "sessionId": "s-leak",
                "messages": history,
                "prePromptMessageCount": len(history) - 2,
            },
        )
    )
    memory = await client.post(
        "/memories",
        json={
            "content": f"The staging deploy uses password={PASSWORD} and {AWS_KEY}",
            "category": "entities",
            "title": f"staging {JWT}",
            "source": {"kind": "api", "ticket": GITHUB_TOKEN},
        },
    )
    ok.append(memory)
    memory_id = memory.json()["memory"]["id"]
    ok.append(
        await client.patch(f"/memories/{memory_id}", json={"abstract": f"see {GITHUB_TOKEN}"})
    )
    ok.append(
        await client.post(
            "/memories/import",
            content=import_lines(),
            headers={"content-type": "application/x-ndjson"},
        )
    )
    assert all(r.status_code == 200 for r in ok), [r.text for r in ok if r.status_code != 200]
    reads = [*ok, *await searches(client)]
    reads += [
        await client.get("/memories"),
        await client.get("/memories/export"),
        await client.get(f"/memories/{memory_id}"),
        await client.get("/sessions/s-leak"),
    ]
    unstored = user(f"and the new key is {AWS_KEY} with {GITHUB_TOKEN}")
    reads.append(
        await client.post(
            "/assemble",
            json={
                "sessionId": "s-leak",
                "messages": [*history, unstored],
                "prompt": "what was the deploy setup?",
                "tokenBudget": 128000,
            },
        )
    )
    reads.append(
        await client.post(
            "/assemble",
            json={"sessionId": "s-leak", "messages": [user("how does the deploy bot log in?")]},
        )
    )
    for response in reads:
        assert response.status_code == 200, response.text
    expand = [
        await client.get("/archives/archive_001", params={"sessionId": "s-leak", "format": f})
        for f in ("json", "text")
    ]
    return reads, expand


def answer_text(response: httpx.Response) -> str:
    """What an answer says, less the caller's own query echoed by archive search (a bare password
    the caller typed has no shape to recognise; the hits are what must hold no secret)."""
    if response.request.url.path != "/archives/search":
        return response.text
    if response.headers["content-type"].startswith("text/plain"):
        return response.text.split("\n", 1)[1] if "\n" in response.text else ""
    return json.dumps(response.json()["results"])


async def searches(client: httpx.AsyncClient) -> list[httpx.Response]:
    out = []
    for query, mode in [
        (AWS_KEY, "keyword"),
        ("AKIA", "keyword"),
        (GITHUB_TOKEN[:12], "keyword"),
        ("BEGIN RSA", "keyword"),
        (PASSWORD, "keyword"),
        ("deploy", "keyword"),
        (r"AKIA[0-9A-Z]{16}", "regex"),
        (r"eyJ\S+", "regex"),
        (r"password=\S+", "regex"),
        ("deploy key token password", "ranked"),
    ]:
        for fmt in ("json", "text"):
            out.append(
                await client.post(
                    "/archives/search",
                    json={"sessionId": "s-leak", "query": query, "mode": mode, "format": fmt},
                )
            )
    for query in (AWS_KEY, JWT, "deploy bot password", "staging deploy"):
        out.append(await client.post("/memories/search", json={"query": query, "explain": True}))
    return out


def every_stored_value(
    db_path: Path, skip: set[tuple[str, str]]
) -> AsyncIterator[tuple[str, str, Any]] | Any:
    """(table, column, value) of every row of every table, virtual tables through their shadow tables."""
    conn = sqlite.connect(str(db_path))
    try:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
            )
        ]
        for table in tables:
            cursor = conn.execute(f'SELECT * FROM "{table}"')
            columns = [d[0] for d in cursor.description]
            for row in cursor:
                for column, value in zip(columns, row, strict=True):
                    if (table, column) not in skip:
                        yield table, column, value
    finally:
        conn.close()


async def test_no_secret_leaves_the_raw_message_bodies(
    make_settings: Callable[..., Settings], stub: StubLLM, db_path: Path
) -> None:
    async with app_client(with_models(make_settings, stub)) as client:
        reads, expand = await exercise(client)
    leaks = [(r.request.method, r.request.url.path, found_in(answer_text(r))) for r in reads]
    assert [leak for leak in leaks if leak[2]] == []
    # The raw messages stay lossless: archive expand is the one answer that shows the originals.
    assert all(set(found_in(response.text)) == set(NEEDLES) for response in expand)
    # Nothing stored holds a secret, the FTS and vector shadow tables included, but the bodies.
    scanned: set[str] = set()
    for table, column, value in every_stored_value(db_path, skip={("messages", "body")}):
        scanned.add(table)
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        assert not found_in(text), (table, column)
    assert {
        "messages",
        "archives",
        "jobs",
        "memories",
        "memory_chunks",
        "memory_audit",
        "message_fts_data",
        "archive_fts_data",
        "memory_fts_data",
        "embedding_cache",
    } <= scanned
    # Every prompt and every embedding input the models received went through the boundary.
    assert stub.requests and stub.embedding_inputs
    assert not found_in(json.dumps(stub.requests)), "a prompt held a secret"
    assert not found_in(json.dumps(stub.embedding_inputs)), "an embedding input held a secret"


async def test_with_stored_messages_redacted_no_secret_is_in_the_file_or_the_wal(
    make_settings: Callable[..., Settings], stub: StubLLM, db_path: Path
) -> None:
    settings = with_models(
        make_settings, stub, redaction={"stored_messages": True}, db={"sqlite_synchronous": "FULL"}
    )
    async with app_client(settings) as client:
        reads, expand = await exercise(client)
        # Read while the service still holds the database: the WAL is not checkpointed away.
        files = {path.name: path.read_bytes() for path in db_path.parent.glob(db_path.name + "*")}
    assert f"{db_path.name}-wal" in files and len(files[f"{db_path.name}-wal"]) > 0
    for name, data in files.items():
        for needle in NEEDLES:
            assert needle.encode() not in data, (name, needle)
    assert all(not found_in(response.text) and "[REDACTED:" in response.text for response in expand)
    assert [
        (r.request.url.path, found_in(answer_text(r))) for r in reads if found_in(answer_text(r))
    ] == []
