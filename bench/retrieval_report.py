"""Scores of ``bench/retrieval.py`` and the ``bench/RESULTS.md`` it writes."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.common import summary
from bench.intervals import paired_interval

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
        "questions of the same kind. One question of 64 is 1.6 points. The figures repeat exactly on one "
        "machine; on another processor the local model's vectors differ in their last digits (other "
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


DATASET_TEXT = """## Dataset

{conversations} generated conversations (8 English, 4 Chinese; ten dated sessions of thirty turns each), {turns} \
turns, {questions} questions labelled with their evidence turns. Generated with a fixed seed from tables written for this \
benchmark: no public data, redistributable with the code.

How a conversation is made (`bench/conversations.py`): two friends, ten sessions of thirty turns. A dozen turns \
(eight in Chinese) state facts (an adoption, a hike, a purchase, a race...), 60% of them with a relative date \
("yesterday", "last Saturday", "上周"). Each fact has twenty **hard negatives**: ten sentences on its topic with its \
vocabulary, two of each kind (the speaker's wish before it happened, a third party's story with a competing value, \
the speaker's follow-up without the value, the friend's question naming the speaker, a general remark), each said \
twice in different sessions. The rest is **small talk**, some of it addressing the friend by name or with a relative \
date. A turn is one to three sentences: its own, with a small-talk sentence before and after it at 35% each. Every \
turn starts with its speaker's name.

What changed since the first version of this evaluation, and why: the first had only small talk besides the facts, \
so the only turns about a topic were the facts and dense retrieval found 98.8% of single-hop evidence in its top \
10. A real long conversation comes back to the same topics with the same words and names (hard negatives), says \
days and names in passing, and rarely says one thing per turn. Questions are unchanged in kind: single-hop (one \
fact, in the asker's words), multi-hop (two facts of one speaker from different sessions, asked as two sentences), \
temporal (what a speaker did on a calendar day that the turn only called "yesterday", "last week", "上周"...), \
paraphrase (the fact in other words) and adversarial (the fact asked about the other speaker; the evidence is the \
turn holding the fact).

**Tuning and reporting.** The conversations alternate between a tuning half (en0, en2, en4, en6, zh0, zh2) and a \
held-out half (en1, en3, en5, en7, zh1, zh3). The fusion constants (`app/archives/ranking.py`: the coverage at \
which words lead, the bounds of the vector weight, the weight of a date-led query, the MMR lambda of its best \
hits: 0.6 and 0.7 did equally there, 0.8 worse, and 0.7 is memory search's own; the weight of a message's best \
passage beside its whole vector: 0.4 and 0.5 within half a point overall there and equal on paraphrases, 0.3 \
five points lower on paraphrases, 0.5 the best for the vectors alone) and the memory-search \
calibration were chosen by looking at the tuning half only; the tables below report the held-out half, and the \
split table shows both. The halves share the topic tables (different speakers, values, sessions and sentences \
drawn around them), so the split guards against fitting particular conversations, not against fitting the kind \
of data.

Each conversation is one agent session whose ten sessions are ten archives; the archived messages' search facts, \
statistics and vectors (of each message, and of each sentence of a message that holds several: \
`app/core/passages.py`) were written by the Phase 2 function ({indexed} messages in {index_s} s with the local \
model, 2 CPU cores). Each conversation is also one user's memories: every turn committed with `commit_memory`, \
observed at the turn's time ({memories} memories in {memory_s} s; repeated sentences are deduplicated, questions \
only target unique turns).

Baselines, computed in the same run over the same turns (`bench/retrieval_baselines.py`): **BM25** (Okapi k1 1.2, \
b 0.75, lowercase words and CJK character pairs, English and Chinese stop words removed, no stemming, the \
conversation's own statistics) and **dense** (cosine between the local model's query vector and each turn's \
passage vector, the turn as stored)."""


THRESHOLD_TEXT = """## Recall thresholds on the calibrated scale

Memory scores are now calibrated (`app/memory/scoring.py`): the vector side counts cosine similarity above the \
model's floor for unrelated texts (`CE_EMBEDDING__SIMILARITY_FLOOR`, 0.78 for the local model), the text side the \
share of the query's idf a memory holds. Before, the raw cosine of the local model put almost every memory at 0.5 \
or more, so recall's thresholds (0.15, experiences 0.35) let everything through. Below, from the recall searches \
of this run (hybrid, 40 candidates, as recall asks), the share of memories at or above each threshold: the \
evidence memory (of the questions that found it among the 40), the other memories on the question's topic (the \
hard negatives: related, not the answer) and the small talk that reached the 40 candidates (no topic, but stored \
with a speaker's name as title, which the questions name too). On this data a threshold cannot tell evidence from \
its hard negatives, nor should it: they are about the same thing. On the curated set of `python -m bench \
retrieval-eval`, where most other memories are unrelated, the hybrid row's notes give the split: at 0.15 most \
relevant results pass and most others do not; at 0.35 about half the relevant ones and almost no others, the \
strictness wanted for experiences, which are injected as guidance. The defaults stay 0.15 and 0.35."""


BEFORE_TEXT = """## Latency before bounding the work

The same measurement (`bench/retrieval_latency.py`, 100,000 archived messages) on the code before the candidate \
budget and the stored statistics (d45a48f), on the same machine an hour before the run above; then every term's \
messages were scored and BM25's statistics counted over them.

| mode | query | p50 ms | p95 ms | hits |
|---|---|---|---|---|
| keyword | selective | 8.1 | 8.7 | 5 |
| keyword | common | 6.6 | 8.2 | 20 |
| keyword | chinese | 5.7 | 6.1 | 20 |
| keyword | question | 663.8 | 835.5 | 20 |
| ranked lexical | selective | 6.9 | 8.1 | 5 |
| ranked lexical | common | 113.4 | 181.8 | 20 |
| ranked lexical | chinese | 171.7 | 174.5 | 20 |
| ranked lexical | question | 634.9 | 676.9 | 20 |
| ranked hybrid | selective | 69.4 | 79.8 | 20 |
| ranked hybrid | common | 178.6 | 247.5 | 20 |
| ranked hybrid | chinese | 238.7 | 303.4 | 20 |
| ranked hybrid | question | 711.7 | 765.3 | 20 |

`python -m bench --only search` (keyword mode over HTTP, 100,000 archived messages), before → after: selective \
8.9 → 12.7 ms, common 7.8 → 12.3 ms, Chinese 6.0 → 10.7 ms, 2-char 65.0 → 70.8 ms (p50; the 2-character term is \
below the trigram index and scans the session in both, the one row over quality.md's 50 ms). Ranked hybrid search \
keeps the cost of its KNN, which reads every vector of the session (about 60 ms at 100,000); quality.md sets no \
target for it."""
