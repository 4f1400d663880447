"""How much of each model request of the host test repeats the one before: the prompt prefix a
provider can cache. Measured from the requests the stub model recorded (`test_openclaw_host.py`
checks it and reports the figures)."""

from __future__ import annotations

import itertools
import json
from datetime import datetime
from typing import Any

from tests.host.conversation import Conversation
from tests.host.stub_model import HOST_TIME_PREFIX, current_prompt, text_of


def same_content(message: dict[str, Any]) -> str:
    """A model-request message as a provider reads it: string content and a list holding that
    one text block are the same content (the chat completions API defines them so), which the
    host spells either way for the same stored message."""
    content = message.get("content")
    if (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and set(content[0]) == {"type", "text"}
        and content[0]["type"] == "text"
    ):
        message = {**message, "content": content[0]["text"]}
    return json.dumps(message, sort_keys=True)


def _shared(before: list[str], now: list[str]) -> int:
    """How many leading messages the two lists have in common."""
    return next(
        (i for i, (a, b) in enumerate(zip(before, now, strict=False)) if a != b),
        min(len(before), len(now)),
    )


def _without_time(message: dict[str, Any]) -> str:
    """same_content with the host's time written before the text left out."""
    content = message.get("content")
    if isinstance(content, str):
        content = HOST_TIME_PREFIX.sub("", content, count=1)
    elif isinstance(content, list):
        content = [
            {**b, "text": HOST_TIME_PREFIX.sub("", b["text"], count=1)}
            if isinstance(b, dict) and isinstance(b.get("text"), str)
            else b
            for b in content
        ]
    return same_content({**message, "content": content})


def _is_recall(message: dict[str, Any]) -> bool:
    text = HOST_TIME_PREFIX.sub("", text_of(message.get("content")).lstrip(), count=1)
    return message.get("role") == "user" and text.startswith("<openviking-context>")


def _commit_times(conv: Conversation) -> list[float]:
    return sorted(
        datetime.fromisoformat(a["createdAt"]).timestamp()
        for a in conv.archives
        if a.get("createdAt")
    )


def prefix_reuse(conv: Conversation) -> dict[str, Any]:
    """For each model request after the first through the gateway, against the one before: how
    many leading messages (the system prompt first) it repeats, how many it had to (the ones
    before the earlier request's current user message and the recalled context just before it:
    what was stored by then), and the share
    of its characters inside the repeated prefix; `commit` when an archive was made between the
    two (a new summary must change the prompt), `window` when the service had to leave older
    steps out of the later one to fit the host's budget."""
    exchanges = [ex for t in conv.turns if not t.local for ex in t.exchanges]
    commits = _commit_times(conv)
    # The first request of a turn whose history the service fitted to the host's budget by
    # leaving older steps out: a new window of the newest steps (2026.8 gives a small budget).
    windowed = {
        t.exchanges[0].n
        for t in conv.turns
        if t.exchanges
        and any(
            r["body"].get("phase") == "pre_prompt"
            and r["answer"]["diagnostics"].get("messages", {}).get("dropped", 0) > 0
            for r in t.requests
            if r["path"] == "/assemble" and r["status"] == 200
        )
    }
    pairs = []
    for prev, cur in itertools.pairwise(exchanges):
        before = [same_content(m) for m in prev.messages]
        now = [same_content(m) for m in cur.messages]
        shared = _shared(before, now)
        untimed = _shared(
            [_without_time(m) for m in prev.messages], [_without_time(m) for m in cur.messages]
        )
        prompt_at, _ = current_prompt(prev.messages)
        needed = prompt_at if prompt_at >= 0 else len(before)
        # recalled context injected for that request only (before its prompt) is not stored
        while needed > 0 and _is_recall(prev.messages[needed - 1]):
            needed -= 1
        pairs.append(
            {
                "from": prev.n,
                "to": cur.n,
                "commit": any(prev.at < t <= cur.at for t in commits),
                "window": cur.n in windowed,
                "shared": shared,
                "shared_but_time": untimed,
                "needed": needed,
                "share": round(sum(map(len, now[:shared])) / max(1, sum(map(len, now))), 4),
            }
        )
    between = [p["share"] for p in pairs if not (p["commit"] or p["window"])]
    return {
        "pairs": pairs,
        "mean_share_between_commits": round(sum(between) / max(1, len(between)), 4),
        "mean_share_all": round(sum(p["share"] for p in pairs) / max(1, len(pairs)), 4),
    }
