"""The workloads, each run on both services in alternating rounds.

Every workload builds the same data on both sides (same seeds, same messages), then measures in
rounds: round 0 runs this service first, round 1 the peer first, and so on, so slow drift of a
shared machine (other jobs, page cache, thermal) lands on both sides alike. Requests are prepared
before the clock starts and answers are checked after it stops.
"""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import httpx

from bench.peer.sides import PLUGIN_TAIL, Request, Side, run, send
from bench.workload import (
    CHINESE_TERM,
    COMMON_TERM,
    SELECTIVE_TERM,
    SHORT_RARE_TERM,
    Conversation,
    Message,
    search_corpus,
)

PROMPT = "Why does the worker retry forever when the upstream returns 429? Check src/jobs/tasks.py."


@dataclass(frozen=True)
class Plan:
    """Sample counts; ``quick`` shrinks them for a smoke run."""

    quick: bool = False

    def pick(self, full: int, quick: int) -> int:
        return quick if self.quick else full


@dataclass
class Measure:
    """One workload on one side."""

    samples_ms: list[float] = field(default_factory=list)
    wall_s: float = 0.0  # time the timed blocks took, for throughput
    units: int = 0  # turns (or calls) completed inside wall_s

    @property
    def throughput(self) -> float | None:
        return self.units / self.wall_s if self.wall_s > 0 and self.units else None


@dataclass
class Result:
    """One line of the comparison table."""

    key: str
    workload: str
    clients: int
    ours: Measure
    peer: Measure
    throughput: bool = False  # report turns/s too
    goal: float | None = None  # the speed-up the issue asks for (ours vs peer)
    notes: list[str] = field(default_factory=list)


def rounds_order(sides: Sequence[Side], index: int) -> list[Side]:
    return list(sides) if index % 2 == 0 else list(reversed(sides))


def timed(client, requests: list[Request]):
    """The requests' wall time (ms) and their responses, with the client's garbage collector
    paused while they run: a collection inside the window would be the client's time, not the
    server's. It is not forced before each sample either: a full collection walks every object of
    the client and leaves the CPU caches cold, which added ~0.6 ms to every timed request of both
    sides (a ``/healthz`` round trip: 1.21 ms after ``gc.collect()``, 0.61 ms without)."""
    gc.disable()
    try:
        started = time.perf_counter()
        responses = run(client, requests)
        return (time.perf_counter() - started) * 1000, responses
    finally:
        gc.enable()


# --- 4-message turn ------------------------------------------------------------------------------


def _session(seed: int, preload: int, turns: int) -> tuple[list[Message], list[list[Message]]]:
    """A session's preloaded history and the turns that follow it (one conversation, so
    timestamps and tool-call ids keep increasing)."""
    conv = Conversation(seed=seed, prefix=f"s{seed}-")
    history = conv.messages(preload)
    return history, [conv.turn() for _ in range(turns)]


def turn_single(
    sides: Sequence[Side],
    plan: Plan,
    clients: dict[str, object],
    *,
    preload: int,
    key: str,
    label: str,
) -> Result:
    """One client: each sample is one 4-message turn on one session that starts with ``preload``."""
    rounds, per_round, warm = 4, plan.pick(15, 4), 3
    sid = f"{key}-1"
    preload_messages, turns = _session(500 + preload, preload, warm + rounds * per_round)
    measures = {s.name: Measure() for s in sides}
    cursor = {s.name: 0 for s in sides}
    for side in sides:
        client = clients[side.name]
        side.create(client, sid)
        side.seed(client, sid, preload_messages)
        for _ in range(warm):
            turn = turns[cursor[side.name]]
            cursor[side.name] += 1
            side.check_turn(run(client, side.turn(sid, turn)), len(turn))
    for index in range(rounds):
        for side in rounds_order(sides, index):
            client = clients[side.name]
            m = measures[side.name]
            for _ in range(per_round):
                turn = turns[cursor[side.name]]
                cursor[side.name] += 1
                requests = side.turn(sid, turn)
                ms, responses = timed(client, requests)
                side.check_turn(responses, len(turn))
                m.samples_ms.append(ms)
                m.wall_s += ms / 1000
                m.units += 1
    result = Result(key, label, 1, measures["ours"], measures["peer"], throughput=True, goal=10)
    counts = {s.name: s.stored(clients[s.name], sid) for s in sides}
    expected = preload + 4 * (warm + rounds * per_round)
    _integrity(result, counts, expected)
    return result


