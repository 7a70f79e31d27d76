"""`rlvr synth` report: `report.json`, `pass_rate.png` and a self-contained `report.html`.

`report.json` keys: `env`, `env_args`, `config` (the run configuration), `n` (K), `tasks` (in
use), `samples`, `statuses` (status -> samples), `episode_errors`, `pass_at` (`"k"` ->
`{"value", "tasks"}` for k = 1..K, unbiased, over tasks with >= k scored samples), `band`,
`keep`, `dedup`, `sft_rows`, `rl_rows`, `dedup_dropped`, `band_counts` (`below` / `in` / `above`
/ `all_error` / `unsampled` tasks), `tasks_all_error` (ids), `histogram` (`centers`, `counts`:
tasks per pass rate, K+1 bins up to K = 20, else 21), `tokens` (`sampled`, `prompt`, `samples`
with token fields; null without them, e.g. scripted policies), `time` (`verify_s`, the sum of
the verdicts' `elapsed_s`, and this run's `wall_s`, `samples_written`, `samples_resumed`,
`samples_per_s`), `runs` (every run's `time` entry, oldest first, kept across resumes),
`episodes` (the tool-use metrics of every sample: `rlvr.core.metrics.EPISODE_METRICS`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlvr.core.files import atomic_write
from rlvr.core.types import STATUSES
from rlvr.runners.report import CSS, escape, figure, png_base64

__all__: list[str] = []

PNG = "pass_rate.png"


def histogram(rates: list[float], n: int) -> dict[str, list[Any]]:
    """Tasks per pass rate: `min(n, 20) + 1` bins centred on 0, 1/B, ..., 1 (a rate goes to the nearest)."""
    bins = max(1, min(n, 20))
    counts = [0] * (bins + 1)
    for rate in rates:
        counts[round(rate * bins)] += 1
    return {"centers": [round(i / bins, 6) for i in range(bins + 1)], "counts": counts}


def build_report(summary: Any, *, directory: Path, n: int, tasks: int, band: tuple[float, float], keep: str,
                 dedup: bool, config: dict[str, Any], run: dict[str, Any],
                 episodes: dict[str, float]) -> dict[str, Any]:
    """The `report.json` object (keys: module docstring); earlier runs come from `directory/report.json`."""
    runs: list[dict[str, Any]] = []
    previous = directory / "report.json"
    if previous.is_file():
        try:
            runs = list(json.loads(previous.read_text(encoding="utf-8")).get("runs", []))
        except (ValueError, AttributeError):
            runs = []  # an unreadable report is rewritten; the trajectories are the record
    lo, hi = band
    rates = [c.pass_rate for c in summary.counts if c.pass_rate is not None]
    pass_at = {}
    for k in range(1, n + 1):
        value, covered = summary.pass_at(k)
        pass_at[str(k)] = {"value": value, "tasks": covered}
    tokens = None
    if summary.token_samples:
        tokens = {"sampled": summary.sampled_tokens, "prompt": summary.prompt_tokens,
                  "samples": summary.token_samples}
    return {
        "env": config["env"], "env_args": config["env_args"], "config": config, "n": n, "tasks": tasks,
        "samples": summary.samples, "statuses": {s: summary.statuses.get(s, 0) for s in STATUSES},
        "episode_errors": summary.episode_errors, "pass_at": pass_at, "band": [lo, hi], "keep": keep,
        "dedup": dedup, "sft_rows": len(summary.sft_rows), "rl_rows": len(summary.rl_rows),
        "dedup_dropped": summary.dedup_dropped,
        "band_counts": {"below": sum(r < lo for r in rates), "in": len(summary.rl_rows),
                        "above": sum(r > hi for r in rates),
                        "all_error": sum(c.pass_rate is None for c in summary.counts),
                        "unsampled": tasks - len(summary.counts)},
        "tasks_all_error": [c.task_id for c in summary.counts if c.pass_rate is None],
        "histogram": histogram(rates, n), "tokens": tokens,
        "time": {"verify_s": round(summary.verify_s, 3), **run}, "runs": [*runs, run], "episodes": episodes,
    }


def _plot(report: dict[str, Any]) -> bytes:
    import base64

    hist = report["histogram"]
    fig = figure(6.4, 3.4)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(hist["centers"]) - 1)
    lo, hi = report["band"]
    ax.axvspan(lo - width / 2, hi + width / 2, color="#2ca02c", alpha=0.12, label=f"band [{lo:g}, {hi:g}]")
    ax.bar(hist["centers"], hist["counts"], width=width, color="#1f77b4")
    ax.set_xlabel(f"pass rate (correct / scored samples, K={report['n']})")
    ax.set_ylabel("tasks")
    ax.set_title(f"Pass rate per task: {report['env']}")
    ax.set_xlim(-0.08, 1.08)
    ax.legend(fontsize="small")
    return base64.b64decode(png_base64(fig))


def _rows(pairs: list[tuple[str, Any]]) -> str:
    return "".join(f"<tr><td>{escape(k)}</td><td>{escape(v)}</td></tr>" for k, v in pairs)


def _render_html(report: dict[str, Any], png_b64: str) -> str:
    """The report as one HTML page, the histogram inline (`data:image/png;base64,...`)."""
    time_ = report["time"]
    overview = _rows([
        ("tasks", report["tasks"]), ("samples per task (K)", report["n"]), ("samples", report["samples"]),
        ("band", f"{report['band'][0]:g} <= pass rate <= {report['band'][1]:g}"),
        ("sft.jsonl rows", f"{report['sft_rows']} (keep {report['keep']}{', dedup' if report['dedup'] else ''}; "
                           f"{report['dedup_dropped']} repeats dropped)"),
        ("rl.jsonl rows", report["rl_rows"]),
        *((f"tasks {k}", v) for k, v in report["band_counts"].items()),
        ("episode errors", report["episode_errors"]),
    ])
    pass_at = _rows([(f"pass@{k}", "n/a" if v["value"] is None else f"{v['value']:.4f} ({v['tasks']} tasks)")
                     for k, v in report["pass_at"].items()])
    statuses = _rows([(s, report["statuses"][s]) for s in STATUSES])
    episodes = report["episodes"]
    tool_use = _rows([("tool-call rate (samples with a call)", f"{episodes['tool_call_rate']:.3f}"),
                      ("tool calls / sample", f"{episodes['tool_calls']:.3f}"),
                      ("failed tool calls / sample", f"{episodes['tool_errors']:.3f}"),
                      ("model turns / sample", f"{episodes['turns']:.2f}")])
    tokens = report["tokens"] or {}
    cost = _rows([("sampled tokens", tokens.get("sampled", "n/a")), ("prompt tokens", tokens.get("prompt", "n/a")),
                  ("verification s (sum)", time_["verify_s"]), ("this run: wall s", time_["wall_s"]),
                  ("this run: samples written / resumed", f"{time_['samples_written']} / {time_['samples_resumed']}"),
                  ("this run: samples/s", time_["samples_per_s"]), ("runs", len(report["runs"]))])
    errors = ", ".join(report["tasks_all_error"][:50]) or "none"
    args = ", ".join(f"{k}={v!r}" for k, v in report["env_args"].items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rlvr synth: {escape(report['env'])}</title>
<style>{CSS}</style></head><body>
<h1>rlvr synth: {escape(report['env'])}</h1>
<p>Environment arguments: {escape(args or 'none')}. Policy: <code>{escape(report['config'].get('policy')
    or report['config'].get('model'))}</code>.</p>
<table>{overview}</table>
<h2>pass@k (unbiased, Chen et al. 2021)</h2><table>{pass_at}</table>
<h2>Pass rate per task</h2><img alt="pass-rate histogram" src="data:image/png;base64,{png_b64}">
<h2>Verdict statuses</h2><table>{statuses}</table>
<h2>Tool use</h2><table>{tool_use}</table>
<h2>Tokens and time</h2><table>{cost}</table>
<h2>Tasks with only error samples</h2><p>{escape(errors)}</p>
</body></html>
"""


def write_report(directory: Path, report: dict[str, Any]) -> None:
    """Write `report.json`, `pass_rate.png` and `report.html` into `directory` (each atomically: `atomic_write`)."""
    import base64

    png = _plot(report)
    page = _render_html(report, base64.b64encode(png).decode("ascii"))
    for name, data in (("report.json", (json.dumps(report, indent=2) + "\n").encode()), (PNG, png),
                       ("report.html", page.encode())):
        atomic_write(directory / name, data)
