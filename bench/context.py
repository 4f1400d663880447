"""Does the context hold the answer? ``python -m bench context`` (``python -m bench.context`` for
options: one budget, no RESULTS.md, where the per-question outcomes go).

The generated conversations of ``bench/conversations.py`` (8 English, 4 Chinese, 300 turns each)
are replayed through the service's HTTP API as the OpenClaw 2026.9 host sends them
(``bench/context_replay.py``), at budgets of 4,000, 8,000 and 32,000 tokens, each in a fresh
SQLite database with the embedded default: the app with its lifespan in process, the local
embedding model, no LLM, the Phase 2 worker inside it, the default auto-commit at half the budget.
Once every archive's Phase 2 has completed, each question (``bench/context_questions.py``) is
asked through the pre_prompt and the tool_loop assembles, and every system below is scored on
whether its text holds the gold answer (``bench/context_scoring.py``):

- **service**: what the model receives (the messages' text blocks, the system prompt additions);
- **newest turns**: the newest transcript turns that fit in as many characters as the service's
  text (a host without a context engine);
- **dense retrieval**: the turns most similar to the question (the same local model, the turn as
  said), in that order, until the same number of characters is used;
- **service + archive_search**: the service's text and one ranked ``/archives/search`` (top 5) for
  the question, as the tool's text: what an agent that searches once would see;
- **whole transcript**: every turn, no budget (the ceiling of the measure);
- **working memory alone**: the ``[Session History Summary]`` message of the service's text.

Baseline turns are the text as said ("Caroline: ..."); a message's time is not text, for them as
for the service. The tuning half of the conversations is for tuning, the held-out half is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from app.settings import Settings
from bench.common import Config, Row, migrated_db, temp_dir
from bench.context_dense import dense_orders
from bench.context_questions import context_questions
from bench.context_replay import ask, replay, search_text, service, transcript, wait_for_phase2
from bench.context_report import (
    BUDGETS,
    DEFAULT_OUT,
    SYSTEMS,
    Outcomes,
    print_report,
    write_outcomes,
    write_results,
)
from bench.context_scoring import (
    fit_in_order,
    held_beside,
    joined,
    missing,
    model_text,
    newest_fitting,
)
from bench.context_scoring import summary_text as working_memory_text
from bench.conversations import Conversation, Question, build_dataset

QUICK = ("en0", "en1", "zh0", "zh1")  # a tuning and a held-out conversation of each language
PHASE2_TIMEOUT_S = 900


def _settings(path: Path) -> Settings:
    return Settings(
        database_url=f"sqlite:///{path}",
        auto_migrate=False,
        log_level="WARNING",
        # Replayed as fast as the machine goes: the per-tenant rate limits are not measured here.
        rate_limit={"hooks_per_s": 0, "search_per_s": 0},
    )


async def run_budget(
    tmp: Path,
    budget: int,
    conversations: list[Conversation],
    questions: dict[str, list[Question]],
    dense: dict[str, list[int]],
    outcomes: Outcomes,
) -> None:
    path = migrated_db(tmp / f"context-{budget}.db")
    async with service(_settings(path)) as client:
        started = time.perf_counter()
        histories = {c.id: transcript(c) for c in conversations}
        turns = 0
        for conv in conversations:
            turns += await replay(client, conv, histories[conv.id], budget)
        archives = await wait_for_phase2(client, [c.id for c in conversations], PHASE2_TIMEOUT_S)
        replayed = time.perf_counter() - started
        for conv in conversations:
            for q in questions[conv.id]:
                record = await _question(client, conv, histories[conv.id], q, budget, dense[q.id])
                outcomes.add(budget, conv, q, record)
        outcomes.runs[budget] = {
            "host_turns": turns,
            "archives": archives,
            "replay_s": round(replayed, 1),
            "ask_s": round(time.perf_counter() - started - replayed, 1),
        }
    print(
        f"  budget {budget}: {turns} host turns, {archives} archives, "
        f"replay + Phase 2 {replayed:.0f} s, questions {outcomes.runs[budget]['ask_s']:.0f} s",
        flush=True,
    )


async def _question(
    client: httpx.AsyncClient,
    conv: Conversation,
    history: list[dict[str, Any]],
    q: Question,
    budget: int,
    dense_order: list[int],
) -> dict[str, Any]:
    """Every system's text for one question, scored."""
    asked = await ask(client, conv, history, q.text, budget)
    context = model_text(asked.messages, asked.additions)
    turns = [t.text for t in conv.turns]
    chars = len(context)
    texts = {
        "service": context,
        "newest turns": joined(turns, newest_fitting(turns, chars)),
        "dense retrieval": joined(turns, fit_in_order(turns, dense_order, chars)),
        "service + archive_search": context + "\n" + await search_text(client, conv, q.text),
        "whole transcript": "\n".join(turns),
        "working memory alone": working_memory_text(asked.messages),
    }
    beside = None
    if q.category == "temporal":  # the date on the line that says what happened
        value = next(f.value for f in conv.facts if f.position == q.evidence[0])
        beside = held_beside(q.answer, (value,), context)
    return {
        "estimatedTokens": asked.estimated_tokens,
        "dateBesideFact": beside,
        "systems": {
            name: {"chars": len(text), "missing": missing(q.answer, text)}
            for name, text in texts.items()
        },
        "injected": model_text(asked.injected),
        "diagnostics": asked.diagnostics,
    }