def turn_concurrent(
    sides: Sequence[Side], plan: Plan, *, preload: int, key: str, label: str, threads: int = 8
) -> Result:
    """``threads`` clients, each with its own session and connection, all turning at once."""
    rounds, per_thread = 2, plan.pick(8 if preload < 1000 else 4, 2)
    sids = [f"{key}-{k}" for k in range(threads)]
    sessions = {
        sid: _session(700 + 31 * k + preload, preload, 1 + rounds * per_thread)
        for k, sid in enumerate(sids)
    }
    preload_lists = {sid: history for sid, (history, _) in sessions.items()}
    turn_lists = {sid: turns for sid, (_, turns) in sessions.items()}
    measures = {s.name: Measure() for s in sides}
    cursor = {(s.name, sid): 0 for s in sides for sid in sids}
    for side in sides:
        with side.client() as client:
            for sid in sids:
                side.create(client, sid)
                if preload:
                    side.seed(client, sid, preload_lists[sid])
                turn = turn_lists[sid][0]
                side.check_turn(run(client, side.turn(sid, turn)), len(turn))  # warm-up
                cursor[(side.name, sid)] = 1
    for index in range(rounds):
        for side in rounds_order(sides, index):
            m = measures[side.name]
            per_sample: list[list[float]] = [[] for _ in sids]
            failures: list[BaseException] = []
            barrier = threading.Barrier(threads + 1)

            def worker(
                k: int,
                side: Side = side,
                per_sample: list[list[float]] = per_sample,
                failures: list[BaseException] = failures,
                barrier: threading.Barrier = barrier,
            ) -> None:
                sid = sids[k]
                try:
                    with side.client() as client:
                        prepared = []
                        for _ in range(per_thread):
                            turn = turn_lists[sid][cursor[(side.name, sid)]]
                            cursor[(side.name, sid)] += 1
                            prepared.append((turn, side.turn(sid, turn)))
                        send(
                            client, Request("GET", "/health" if side.name == "peer" else "/healthz")
                        )
                        barrier.wait()
                        checks = []
                        for turn, requests in prepared:
                            started = time.perf_counter()
                            responses = run(client, requests)
                            per_sample[k].append((time.perf_counter() - started) * 1000)
                            checks.append((responses, len(turn)))
                        for responses, count in checks:
                            side.check_turn(responses, count)
                except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
                    failures.append(exc)
                    barrier.abort()

            workers = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
            for w in workers:
                w.start()
            gc.collect()
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait()
            started = time.perf_counter()
            for w in workers:
                w.join()
            elapsed = time.perf_counter() - started
            if failures:
                raise failures[0]
            m.wall_s += elapsed
            m.units += threads * per_thread
            for samples in per_sample:
                m.samples_ms.extend(samples)
    result = Result(
        key, label, threads, measures["ours"], measures["peer"], throughput=True, goal=10
    )
    expected = preload + 4 * (1 + rounds * per_thread)
    for side in sides:
        with side.client() as client:
            counts = {sid: side.stored(client, sid) for sid in sids}
        wrong = {sid: n for sid, n in counts.items() if n != expected}
        result.notes.append(
            f"{side.name}: {len(sids)} sessions hold {expected} messages each"
            if not wrong
            else f"{side.name}: UNEXPECTED stored counts {wrong} (expected {expected})"
        )
    return result


def _integrity(result: Result, counts: dict[str, int], expected: int) -> None:
    for name, count in counts.items():
        if count != expected:
            result.notes.append(f"{name}: UNEXPECTED {count} stored messages, expected {expected}")
    if all(c == expected for c in counts.values()):
        result.notes.append(f"both sessions hold exactly the {expected} messages sent")


