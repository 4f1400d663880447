"""Scores of ``bench/context.py``: the tables it prints, its section of ``bench/RESULTS.md`` and
the per-question outcomes (JSON) for reading what each system missed."""

from __future__ import annotations

import json
import os
import platform
import re
import statistics
import subprocess
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.common import REPO_ROOT
from bench.conversations import Conversation, Question

BUDGETS = (4000, 8000, 32000)
SYSTEMS = (
    "service",
    "newest turns",
    "dense retrieval",
    "service + archive_search",
    "whole transcript",
    "working memory alone",
)
CATEGORIES = ("single-hop", "multi-hop", "temporal", "paraphrase", "adversarial")
RESULTS = Path(__file__).with_name("RESULTS.md")
START, END = "<!-- bench-context:start -->", "<!-- bench-context:end -->"
DEFAULT_OUT = Path(tempfile.gettempdir()) / "ce-bench-context-outcomes.json"


@dataclass
class Outcomes:
    budgets: tuple[int, ...]
    dense_s: float = 0.0
    total_s: float = 0.0
    cpu_s: float = 0.0  # the process's CPU time: the service in it, its worker and model too
    records: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[int, dict[str, Any]] = field(default_factory=dict)
    # (budget, system, split, category) -> held (1) or not (0), per question in the order asked
    held: dict[tuple[int, str, str, str], list[int]] = field(
        default_factory=lambda: defaultdict(list)
    )

    def add(self, budget: int, conv: Conversation, q: Question, record: dict[str, Any]) -> None:
        record = {
            "budget": budget,
            "conversation": conv.id,
            "split": conv.split,
            "question": q.id,
            "category": q.category,
            "text": q.text,
            "answer": list(q.answer),
            "evidence": [conv.turns[i].text for i in q.evidence],
            "evidenceTurns": list(q.evidence),  # of 0..299: the newest turns are live
            **record,
        }
        for name, scored in record["systems"].items():
            scored["holds"] = not scored["missing"]
            for split in (conv.split, "all"):
                for category in (q.category, "overall"):
                    self.held[(budget, name, split, category)].append(int(scored["holds"]))
        self.records.append(record)

    def share(self, budget: int, system: str, split: str, category: str) -> float | None:
        rows = self.held.get((budget, system, split, category), [])
        return 100 * sum(rows) / len(rows) if rows else None

    def count(self, budget: int, system: str, split: str, category: str) -> int:
        return len(self.held.get((budget, system, split, category), []))

    def of_budget(self, budget: int, split: str = "all") -> list[dict[str, Any]]:
        return [r for r in self.records if r["budget"] == budget and split in ("all", r["split"])]

    def budget_use(self, budget: int) -> float:
        """Median estimatedTokens of the assembled context, as a share of the budget (%)."""
        tokens = [r["estimatedTokens"] for r in self.of_budget(budget)]
        return 100 * statistics.median(tokens) / budget

    def median_chars(self, budget: int, system: str) -> int:
        return int(statistics.median(r["systems"][system]["chars"] for r in self.of_budget(budget)))


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def table(outcomes: Outcomes, budget: int, split: str) -> list[str]:
    counts = " | ".join(
        str(outcomes.count(budget, "service", split, c)) for c in ("overall", *CATEGORIES)
    )
    lines = [
        f"| system | {' | '.join(('overall', *CATEGORIES))} |",
        "|---|" + "---|" * (1 + len(CATEGORIES)),
        f"| questions | {counts} |",
    ]
    for system in SYSTEMS:
        cells = " | ".join(
            _cell(outcomes.share(budget, system, split, c)) for c in ("overall", *CATEGORIES)
        )
        lines.append(f"| {system} | {cells} |")
    return lines


def beside_line(outcomes: Outcomes, budget: int) -> str:
    """How many of the temporal answers the service holds have the date on the fact's own line."""
    temporal = [r for r in outcomes.of_budget(budget, "held-out") if r["category"] == "temporal"]
    held = [r for r in temporal if r["systems"]["service"]["holds"]]
    beside = sum(1 for r in held if r["dateBesideFact"])
    return (
        f"Temporal, held-out: the service's text holds the date for {len(held)} of "
        f"{len(temporal)} questions, on the same line as the fact's value for {beside}."
    )


def budget_lines(outcomes: Outcomes, budget: int) -> list[str]:
    run = outcomes.runs.get(budget, {})
    chars = {s: outcomes.median_chars(budget, s) for s in SYSTEMS}
    return [
        f"Budget use: median estimatedTokens of the assembled context {outcomes.budget_use(budget):.1f}% "
        f"of {budget:,}. Median characters: service {chars['service']:,}, "
        f"service + archive_search {chars['service + archive_search']:,}, "
        f"working memory {chars['working memory alone']:,}, whole transcript "
        f"{chars['whole transcript']:,}. Replay: {run.get('host_turns', 0)} host turns, "
        f"{run.get('archives', 0)} archives (replay + Phase 2 {run.get('replay_s', 0):.0f} s, "
        f"questions {run.get('ask_s', 0):.0f} s). {beside_line(outcomes, budget)}"
    ]