async def evaluate(
    tmp: Path, quick: bool, budgets: tuple[int, ...], only: tuple[str, ...] = ()
) -> Outcomes:
    conversations = build_dataset()
    if quick or only:
        conversations = [c for c in conversations if c.id in (only or QUICK)]
    questions = {c.id: context_questions(c) for c in conversations}
    started = time.perf_counter()
    dense = await dense_orders(conversations, questions)
    outcomes = Outcomes(budgets=budgets, dense_s=round(time.perf_counter() - started, 1))
    for budget in budgets:
        await run_budget(tmp, budget, conversations, questions, dense, outcomes)
    return outcomes


def measure(
    quick: bool,
    budgets: tuple[int, ...] = BUDGETS,
    out: Path = DEFAULT_OUT,
    write: bool = True,
    only: tuple[str, ...] = (),
) -> Outcomes:
    started, cpu = time.perf_counter(), time.process_time()
    with temp_dir("context") as tmp:
        outcomes = asyncio.run(evaluate(tmp, quick, budgets, only))
    outcomes.total_s = round(time.perf_counter() - started)
    outcomes.cpu_s = round(time.process_time() - cpu)
    print_report(outcomes)
    write_outcomes(outcomes, out)
    print(f"per-question outcomes: {out}")
    if write and not quick and not only and budgets == BUDGETS:
        write_results(outcomes)
    return outcomes


def run(cfg: Config) -> list[Row]:
    outcomes = measure(cfg.quick)
    return [
        Row(
            name=f"context {budget // 1000}k: {system}",
            workload="held-out questions, holds the answer overall",
            p50_ms=None,
            p99_ms=None,
            target="-",
            figure=outcomes.share(budget, system, "held-out", "overall"),
            target_value=None,
            samples=outcomes.count(budget, system, "held-out", "overall"),
            unit="%",
        )
        for budget in outcomes.budgets
        for system in SYSTEMS
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context", description=__doc__)
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument(
        "--budget", type=int, action="append", help="a token budget (repeatable; default all)"
    )
    parser.add_argument(
        "--conversation",
        action="append",
        default=[],
        help="only this one (repeatable): en0, zh1...",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="per-question outcomes")
    parser.add_argument("--no-write", action="store_true", help="leave bench/RESULTS.md alone")
    args = parser.parse_args(argv)
    budgets = tuple(args.budget) if args.budget else BUDGETS
    measure(args.quick, budgets, args.out, not args.no_write, tuple(args.conversation))
    return 0


if __name__ == "__main__":
    sys.exit(main())
