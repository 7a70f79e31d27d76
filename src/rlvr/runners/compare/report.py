"""The `rlvr compare` report: one self-contained HTML file (plots embedded as base64 PNGs) from `summary.json`.

Sections: a table per backend (status, interpreter and versions, parity agreement, steps, final
reward, wall time, seconds per step, tokens/s, peak memory, how its settings were aligned),
then the plots -- reward curves per backend where trained, tool-call rate and turns per step
(multi-turn runs whose trainer logged them), reward
agreement of the parity records (rlvr's expected reward vs each backend's), verdict status counts,
wall time and tokens/s -- then the per-record parity table and each backend's command.

Plots use matplotlib's object API (`Figure` + Agg canvas, `rlvr.runners.report.figure`): no pyplot
global state, no display needed.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from rlvr.core.files import atomic_write
from rlvr.core.types import STATUSES
from rlvr.runners.report import CSS, escape, figure, png_base64

__all__: list[str] = []

_COLORS = {"trl": "#1f77b4", "verl": "#d62728", "openrlhf": "#2ca02c", "rlvr": "#7f7f7f"}


def _reward_curves(backends: list[dict[str, Any]]) -> str | None:
    trained = [b for b in backends if b.get("train") and b["train"].get("curve")]
    if not trained:
        return None
    fig = figure()
    ax = fig.add_subplot()
    for b in trained:
        rows = [r for r in b["train"]["curve"] if r.get("reward") is not None]
        ax.plot([r["step"] for r in rows], [r["reward"] for r in rows], marker="o", label=b["backend"],
                color=_COLORS.get(b["backend"]))
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # steps are whole numbers
    ax.set_xlabel("training step")
    ax.set_ylabel("mean reward")
    ax.set_title("Reward per training step")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return png_base64(fig)


def _tool_use(backends: list[dict[str, Any]]) -> str | None:
    """Tool-call rate and model turns per episode, per training step and backend (where logged)."""
    curves = {b["backend"]: [r for r in b["train"]["curve"] if r.get("tool_call_rate") is not None]
              for b in backends if b.get("train") and b["train"].get("curve")}
    curves = {name: rows for name, rows in curves.items() if rows}
    if not curves:
        return None
    from matplotlib.ticker import MaxNLocator

    fig = figure(10, 4)
    for i, (key, label) in enumerate([("tool_call_rate", "episodes with a tool call"),
                                      ("turns", "model turns per episode")]):
        ax = fig.add_subplot(1, 2, i + 1)
        for name, rows in curves.items():
            ax.plot([r["step"] for r in rows], [r.get(key) for r in rows], marker="o", label=name,
                    color=_COLORS.get(name))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("training step")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    fig.suptitle("Tool use per training step")
    return png_base64(fig)


def _agreement(summary: dict[str, Any]) -> str | None:
    """Expected (rlvr) reward vs each backend's replayed reward per record; error (None) drawn at -0.25."""
    expected = {r["id"]: r["reward"] for r in summary.get("records", [])}
    replayed = [b for b in summary["backends"] if b.get("parity") and b["parity"].get("results")]
    if not expected or not replayed:
        return None
    fig = figure()
    ax = fig.add_subplot()
    none_at = -0.25
    for k, b in enumerate(replayed):
        xs, ys = [], []
        for r in b["parity"]["results"]:
            if r["id"] not in expected:
                continue
            e = expected[r["id"]]
            xs.append((none_at if e is None else e) + 0.03 * (k - (len(replayed) - 1) / 2))
            ys.append(none_at if r.get("reward") is None else r["reward"])
        agree = b["parity"].get("agree", 0)
        ax.scatter(xs, ys, label=f"{b['backend']} ({agree}/{b['parity'].get('records', 0)} agree)", alpha=0.7,
                   color=_COLORS.get(b["backend"]))
    values = [v for v in expected.values() if v is not None] + [none_at, 1.0]
    low, high = min(values) - 0.1, max(values) + 0.1
    ax.plot([low, high], [low, high], linestyle="--", color="#999999", linewidth=1)
    ax.set_xlabel("rlvr reward (expected; error at -0.25)")
    ax.set_ylabel("backend reward (None at -0.25)")
    ax.set_title("Reward agreement on the parity records")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    return png_base64(fig)


