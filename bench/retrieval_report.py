"""Scores of ``bench/retrieval.py`` and the ``bench/RESULTS.md`` it writes."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common import summary
from bench.intervals import paired_interval
from bench.retrieval_texts import BEFORE_TEXT, DATASET_TEXT, DRIVER_READS_TEXT, THRESHOLD_TEXT

KS = (1, 5, 10)
CATEGORIES = ("single-hop", "multi-hop", "temporal", "paraphrase", "adversarial")
SPLITS = ("held-out", "tune", "all")
RESULTS = Path(__file__).with_name("RESULTS.md")
SYSTEM_ORDER = (
    "baseline: BM25",
    "baseline: dense",
    "archive keyword",
    "archive regex",
    "archive ranked, lexical only",
    "archive ranked, hybrid RRF",
    "archive ranked, hybrid calibrated",
    "memory search, bm25 mode",
    "memory search, vector mode",
    "memory search",
    "recall (injection ranking)",
)
# (system, its own lexical-only and vector-only modes, compared as well as the shared baselines)
MARGINS = (
    ("archive ranked, hybrid calibrated", None),
    ("archive ranked, hybrid RRF", None),
    ("memory search", ("memory search, bm25 mode", "memory search, vector mode")),
    ("recall (injection ranking)", ("memory search, bm25 mode", "memory search, vector mode")),
)


def score(ranking: list[int], evidence: tuple[int, ...]) -> dict[str, float]:
    found = {f"r@{k}": len(set(ranking[:k]) & set(evidence)) / len(evidence) for k in KS}
    found["hit@10"] = float(bool(set(ranking[:10]) & set(evidence)))
    return found


class Evaluation:
    def __init__(self) -> None:
        # system -> split -> category -> per-question scores
        self.scores: dict[str, dict[str, dict[str, list[dict[str, float]]]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        self.latency: dict[str, list[float]] = defaultdict(list)
        # split -> per question, the (kind of turn, score) of each memory recall's search returned
        self.threshold_samples: dict[str, list[list[tuple[str, float]]]] = defaultdict(list)

    def add_threshold_sample(self, split: str, found: list[tuple[str, float]]) -> None:
        for part in (split, "all"):
            self.threshold_samples[part].append(found)

    def add(
        self,
        system: str,
        split: str,
        category: str,
        ranking: list[int],
        evidence: tuple[int, ...],
        ms: float,
    ) -> None:
        result = score(ranking, evidence)
        for part in (split, "all"):
            self.scores[system][part][category].append(result)
            self.scores[system][part]["overall"].append(result)
        self.latency[system].append(ms)

    def mean(self, system: str, split: str, category: str, metric: str) -> float:
        rows = self.scores[system][split][category]
        return 100 * sum(r[metric] for r in rows) / len(rows) if rows else float("nan")

    def count(self, system: str, split: str, category: str) -> int:
        return len(self.scores[system][split][category])

    def values(self, system: str, split: str, category: str, metric: str) -> list[float]:
        """Per question, in the order asked (the same for every system)."""
        return [100 * r[metric] for r in self.scores[system][split][category]]


def _table(ev: Evaluation, split: str) -> list[str]:
    lines = [
        "| system | category | n | recall@1 | recall@5 | recall@10 | hit@10 |",
        "|---|---|---|---|---|---|---|",
    ]
    for system in SYSTEM_ORDER:
        for category in ("overall", *CATEGORIES):
            cells = " | ".join(
                f"{ev.mean(system, split, category, m):.1f}"
                for m in ("r@1", "r@5", "r@10", "hit@10")
            )
            lines.append(
                f"| {system} | {category} | {ev.count(system, split, category)} | {cells} |"
            )
    return lines


def _margins(ev: Evaluation, split: str) -> list[str]:
    lines = [
        "| system | category | recall@10 | vs BM25 | vs dense | vs own lexical mode | vs own vector mode |",
        "|---|---|---|---|---|---|---|",
    ]
    for system, own in MARGINS:
        for category in ("overall", *CATEGORIES):
            ours = ev.mean(system, split, category, "r@10")
            shown = [
                _margin(ev, system, b, split, category, interval=b.startswith("baseline"))
                for b in ("baseline: BM25", "baseline: dense", *(own or ()))
            ]
            cells = " | ".join(shown) + ("" if own else " | - | -")
            lines.append(f"| {system} | {category} | {ours:.1f} | {cells} |")
    return lines


def _margin(
    ev: Evaluation, system: str, other: str, split: str, category: str, interval: bool
) -> str:
    """The recall@10 margin in points, with its paired bootstrap 95% interval if asked."""
    margin = ev.mean(system, split, category, "r@10") - ev.mean(other, split, category, "r@10")
    if not interval:
        return f"{margin:+.1f}"
    ours, theirs = (ev.values(s, split, category, "r@10") for s in (system, other))
    low, high = paired_interval(ours, theirs)
    return f"{margin:+.1f} [{low:+.1f}, {high:+.1f}]"


def _splits(ev: Evaluation) -> list[str]:
    lines = [f"| system | category | {' | '.join(SPLITS)} |", "|---|---|---|---|---|"]
    for system in SYSTEM_ORDER:
        for category in ("overall", *CATEGORIES):
            cells = " | ".join(f"{ev.mean(system, s, category, 'r@10'):.1f}" for s in SPLITS)
            lines.append(f"| {system} | {category} | {cells} |")
    return lines


THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35)


def _thresholds(ev: Evaluation) -> list[str]:
    lines = [
        "| split | threshold | evidence memory (% of questions) | other memories on the topic (%) | small talk among the candidates (%) |",
        "|---|---|---|---|---|",
    ]
    for split in ("tune", "held-out"):
        samples = ev.threshold_samples[split]
        evidence = [
            max(s for k, s in found if k == "evidence")
            for found in samples
            if any(k == "evidence" for k, _ in found)
        ]
        negatives = [s for found in samples for k, s in found if k == "negative"]
        small_talk = [s for found in samples for k, s in found if k == "filler"]
        for t in THRESHOLDS:
            shares = [
                100 * sum(1 for x in xs if x >= t) / max(len(xs), 1)
                for xs in (evidence, negatives, small_talk)
            ]
            lines.append(f"| {split} | {t:.2f} | " + " | ".join(f"{x:.1f}" for x in shares) + " |")
    return lines


def write_results(ev: Evaluation, sizes: dict[str, Any], latency_lines: list[str]) -> None:
    p50 = {s: summary(v)[0] for s, v in ev.latency.items() if v}
    text = [
        "# Retrieval evaluation",
        "",
        "Written by `python -m bench retrieval` (`bench/retrieval.py`; dataset `bench/conversations.py` and "
        "`bench/conversation_topics.py`; the prose sections come from `bench/retrieval_report.py`).",
        "",
        *DATASET_TEXT.format(**sizes).split("\n"),
        "",
        "## Results on the held-out conversations (recall@k and hit@10 in %)",
        "",
        *_table(ev, "held-out"),
        "",
        "## recall@10 against the baselines, held-out conversations (points)",
        "",
        "Memory search and recall are also compared with memory search's own `bm25` and `vector` modes. "
        "In brackets, the paired bootstrap 95% interval of a margin over a baseline (4,000 draws of the "
        "category's questions with replacement, `bench/intervals.py`): how far it could move with other "
        "questions of the same kind. One question of 64 is 1.6 points. The figures repeat on one machine, "
        "but for memories of equal score, which come in the order of their ids (random): recall@1 of "
        "recall's temporal row was 66.7, 69.7 and 63.6 in three runs of one day; on another processor the local model's vectors differ in their last digits (other "
        "vector instructions), which moved some rows by a question (3,013 memories stored on one machine, "
        "3,014 on another).",
        "",
        *_margins(ev, "held-out"),
        "",
        "## recall@10 per split",
        "",
        "Tuning and held-out halves side by side (and all conversations): a constant fitted to the tuning half "
        "would show as a gap here.",
        "",
        *_splits(ev),
        "",
        *THRESHOLD_TEXT.split("\n"),
        "",
        *_thresholds(ev),
        "",
        "## Latency on this dataset (p50 per query, ms, in process, 300-turn sessions)",
        "",
        "| system | p50 ms |",
        "|---|---|",
        *[f"| {s} | {p50[s]:.1f} |" for s in SYSTEM_ORDER if s in p50],
        "",
        *latency_lines,
        "",
        *DRIVER_READS_TEXT.split("\n"),
        "",
        *BEFORE_TEXT.split("\n"),
    ]
    _write_keeping_other_sections("\n".join(text) + "\n")


# Other benchmarks keep their sections of RESULTS.md between markers after this one's text.
_OTHER_SECTIONS = "<!-- bench-"


def _write_keeping_other_sections(text: str) -> None:
    kept = ""
    if RESULTS.exists():
        old = RESULTS.read_text(encoding="utf-8")
        at = old.find(_OTHER_SECTIONS)
        kept = "\n" + old[at:] if at >= 0 else ""
    RESULTS.write_text(text + kept, encoding="utf-8")
