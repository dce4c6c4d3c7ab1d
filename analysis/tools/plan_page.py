"""The plan as a page to explore (``plan --html``): one self-contained HTML file that opens offline from disk.

One panel per metric: power against cost, a line per K (per K and R where the plan models other numbers of
raters) with its 95 % band, the target power as a dashed line, the cheapest design reaching it as a star, hollow
markers where a design extrapolates (:func:`analysis.tools.power.beyond_pilot`), every value on hover. Above the
panels, the inputs (the effect, the costs, the target power, alpha, the sampler and the replicates) and the command
that reproduces the page. plotly draws it; its JavaScript is written into the page, so nothing is fetched.
:func:`embedded` gives the panels alone, for the compare chapter.
"""

from __future__ import annotations

import html
import math

import pandas as pd

from analysis.engine.metrics import METRIC_LABELS
from analysis.errors import ParameterError
from analysis.tools.power import WHOSE_TEST, Plan, beyond_pilot

COLUMNS = 4  # panels per row
SUFFIXES = (".html", ".htm")


def check_plotly() -> None:
    """Refuse ``--html`` before any work where plotly is missing."""
    try:
        import plotly  # noqa: F401
    except ImportError:
        raise ParameterError("--html needs plotly: pip install 'annotator-bootstrap[report]'") from None


def figure(result: Plan):
    """The plotly figure of :func:`page`."""
    import plotly.graph_objects as go
    from plotly.colors import qualitative
    from plotly.subplots import make_subplots

    designs = result.designs.assign(far=beyond_pilot(result.designs))
    metrics = list(dict.fromkeys(designs["metric"]))
    rows = math.ceil(len(metrics) / COLUMNS)
    columns = min(COLUMNS, len(metrics))
    fig = make_subplots(rows=rows, cols=columns, subplot_titles=[METRIC_LABELS[m] for m in metrics],
                        horizontal_spacing=0.06, vertical_spacing=0.12)
    lines = ["K", "R"] if "R" in designs else ["K"]
    names = {key: i for i, key in enumerate(dict.fromkeys(map(tuple, designs[lines].to_numpy().tolist())))}
    best = result.cheapest.set_index("metric")
    keys = ["metric", "N", "K"] + (["R"] if "R" in designs else [])
    far = designs.set_index(keys)["far"]  # the cheapest design is one of the designs: read its mark there
    for p, metric in enumerate(metrics):
        at = dict(row=p // columns + 1, col=p % columns + 1)
        for key, line in designs[designs["metric"] == metric].groupby(lines, sort=True):
            key = key if isinstance(key, tuple) else (key,)
            line = line.sort_values("cost")
            colour = qualitative.Plotly[names[tuple(key)] % len(qualitative.Plotly)]
            label = ", ".join(f"{c} = {int(v)}" for c, v in zip(lines, key))
            fig.add_trace(go.Scatter(x=list(line["cost"]) + list(line["cost"])[::-1],
                                     y=list(line["power_high"]) + list(line["power_low"])[::-1], fill="toself",
                                     mode="lines", fillcolor=colour, opacity=0.15, line=dict(width=0),
                                     hoverinfo="skip",
                                     legendgroup=label, showlegend=False), **at)
            fig.add_trace(go.Scatter(
                x=line["cost"], y=line["power"], mode="lines+markers", name=label, legendgroup=label,
                showlegend=p == 0, line=dict(color=colour),
                marker=dict(symbol=["circle-open" if far else "circle" for far in line["far"]], size=8),
                customdata=line[["N", "K", "power_low", "power_high", "delta", "far"]].to_numpy(),
                hovertemplate=("N = %{customdata[0]:,} × K = %{customdata[1]}<br>cost %{x:,.6g}<br>power %{y:.2f} "
                               "[%{customdata[2]:.2f}, %{customdata[3]:.2f}]<br>Δ %{customdata[4]:.3g}"
                               "<br>extrapolated: %{customdata[5]}<extra>" + html.escape(label) + "</extra>")), **at)
        cheapest = best.loc[metric]
        if pd.notna(cheapest["N"]):
            fig.add_trace(go.Scatter(
                x=[cheapest["cost"]], y=[cheapest["power"]], mode="markers", name="cheapest reaching the target",
                legendgroup="cheapest", showlegend=p == 0,
                marker=dict(symbol="star-open" if far.loc[(metric, *cheapest[keys[1:]])] else "star", size=16,
                            color="black"),
                hovertemplate=(f"cheapest: N = {int(cheapest['N']):,} × K = {int(cheapest['K'])}<br>cost "
                               "%{x:,.6g}<br>power %{y:.2f}<extra></extra>")), **at)
        fig.add_hline(y=result.target, line=dict(dash="dash", color="grey", width=1), **at)
        fig.update_xaxes(type="log", title_text="cost", **at)
        fig.update_yaxes(range=[0, 1.02], title_text="power" if at["col"] == 1 else None, **at)
    fig.update_layout(height=330 * rows, margin=dict(t=60, l=50, r=20, b=40), legend=dict(title="design"),
                      template="plotly_white")
    return fig


def embedded(result: Plan) -> str:
    """The panels alone, as an HTML fragment for a page that has its own head (the compare chapter): plotly's
    JavaScript inlined, the figure as wide as its column."""
    return figure(result).to_html(full_html=False, include_plotlyjs=True,
                                  config={"displaylogo": False, "responsive": True})


def page(result: Plan, command: str) -> str:
    """The whole page: the inputs and the command above the panels, plotly's JavaScript inlined."""
    how = result.provenance["parameters"]
    target = how["target_delta"]
    effect = (f"a {METRIC_LABELS[target[0]]} Δ of {target[1]:g} (ε found at each K)" if target
              else f"ε = {how['epsilon']:g}")
    inputs = {"data": f"{result.provenance['dataset']} (sha256 {result.provenance['data_sha256'][:12]}…)",
              "effect": effect, "cost of an item": f"{how['cost_item']:g}",
              "cost of a rating": f"{how['cost_rating']:g}", "target power": f"{how['power']:g}",
              "alpha (one-sided)": f"{how['alpha']:g}", "sampler": how["sampler"],
              ("studies" if result.test == "compare" else "replicates") + " per design":
              f"{how['n_samples']:,}", "seed": str(how["seed"])}
    rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in inputs.items())
    body = embedded(result)
    title = f"Plan for {result.provenance['dataset']}: power against cost"
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}th,td{padding:2px 10px;"
            "text-align:left;border-bottom:1px solid #ddd}pre{background:#f4f4f4;padding:6px;white-space:pre-wrap}"
            "</style></head><body>"
            f"<h1>{html.escape(title)}</h1><table>{rows}</table>"
            f"<p>Reproduce this page with:</p><pre>{html.escape(command)}</pre>"
            "<p>Hollow markers extrapolate beyond the pilot (more items, ratings per item or raters than it has); "
            "the star is the cheapest design reaching the target power; shaded: each line's 95 % band. "
            f"{html.escape(WHOSE_TEST[result.test])}</p>"
            f"{body}</body></html>\n")
