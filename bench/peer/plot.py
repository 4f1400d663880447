"""Draw latency against session size for both services (run by the plotting venv's Python).

    <plot-venv>/bin/python bench/peer/plot.py series.json out.png

``series.json``: ``{"title": str, "points": [{"size": int, "p50": {metric: {"ours": ms,
"peer": ms}}}], "labels": {"ours": str, "peer": str}}``. One panel per metric, log-log axes.
"""

from __future__ import annotations

import json
import sys

TITLES = {
    "turn": "4-message turn",
    "rebuild": "history rebuild",
    "search": "archive search (5 hits)",
}
STYLE = {"ours": {"color": "#1f77b4", "marker": "o"}, "peer": {"color": "#d62728", "marker": "s"}}


def main() -> None:
    # matplotlib lives only in the plotting venv (``make bench-peer``): imported here so the module
    # itself imports in the project's venv too.
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator  # noqa: PLC0415

    data = json.loads(open(sys.argv[1], encoding="utf-8").read())
    points = data["points"]
    metrics = [m for m in TITLES if points and m in points[0]["p50"]]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6), dpi=90)
    if len(metrics) == 1:
        axes = [axes]
    sizes = [p["size"] for p in points]
    for ax, metric in zip(axes, metrics, strict=True):
        for side in ("ours", "peer"):
            values = [p["p50"][metric][side] for p in points]
            ax.plot(
                sizes,
                values,
                label=data["labels"][side],
                linewidth=1.6,
                markersize=5,
                **STYLE[side],
            )
            for x, y in zip(sizes, values, strict=True):
                ax.annotate(
                    f"{y:.0f}" if y >= 10 else f"{y:.1f}",
                    (x, y),
                    textcoords="offset points",
                    xytext=(0, 6 if side == "peer" else -11),
                    ha="center",
                    fontsize=7,
                    color=STYLE[side]["color"],
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(sizes)
        ax.set_xticklabels([f"{s // 1000}k" for s in sizes])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_locator(NullLocator())
        low, high = ax.get_ylim()
        ax.set_ylim(low / 1.3, high * 1.6)
        ax.set_xlim(sizes[0] / 1.6, sizes[-1] * 1.6)
        ax.set_title(TITLES[metric], fontsize=10)
        ax.set_xlabel("messages in the session")
        ax.grid(True, which="major", alpha=0.3)
    axes[0].set_ylabel("p50 latency, ms (log)")
    axes[0].legend(fontsize=8, loc="upper left")
    fig.suptitle(data["title"], fontsize=10)
    fig.tight_layout()
    fig.savefig(sys.argv[2], pil_kwargs={"optimize": True})


if __name__ == "__main__":
    main()