# --- sessions with archives ----------------------------------------------------------------------


def build_archived(
    side: Side, client, sid: str, messages: list[Message], *, every: int, keep: int, tail: int = 0
) -> None:
    """Store ``messages`` in chunks of ``every``, committing (keeping ``keep``) after each, except
    the last ``tail`` messages, which stay live; waits until every archive has finished Phase 2."""
    side.create(client, sid)
    body = messages[: len(messages) - tail] if tail else messages
    for start in range(0, len(body), every):
        side.seed(client, sid, body[start : start + every])
        response = send(client, side.commit(sid, keep))
        side.check_commit(response, 0)
    if tail:
        side.seed(client, sid, messages[len(messages) - tail :])
    side.wait_archives(client, sid)


def alternate(
    sides: Sequence[Side],
    rounds: int,
    per_round: int,
    warm: int,
    request_for: Callable[[Side], Request],
    check: Callable[[Side, object], None],
) -> dict[str, Measure]:
    """Time the same prepared request on both sides in alternating rounds."""
    measures = {s.name: Measure() for s in sides}
    clients = {s.name: s.client() for s in sides}
    try:
        for side in sides:
            for _ in range(warm):
                check(side, run(clients[side.name], [request_for(side)])[0])
        for index in range(rounds):
            for side in rounds_order(sides, index):
                request = request_for(side)
                m = measures[side.name]
                for _ in range(per_round):
                    ms, responses = timed(clients[side.name], [request])
                    check(side, responses[0])
                    m.samples_ms.append(ms)
                    m.wall_s += ms / 1000
                    m.units += 1
    finally:
        for c in clients.values():
            c.close()
    return measures


CLIENTS = 8


def concurrent(
    sides: Sequence[Side],
    rounds: int,
    per_thread: int,
    prepare: Callable[[Side, httpx.Client, int, int], list[Request]],
    check: Callable[[Side, httpx.Client, httpx.Response], None],
    settle: Callable[[Side, httpx.Client], None] | None = None,
    threads: int = CLIENTS,
) -> dict[str, Measure]:
    """``threads`` clients at once, each on its own connection, in alternating rounds.

    ``prepare(side, client, thread, round)`` runs untimed in each thread before the start barrier
    and returns that thread's requests; they are then sent back to back and timed one by one.
    Answers are checked after the block (``check``), then ``settle`` runs untimed (for example
    waiting for Phase 2). Throughput = requests / wall time of the blocks."""
    measures = {s.name: Measure() for s in sides}
    for index in range(rounds):
        for side in rounds_order(sides, index):
            m = measures[side.name]
            samples: list[list[float]] = [[] for _ in range(threads)]
            answers: list[list[httpx.Response]] = [[] for _ in range(threads)]
            failures: list[BaseException] = []
            barrier = threading.Barrier(threads + 1)

            def worker(
                k: int,
                side: Side = side,
                index: int = index,
                samples: list = samples,
                answers: list = answers,
                failures: list = failures,
                barrier: threading.Barrier = barrier,
            ) -> None:
                try:
                    with side.client() as client:
                        requests = prepare(side, client, k, index)
                        barrier.wait()
                        for request in requests[:per_thread]:
                            started = time.perf_counter()
                            response = send(client, request)
                            samples[k].append((time.perf_counter() - started) * 1000)
                            answers[k].append(response)
                except BaseException as exc:  # noqa: BLE001 - re-raised by the caller
                    failures.append(exc)
                    barrier.abort()

            workers = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
            for w in workers:
                w.start()
            gc.collect()
            with contextlib.suppress(threading.BrokenBarrierError):
                barrier.wait()
            started = time.perf_counter()
            for w in workers:
                w.join()
            elapsed = time.perf_counter() - started
            if failures:
                raise failures[0]
            with side.client() as client:
                for responses in answers:
                    for response in responses:
                        check(side, client, response)
                if settle is not None:
                    settle(side, client)
            m.wall_s += elapsed
            m.units += sum(len(a) for a in answers)
            for values in samples:
                m.samples_ms.extend(values)
    return measures


