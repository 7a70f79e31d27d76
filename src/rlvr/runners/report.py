"""What rlvr's reports share: matplotlib figures without pyplot, PNGs as base64, the page style, HTML escaping.

Used by the reward curve of `rlvr train` (`rlvr.runners.train.curve`), the `rlvr compare` report
(`rlvr.runners.compare.report`) and the `rlvr synth` report (`rlvr.runners.synth_report`). Figures
use matplotlib's object API (`Figure` + Agg canvas): no pyplot global state, no display needed;
matplotlib's cache goes under `$TMPDIR` unless `MPLCONFIGDIR` is set.
"""

from __future__ import annotations

import base64
import html
import io
import os
from pathlib import Path
from typing import Any

__all__: list[str] = []

CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:0.9em}td,th{border:1px solid #ccc;padding:4px 8px;
vertical-align:top;text-align:left}th{background:#f3f3f3}td.ok{background:#eaf7ea}td.bad{background:#fbe3e3}
tr.unavailable td,tr.skipped td{color:#888}tr.interrupted td,tr.failed td{background:#fff4e5}
pre{background:#f6f6f6;padding:8px;white-space:pre-wrap;word-break:break-all;
font-size:0.8em}img{max-width:100%;border:1px solid #eee;margin:0.5em 0}"""
"""The stylesheet of every rlvr HTML report (inlined in the page)."""


def figure(width: float = 6.4, height: float = 3.6, dpi: int = 100) -> Any:
    """A matplotlib `Figure` of `width` x `height` inches with an Agg canvas (so `savefig` works without pyplot)."""
    os.environ.setdefault("MPLCONFIGDIR", str(Path(os.environ.get("TMPDIR", "/tmp")) / "rlvr-matplotlib"))
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(fig)
    return fig


def png_base64(fig: Any) -> str:
    """`fig` laid out tight and rendered as PNG, base64-encoded (for `data:image/png;base64,...`)."""
    buffer = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def escape(value: Any) -> str:
    """`value` as HTML text (None: empty)."""
    return html.escape("" if value is None else str(value))
