"""Extractive Working Memory (no LLM) of a 500-message archive, in process.

The realistic case is an UPDATE: a prior Working Memory exists (built from an earlier archive of
the same session) and the next 500 messages are merged into it through the guards. The CREATE
case (no prior) is reported beside it.
"""

from __future__ import annotations

from app.working_memory.extractive import update_working_memory_extractive
from bench.common import Config, Row, fmt_ms, summary, time_calls
from bench.workload import Conversation


def run(cfg: Config) -> list[Row]:
    size = 500
    iterations = cfg.pick(30, 8)
    conv = Conversation(seed=314)
    earlier = conv.messages(size)
    archive = conv.messages(size)
    first_request = earlier[0]["content"]
    prior = update_working_memory_extractive(None, earlier, first_user_request=first_request)
    if not prior:
        raise RuntimeError("the extractive builder returned an empty Working Memory")

    def update() -> None:
        update_working_memory_extractive(prior, archive, first_user_request=first_request)

    def create() -> None:
        update_working_memory_extractive(None, archive, first_user_request=first_request)

    samples = time_calls(update, iterations, warmup=2)
    p50, p99 = summary(samples)
    row = Row(
        name="working memory (extractive)",
        workload=f"{size}-msg archive merged into a prior WM",
        p50_ms=p50,
        p99_ms=p99,
        target="<=200 ms (p50)",
        figure=p50,
        target_value=200,
        samples=len(samples),
    )
    create50, _ = summary(time_calls(create, max(3, iterations // 3), warmup=1))
    result = update_working_memory_extractive(prior, archive, first_user_request=first_request)
    row.notes.append(
        f"CREATE (no prior) p50 {fmt_ms(create50)} ms; prior WM {len(prior)} chars, result {len(result)} chars"
    )
    if not cfg.quick:
        growth = {size: p50}
        for n in (100, 2000):
            msgs = Conversation(seed=315 + n).messages(n)
            growth[n] = summary(
                time_calls(lambda m=msgs: update_working_memory_extractive(prior, m), 5, warmup=1)
            )[0]
        row.notes.append(
            "growth (p50 by archive size): "
            + " -> ".join(f"{n}: {fmt_ms(growth[n])} ms" for n in sorted(growth))
        )
    return [row]