def history_and_archives(sides: Sequence[Side], plan: Plan) -> list[Result]:
    """2,000 messages, 5 archives (a commit keeping 20 after every 300), 500 more live; then the
    history rebuild and the read of one archive."""
    sid = "history"
    conv = Conversation(seed=42)
    transcript = conv.messages(2000)
    for side in sides:
        with side.client() as client:
            build_archived(side, client, sid, transcript, every=300, keep=20, tail=500)
            stored = side.stored(client, sid)
            if stored != 2000:
                raise RuntimeError(f"{side.name}: history session holds {stored} messages")
    rounds, per_round = 4, plan.pick(10, 3)
    summaries: dict[str, str] = {}

    def check_rebuild(side: Side, response) -> None:
        summaries[side.name] = side.rebuild_summary(response)

    measures = alternate(
        sides, rounds, per_round, 3, lambda s: s.rebuild(sid, transcript, PROMPT), check_rebuild
    )
    rebuild = Result(
        "rebuild",
        "history rebuild, 2,000 messages, 5 archives",
        1,
        measures["ours"],
        measures["peer"],
        goal=5,
    )
    rebuild.notes.append(
        f"ours: pre_prompt /assemble as the plugin sends it, the newest {PLUGIN_TAIL} of the "
        f"host's 2,000 messages with omittedMessageCount; returns {summaries['ours']}"
    )
    rebuild.notes.append(f"peer: GET …/context?token_budget=128000; returns {summaries['peer']}")
    ours_whole = alternate(
        sides[:1],
        2,
        per_round,
        2,
        lambda s: s.rebuild(sid, transcript, PROMPT, whole=True),
        check_rebuild,
    )["ours"]
    rebuild.notes.append(
        f"ours with a client that sends the host's whole 2,000 messages: p50 {_p50(ours_whole):.1f} ms"
    )
    per_thread = plan.pick(5, 2)
    measures = concurrent(
        sides,
        2,
        per_thread,
        lambda s, c, k, i: [s.rebuild(sid, transcript, PROMPT)] * per_thread,
        lambda s, c, r: check_rebuild(s, r),
    )
    rebuild8 = Result(
        "rebuild-8",
        "history rebuild, 2,000 messages, 5 archives",
        CLIENTS,
        measures["ours"],
        measures["peer"],
        goal=5,
    )

    archive_ids = {}
    with sides[0].client() as c0, sides[1].client() as c1:
        archive_ids[sides[0].name] = sides[0].archive_ids(c0, sid)
        archive_ids[sides[1].name] = sides[1].archive_ids(c1, sid)
    counts: dict[str, int] = {}

    def check_read(side: Side, response) -> None:
        counts[side.name] = side.archive_messages(response)

    measures = alternate(
        sides,
        rounds,
        per_round,
        3,
        lambda s: s.archive_read(sid, archive_ids[s.name][1]),
        check_read,
    )
    read = Result(
        "archive-read", "archive read (the 2nd of 5)", 1, measures["ours"], measures["peer"]
    )
    read.notes.append(
        f"archive {archive_ids['ours'][1]} / {archive_ids['peer'][1]}: {counts['ours']} / {counts['peer']} messages "
        f"(ours / peer); archives per side {len(archive_ids['ours'])} / {len(archive_ids['peer'])}"
    )
    measures = concurrent(
        sides,
        2,
        per_thread,
        lambda s, c, k, i: [s.archive_read(sid, archive_ids[s.name][1])] * per_thread,
        lambda s, c, r: check_read(s, r),
    )
    read8 = Result(
        "archive-read-8", "archive read (the 2nd of 5)", CLIENTS, measures["ours"], measures["peer"]
    )
    return [rebuild, rebuild8, read, read8]


SEARCH_QUERIES = [
    ("selective", SELECTIVE_TERM),
    ("common", COMMON_TERM),
    ("chinese", CHINESE_TERM),
    ("2-char", SHORT_RARE_TERM),
]