def _grouped_bars(ax: Any, groups: dict[str, dict[str, float]], ylabel: str, title: str) -> None:
    width = 0.8 / max(1, len(groups))
    for k, (name, counts) in enumerate(groups.items()):
        ax.bar([i + k * width for i in range(len(STATUSES))], [counts.get(s, 0) for s in STATUSES], width, label=name)
    ax.set_xticks([i + width * (len(groups) - 1) / 2 for i in range(len(STATUSES))], list(STATUSES),
                  fontsize="small", rotation=20)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="x-small")


def _status_counts(summary: dict[str, Any]) -> str | None:
    """Left: statuses of the parity records (rlvr's and each replay's). Right: mean status fractions in training."""
    records: dict[str, dict[str, float]] = {
        "rlvr (expected)": dict(Counter(r["status"] for r in summary.get("records", [])))}
    training: dict[str, dict[str, float]] = {}
    for b in summary["backends"]:
        results = (b.get("parity") or {}).get("results") or []
        if any(r.get("status") for r in results):
            records[f"{b['backend']} (replay)"] = dict(Counter(r["status"] for r in results if r.get("status")))
        curve = (b.get("train") or {}).get("curve") or []
        if curve and any(r.get("correct") is not None for r in curve):
            training[b["backend"]] = {s: sum(r.get(s) or 0.0 for r in curve) / len(curve) for s in STATUSES}
    if not summary.get("records") and not training:
        return None
    fig = figure(9.0 if training else 6.4, 3.6)
    _grouped_bars(fig.add_subplot(1, 2 if training else 1, 1), records, "records", "Parity records")
    if training:
        _grouped_bars(fig.add_subplot(1, 2, 2), training, "fraction of completions", "Training (mean over steps)")
    return png_base64(fig)


def _timing(backends: list[dict[str, Any]]) -> str | None:
    names = [b["backend"] for b in backends if b.get("train") or b.get("parity")]
    if not names:
        return None
    by_name = {b["backend"]: b for b in backends}
    fig = figure(7.2, 3.2)
    ax1, ax2 = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    train = [float((by_name[n].get("train") or {}).get("wall_s") or 0.0) for n in names]
    parity = [float((by_name[n].get("parity") or {}).get("wall_s") or 0.0) for n in names]
    ax1.bar(names, train, label="training (incl. start-up)", color="#1f77b4")
    ax1.bar(names, parity, bottom=train, label="parity replay", color="#ff7f0e")
    ax1.set_ylabel("seconds")
    ax1.set_title("Wall time")
    ax1.legend(fontsize="x-small")
    rates = [(by_name[n].get("train") or {}).get("tokens_per_s") for n in names]
    ax2.bar(names, [r or 0.0 for r in rates], color=[_COLORS.get(n, "#555555") for n in names])
    for i, r in enumerate(rates):
        ax2.text(i, r or 0.0, "n/a" if r is None else f"{r:,.0f}", ha="center", va="bottom", fontsize="small")
    ax2.set_ylabel("tokens / s")
    ax2.set_title("Training throughput")
    return png_base64(fig)


def figures(summary: dict[str, Any]) -> dict[str, str | None]:
    """The report's plots as base64 PNG strings (None where there is nothing to plot).

    Keys: `reward_curves`, `tool_use`, `reward_agreement`, `status_counts`, `timing`.
    """
    backends = summary["backends"]
    return {"reward_curves": _reward_curves(backends), "tool_use": _tool_use(backends),
            "reward_agreement": _agreement(summary),
            "status_counts": _status_counts(summary), "timing": _timing(backends)}


def _num(value: Any, fmt: str = "{:.3g}") -> str:
    return "–" if value is None else fmt.format(value)


def _backend_rows(backends: list[dict[str, Any]]) -> str:
    rows = []
    for b in backends:
        probe, parity, train = b.get("probe") or {}, b.get("parity") or {}, b.get("train") or {}
        versions = ", ".join(f"{k} {probe[k]}" for k in ("backend", "torch", "rlvr") if probe.get(k))
        if "error" in parity:
            agree = f"replay failed: {parity['error']}"
        elif parity:
            agree = f"{parity['agree']}/{parity['records']}"
        else:
            agree = "–"
        rows.append(
            f"<tr class='{escape(b['status'])}'><td>{escape(b['backend'])}</td><td>{escape(b['status'])}</td>"
            f"<td>{escape(b.get('reason'))}</td><td><code>{escape(b.get('python'))}</code><br>{escape(versions)}; "
            f"CUDA devices: {escape(probe.get('cuda_devices', '–'))}</td><td>{escape(agree)}</td>"
            f"<td>{escape(train.get('steps', '–'))}</td><td>{_num(train.get('final_reward'))}</td>"
            f"<td>{_num(train.get('wall_s'), '{:.1f}')}</td><td>{_num(train.get('step_s'), '{:.1f}')}</td>"
            f"<td>{_num(train.get('tokens_per_s'), '{:,.0f}')}</td><td>{_num(train.get('peak_mb'), '{:,.0f}')}</td>"
            f"<td>{escape(b.get('settings'))}</td></tr>")
    return "\n".join(rows)


