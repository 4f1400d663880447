"""The dense-retrieval baseline of ``bench/context.py``: for each question, its conversation's
turns by cosine between the local model's query vector and each turn's passage vector (the turn
as said), most similar first.

The rankings depend on the turns, the questions and the model only, not on the service, so they
are kept per conversation under ``.cache/bench-context/`` (git-ignored), named by a hash of all
three: a tuning loop that reruns the service many times embeds them once.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from app.providers.embeddings import LOCAL_MODEL_ID, LocalE5Embedder
from bench.common import REPO_ROOT
from bench.conversations import Conversation, Question

CACHE = REPO_ROOT / ".cache" / "bench-context"


def cache_path(conv: Conversation, questions: list[Question]) -> Path:
    content = [LOCAL_MODEL_ID, [t.text for t in conv.turns], [[q.id, q.text] for q in questions]]
    key = hashlib.sha256(json.dumps(content, ensure_ascii=False).encode()).hexdigest()[:16]
    return CACHE / f"dense-{conv.id}-{key}.json"


async def _rank(
    model: LocalE5Embedder, conv: Conversation, questions: list[Question]
) -> dict[str, list[int]]:
    passages = np.asarray(await model.embed_passages([t.text for t in conv.turns]))
    queries = np.asarray(await model.embed_queries([q.text for q in questions]))
    return {
        q.id: [int(i) for i in np.argsort(-scores, kind="stable")]
        for q, scores in zip(questions, queries @ passages.T, strict=True)
    }


async def dense_orders(
    conversations: list[Conversation], questions: dict[str, list[Question]]
) -> dict[str, list[int]]:
    """Per question id, the turns of its conversation, most similar first."""
    orders: dict[str, list[int]] = {}
    model: LocalE5Embedder | None = None
    for conv in conversations:
        path = cache_path(conv, questions[conv.id])
        if path.exists():
            orders.update(json.loads(path.read_text(encoding="utf-8")))
            continue
        if model is None:
            model = LocalE5Embedder()
            await model.warm()
        ranked = await _rank(model, conv, questions[conv.id])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(ranked), encoding="utf-8")
        orders.update(ranked)
    return orders