def archive_search(sides: Sequence[Side], plan: Plan) -> list[Result]:
    """2,000 messages archived in 4 commits of 500 (nothing kept), then keyword search."""
    sid = "search"
    corpus = search_corpus(2000)
    for side in sides:
        with side.client() as client:
            build_archived(side, client, sid, corpus, every=500, keep=0)
    rounds, per_round = 4, plan.pick(8, 2)
    per_thread = plan.pick(4, 2)
    results: list[Result] = []
    concurrent_results: list[Result] = []
    for name, term in SEARCH_QUERIES:
        hits: dict[str, int] = {}

        def check(side: Side, response, hits: dict[str, int] = hits) -> None:
            hits[side.name] = side.hits(response)

        measures = alternate(
            sides, rounds, per_round, 2, lambda s, term=term: s.search(sid, term), check
        )
        result = Result(
            f"search-{name}",
            f"archive search, 2,000 archived: {name} '{term}'",
            1,
            measures["ours"],
            measures["peer"],
            goal=5,
        )
        result.notes.append(f"hits (limit 20): ours {hits['ours']}, peer {hits['peer']}")
        results.append(result)
        measures = concurrent(
            sides,
            2,
            per_thread,
            lambda s, c, k, i, term=term: [s.search(sid, term)] * per_thread,
            lambda s, c, r, check=check: check(s, r),
        )
        concurrent_results.append(
            Result(
                f"search-{name}-8",
                result.workload,
                CLIENTS,
                measures["ours"],
                measures["peer"],
                goal=5,
            )
        )
    results[0].notes.append(
        "ours: POST /archives/search mode keyword; peer: POST /api/v1/search/grep over the "
        "session's history, the term regex-escaped, case-insensitive, node_limit 20"
    )
    empty = _empty_requests(sides, rounds, per_round, per_thread)
    for row in [*results, *concurrent_results]:
        floor = _p50(empty[row.clients].ours)
        row.notes.append(
            f"ceiling: a server answering in its empty request's time ({floor:.2f} ms at "
            f"{row.clients} client{'s' if row.clients > 1 else ''}) would be "
            f"{_p50(row.peer) / floor:.1f}× the peer here"
        )
    return [*results, *concurrent_results, *empty.values()]


def _empty_requests(
    sides: Sequence[Side], rounds: int, per_round: int, per_thread: int
) -> dict[int, Result]:
    """Each side's health check through the same client, at 1 and at ``CLIENTS`` clients: what a
    request that does no work costs, the floor under every other row (a search ratio cannot
    exceed the peer's search time over this service's floor at the same number of clients)."""

    def check(side: Side, response) -> None:
        if response.status_code != 200:
            raise RuntimeError(f"{side.name}: health check -> {response.status_code}")

    def request_for(side: Side) -> Request:
        return Request("GET", "/health" if side.name == "peer" else "/healthz")

    alone = alternate(sides, rounds, per_round, 2, request_for, check)
    together = concurrent(
        sides,
        2,
        per_thread,
        lambda s, c, k, i: [request_for(s)] * per_thread,
        lambda s, c, r: check(s, r),
    )
    rows = {
        1: Result("empty", "empty request (health check)", 1, alone["ours"], alone["peer"]),
        CLIENTS: Result(
            "empty-8", "empty request (health check)", CLIENTS, together["ours"], together["peer"]
        ),
    }
    rows[1].notes.append(
        "ours: GET /healthz; peer: GET /health. No work on either side: the floor of every row "
        "(client, HTTP server, framework)"
    )
    return rows