def report_lines(outcomes: Outcomes, heading: str = "###") -> list[str]:
    lines: list[str] = []
    for budget in outcomes.budgets:
        for split in ("held-out", "tune"):
            lines += [
                f"{heading} Budget {budget:,} tokens, {split} half (holds the answer, %)",
                "",
                *table(outcomes, budget, split),
                "",
            ]
        lines += [*budget_lines(outcomes, budget), ""]
    return lines


def print_report(outcomes: Outcomes) -> None:
    print()
    print("\n".join(report_lines(outcomes)))
    print(
        f"dense baseline {outcomes.dense_s:.0f} s; total {outcomes.total_s:.0f} s, "
        f"{outcomes.cpu_s:.0f} CPU s"
    )


def write_outcomes(outcomes: Outcomes, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"budgets": list(outcomes.budgets), "runs": outcomes.runs, "questions": outcomes.records}
    path.write_text(json.dumps(body, ensure_ascii=False, indent=1), encoding="utf-8")


SECTION_TEXT = """\
## The context holds the answer (`python -m bench context`)

Written by `python -m bench context` (`bench/context.py`; questions `bench/context_questions.py`, \
host replay `bench/context_replay.py`, measure `bench/context_scoring.py`). The conversations of \
the retrieval evaluation (12: 8 English, 4 Chinese, 300 turns each) are replayed through \
`/commit-turn` as the OpenClaw 2026.9 host sends them (the two speakers as user and assistant, one \
call per host turn, `runtimeContext.tokenBudget` = the budget, the default auto-commit at half of \
it), each budget in a fresh SQLite database with the embedded default (local embedding model, no \
LLM, the Phase 2 worker in the process; questions are asked once every archive's Phase 2 has \
completed). Each question is asked as that host asks it: a pre_prompt `/assemble` with the newest \
64 messages of the transcript and `omittedMessageCount`, the question as `prompt`, then a \
tool_loop `/assemble` on its answer.

**Holds the answer**: every content word of the gold answer (lowercase, split on non-word \
characters, English stop words removed) occurs as a word in the system's text; a Chinese answer's \
string must occur in it. Gold answers: the fact's value (single-hop, paraphrase, adversarial), both \
facts' values (multi-hop), the calendar day in its written form for temporal questions, which ask \
*when* a fact said with a relative date happened ("When did Caroline adopt the puppy?" → "28 May \
2023"; "2023年5月7日"), while the turn says "two days ago".

Systems: **service** = the text the model receives (every text block of the messages the plugin \
hands the host, the recall envelope included, and the system prompt additions); **newest turns** = \
the newest turns that fit in as many characters as the service's text (a host without a context \
engine); **dense retrieval** = the turns most similar to the question (the same local model), most \
similar first, until as many characters are used; **service + archive_search** = the service's text \
and the text of one ranked `/archives/search` for the question (top 5), as the tool returns it; \
**whole transcript** = every turn, no budget (the ceiling of the measure); **working memory alone** \
= the `[Session History Summary]` message. Baseline turns are the text as said ("Caroline: …"); a \
message's time is not text, for them as for the service. The held-out half is the one to read; the \
tuning half is for choosing constants.

A conversation is about 26,000 characters (about 6,500 tokens): at 4,000 tokens the auto-commit \
makes three or four archives of it, at 8,000 one or two, and at 32,000 none, so there the context is \
the whole conversation as said and every system but the Working Memory scores as the whole \
transcript does."""


def write_results(outcomes: Outcomes) -> None:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    section = [
        SECTION_TEXT,
        "",
        f"Run of {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, commit {_commit()}, on {os.cpu_count()} CPUs "
        f"({platform.machine()}, load {load:.1f}): {outcomes.total_s:.0f} s in all, "
        f"{outcomes.cpu_s:.0f} s of CPU.",
        "",
        *report_lines(outcomes),
    ]
    write_section(RESULTS, "\n".join(section))


def _commit() -> str:
    """The checkout's commit, marked when the tree has changes of its own."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            [
                "git",
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ".",
                f":!{RESULTS.relative_to(REPO_ROOT)}",
            ],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return "unknown"
    return f"{head or 'unknown'}{' with local changes' if dirty else ''}"


def write_section(path: Path, section: str) -> None:
    """Replace this benchmark's section of ``path`` (between its markers), keeping the rest."""
    block = f"{START}\n{section.rstrip()}\n{END}\n"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END) + r"\n?", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text, count=1)
    else:
        text = (text.rstrip() + "\n\n" if text else "") + block
    path.write_text(text, encoding="utf-8")