def _parity_table(summary: dict[str, Any]) -> str:
    replayed = [b for b in summary["backends"] if (b.get("parity") or {}).get("results")]
    results = {b["backend"]: {r["id"]: r for r in b["parity"]["results"]} for b in replayed}
    head = "".join(f"<th>{escape(b['backend'])}</th>" for b in replayed)
    rows = []
    for record in summary.get("records", []):
        cells = []
        for b in replayed:
            r = results[b["backend"]].get(record["id"], {})
            same = "error" not in r or r.get("error") is None
            same = same and r.get("reward") == record["reward"]
            text = r.get("error") or _num(r.get("reward"))
            cells.append(f"<td class='{'ok' if same else 'bad'}'>{escape(text)}</td>")
        rows.append(f"<tr><td>{escape(record['id'])}</td><td>{escape(record['kind'])}</td><td>{escape(record['status'])}</td>"
                    f"<td>{_num(record['reward'])}</td>{''.join(cells)}</tr>")
    return (f"<table><tr><th>record</th><th>kind</th><th>rlvr status</th><th>rlvr reward</th>{head}</tr>"
            + "\n".join(rows) + "</table>")


def _mismatches(backends: list[dict[str, Any]]) -> str:
    items = [f"<li><b>{escape(b['backend'])}</b> {escape(m['id'])}: {escape('; '.join(m['problems']))}</li>"
             for b in backends for m in (b.get("parity") or {}).get("mismatches", [])]
    return f"<ul>{''.join(items)}</ul>" if items else "<p>Every replayed record agrees with rlvr.</p>"


def _render_html(summary: dict[str, Any]) -> str:
    """The report as one HTML string (images inline as `data:image/png;base64,...`)."""
    import shlex

    plots = figures(summary)
    titles = {"reward_curves": "Reward curves", "tool_use": "Tool use (multi-turn runs)",
              "reward_agreement": "Reward agreement",
              "status_counts": "Verdict status counts", "timing": "Wall time and tokens/s"}
    sections = []
    for key, title in titles.items():
        png = plots[key]
        body = (f"<img alt='{escape(title)}' src='data:image/png;base64,{png}'>" if png
                else "<p>Nothing to plot (no backend produced this).</p>")
        sections.append(f"<h2>{escape(title)}</h2>{body}")
    commands = "".join(f"<h3>{escape(b['backend'])}</h3><pre>{escape(shlex.join(b['command']))}</pre>"
                       for b in summary["backends"] if b.get("command"))
    args = ", ".join(f"{k}={v!r}" for k, v in summary.get("env_args", {}).items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>rlvr compare: {escape(summary['env_id'])}</title>
<style>{CSS}</style></head><body>
<h1>rlvr compare: {escape(summary['env_id'])}</h1>
<p>Environment arguments: {escape(args or 'none')}. Model: <code>{escape(summary.get('model'))}</code>.
Steps per backend: {escape(summary.get('steps'))}. Started {escape(summary.get('created'))}.</p>
<h2>Backends</h2>
<table><tr><th>backend</th><th>status</th><th>why</th><th>interpreter</th><th>parity (agree/records)</th>
<th>steps</th><th>final reward</th><th>wall s</th><th>s/step</th><th>tokens/s</th><th>peak MiB</th>
<th>settings (how aligned)</th></tr>
{_backend_rows(summary['backends'])}</table>
{''.join(sections)}
<h2>Parity records</h2>
<p>Each record is a recorded rollout (fixed token ids) replayed through the backend's adapter; rlvr's
expected reward comes from the verifier directly. Green: same reward.</p>
{_parity_table(summary)}
{_mismatches(summary['backends'])}
<h2>Commands</h2>{commands or '<p>none</p>'}
</body></html>
"""


def write_report(summary: dict[str, Any], path: Path) -> Path:
    """Write `_render_html(summary)` to `path` atomically (`rlvr.core.files.atomic_write`); return `path`."""
    return atomic_write(Path(path), _render_html(summary))