def commit_keep(sides: Sequence[Side], plan: Plan) -> list[Result]:
    """A fresh 200-message session per sample; the commit archives 190 and keeps 10."""
    rounds, per_round = 3, plan.pick(5, 2)
    measures = {s.name: Measure() for s in sides}
    serial = {s.name: 0 for s in sides}
    clients = {s.name: s.client() for s in sides}

    def one(side: Side, record: bool) -> None:
        client = clients[side.name]
        serial[side.name] += 1
        n = serial[side.name]
        sid = f"commit-{n}"
        side.create(client, sid)
        side.seed(client, sid, Conversation(seed=3000 + n, prefix=f"c{n}-").messages(200))
        ms, responses = timed(client, [side.commit(sid, 10)])
        side.check_commit(responses[0], 190)
        side.wait_archives(client, sid)
        if record:
            measures[side.name].samples_ms.append(ms)
            measures[side.name].wall_s += ms / 1000
            measures[side.name].units += 1

    try:
        for side in sides:
            for _ in range(2):
                one(side, record=False)
        for index in range(rounds):
            for side in rounds_order(sides, index):
                for _ in range(per_round):
                    one(side, record=True)
    finally:
        for c in clients.values():
            c.close()
    result = Result("commit", "commit keeping 10 of 200", 1, measures["ours"], measures["peer"])
    result.notes.append(
        "timed: the commit call (Phase 1; both answer before Phase 2); Phase 2 is awaited "
        "untimed before the next sample"
    )

    def prepare(side: Side, client: httpx.Client, k: int, index: int) -> list[Request]:
        sid = f"commit8-{index}-{k}"
        side.create(client, sid)
        side.seed(
            client,
            sid,
            Conversation(seed=5000 + 97 * index + k, prefix=f"d{index}-{k}-").messages(200),
        )
        return [side.commit(sid, 10)]

    committed: dict[str, list[str]] = {s.name: [] for s in sides}

    def check(side: Side, client: httpx.Client, response: httpx.Response) -> None:
        side.check_commit(response, 190)
        committed[side.name].append(response.request.url.path.split("/")[-2])

    def settle(side: Side, client: httpx.Client) -> None:
        for sid in committed[side.name]:
            side.wait_archives(client, sid)
        committed[side.name].clear()

    measures = concurrent(sides, 2, 1, prepare, check, settle)
    result8 = Result(
        "commit-8", "commit keeping 10 of 200", CLIENTS, measures["ours"], measures["peer"]
    )
    result8.notes.append(
        "8 sessions committed at once, each by its own client; Phase 2 awaited untimed after each round"
    )
    return [result, result8]


# --- latency against session size ----------------------------------------------------------------


@dataclass
class SizePoint:
    size: int
    p50: dict[str, dict[str, float]]  # metric → side → p50 ms
    build_s: dict[str, float]
    # side → what its history rebuild returned at this size (body size and summary)
    returned: dict[str, str] = field(default_factory=dict)


def _planted_chunks(conv: Conversation, total: int, chunk: int) -> Iterator[list[Message]]:
    """``total`` messages in chunks; the first holds ``SELECTIVE_TERM`` in exactly 5 messages."""
    made = 0
    while made < total:
        messages = conv.messages(min(chunk, total - made))
        if made == 0:
            for index in (100, 300, 500, 700, 900):
                if index < len(messages):
                    _append(messages[index], f" Build failed with {SELECTIVE_TERM} in stage 3.")
        made += len(messages)
        yield messages


def _append(message: Message, extra: str) -> None:
    content = message["content"]
    if isinstance(content, str):
        message["content"] = content + extra
        return
    for block in content:
        if block.get("type") == "text":
            block["text"] += extra
            return
    content.append({"type": "text", "text": extra})


def size_series(
    sides: Sequence[Side], plan: Plan, sizes: list[int], budget_s: float, log: Callable[[str], None]
) -> tuple[list[SizePoint], str]:
    """One session per side grows by 1,000-message chunks, each followed by a commit keeping 20
    (the live window stays small, as with a host that commits), to each size in ``sizes``. At each
    size: the 4-message turn, the history rebuild and the selective archive search. Growth stops
    early when building has used ``budget_s``; the last point is then the size reached. A side
    whose session cannot grow (a failed commit) stops the growth too; the note says why."""
    sid = "series"
    chunk = 1000
    target = max(sizes)
    points: list[SizePoint] = []
    build_s = {s.name: 0.0 for s in sides}
    clients = {s.name: s.client(timeout=600) for s in sides}
    host_tail: list[Message] = []
    conv = Conversation(seed=77, prefix="z")
    size = 0
    stop_note = ""
    began = time.perf_counter()
    try:
        for side in sides:
            side.create(clients[side.name], sid)
        for messages in _planted_chunks(conv, target, chunk):
            for side in sides:
                client = clients[side.name]
                started = time.perf_counter()
                side.seed(client, sid, messages)
                side.check_commit(send(client, side.commit(sid, 20)), 0)
                build_s[side.name] += time.perf_counter() - started
            size += len(messages)
            host_tail = (host_tail + messages)[-200:]
            out_of_time = time.perf_counter() - began > budget_s
            if size in sizes or (out_of_time and size < target):
                for side in sides:
                    started = time.perf_counter()
                    side.wait_archives(clients[side.name], sid, timeout_s=600)
                    build_s[side.name] += time.perf_counter() - started
                point = _measure_point(sides, plan, clients, sid, size, host_tail, conv)
                point.build_s = dict(build_s)
                points.append(point)
                log(
                    f"  size {size:,}: "
                    + ", ".join(
                        f"{metric} {v['ours']:.1f} / {v['peer']:.1f} ms"
                        for metric, v in point.p50.items()
                    )
                    + f" (ours / peer); built in {build_s['ours']:.0f} / {build_s['peer']:.0f} s"
                )
            if out_of_time and size < target:
                stop_note = (
                    f"growth stopped at {size:,} messages: building used the series budget of "
                    f"{budget_s:.0f} s before {target:,}"
                )
                break
    except RuntimeError as exc:  # a side could not grow its session: the sizes measured stand
        reached = points[-1].size if points else 0
        stop_note = f"growth stopped after {reached:,} messages, on the way to {size:,}: {exc}"
        log(f"  {stop_note}")
    finally:
        for c in clients.values():
            c.close()
    return points, stop_note


def _measure_point(
    sides: Sequence[Side],
    plan: Plan,
    clients: dict,
    sid: str,
    size: int,
    host_tail: list[Message],
    conv: Conversation,
) -> SizePoint:
    """Turns are appended to ``host_tail`` (the host's transcript grows with them)."""
    rounds, per_round = 4, plan.pick(8, 2)
    turns = [conv.turn() for _ in range(rounds * per_round + 1)]
    samples: dict[str, dict[str, list[float]]] = {
        m: {s.name: [] for s in sides} for m in ("turn", "rebuild", "search")
    }
    cursor = {s.name: 0 for s in sides}
    returned: dict[str, str] = {}
    for side in sides:  # warm-up turn
        client = clients[side.name]
        side.check_turn(run(client, side.turn(sid, turns[0])), 4)
        cursor[side.name] = 1
    transcript = (host_tail + turns[0])[-200:]
    for index in range(rounds):
        for side in rounds_order(sides, index):
            client = clients[side.name]
            for _ in range(per_round):
                turn = turns[cursor[side.name]]
                cursor[side.name] += 1
                ms, responses = timed(client, side.turn(sid, turn))
                side.check_turn(responses, 4)
                samples["turn"][side.name].append(ms)
            rebuild = side.rebuild(sid, transcript, PROMPT)
            search = side.search(sid, SELECTIVE_TERM)
            for _ in range(per_round):
                ms, responses = timed(client, [rebuild])
                summary = side.rebuild_summary(responses[0])
                returned[side.name] = f"{len(responses[0].content) / 1000:,.0f} KB, {summary}"
                samples["rebuild"][side.name].append(ms)
                ms, responses = timed(client, [search])
                hits = side.hits(responses[0])
                if hits != 5:
                    raise RuntimeError(
                        f"{side.name}: selective search found {hits} at size {size}, expected 5"
                    )
                samples["search"][side.name].append(ms)
    for turn in turns:
        host_tail.extend(turn)
    del host_tail[:-200]
    p50 = {
        metric: {name: _median(values) for name, values in per_side.items()}
        for metric, per_side in samples.items()
    }
    return SizePoint(size=size, p50=p50, build_s={}, returned=returned)


def _median(values: list[float]) -> float:
    data = sorted(values)
    mid = len(data) // 2
    return data[mid] if len(data) % 2 else (data[mid - 1] + data[mid]) / 2


def _p50(m: Measure) -> float:
    return _median(m.samples_ms)
