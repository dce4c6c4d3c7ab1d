"""What a plan says (the methods page): its summary in words, its table as people read it, its figure, its files,
and the ``plan`` command that prints and writes them. The planning itself is :mod:`analysis.tools.power`."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

import pandas as pd

from analysis.errors import ParameterError
from analysis.experiment.grid import ALPHA
from analysis.experiment.workers import check_jobs
from analysis.io import json_ready, output_file, replace_atomic, write_atomic
from analysis.engine.metrics import AVERAGINGS, METRIC_LABELS
from analysis.experiment.choices import BOOK
from analysis.tools import plan_page
from analysis.wording import law_name
from analysis.tools.options import data_arguments, ints, load_data, perturbation_argument, sampler_argument
from analysis.tools.compare import N_SAMPLES
from analysis.tools.power import TESTS, WHOSE_TEST, Plan, beyond_pilot, check_plan, cheapest, plan

def extrapolations(row, result: Plan, short: bool = False) -> list[str]:
    """Why a design (a row of ``designs`` or ``cheapest``) is an extrapolation (:func:`.beyond_pilot`): more items
    than the pilot has, a K beyond the raters a drawn item comes from, more raters than the pilot's; empty when it
    is none of these. ``short`` for a table cell."""
    items, raters = result.pilot["N"].iloc[0], result.provenance["raters"]
    why = []
    if row["extrapolated"] == 1:
        why.append(f"N > the {items:,} items" if short else f"more items than the pilot's {items:,}, resampled")
    if row["beyond_raters"] == 1:
        why.append(f"K > the {raters} raters" if short else
                   f"K above the {raters} raters a drawn item has, the same people redrawn")
    own = own_raters(result)
    if row.get("modelled") == 1 and own is not None and row["R"] > own:
        why.append(f"R = {int(row['R'])} > the pilot's {own}" if short else
                   f"R = {int(row['R'])} raters, more than the pilot's {own}, drawn from the population model fitted "
                   "to the pilot")
    return why


def own_raters(result: Plan) -> int | None:
    """The distinct raters of the pilot's own designs, where the plan also models other numbers of raters R."""
    if "R" not in result.designs:
        return None
    return int(result.designs.loc[~result.designs["modelled"].astype(bool), "R"].max())


def raters_note(result: Plan) -> str | None:
    """Under S1, S3 and S4, that the pilot's distinct raters bound the power and that the plan keeps them."""
    sampler, raters = result.provenance["parameters"]["sampler"], result.provenance["raters"]
    if sampler == "S2":
        return None
    where = {"S1": f"the pool of {raters} raters", "S3": f"a batch's {raters} raters",
             "S4": f"the pool of {own_raters(result) or result.provenance.get('pool', raters)} raters"}[sampler]
    said = (f"Under {sampler} every simulated study draws its raters from {where} of the pilot: the number of "
            "distinct raters bounds the power")
    if "population" in result.provenance:
        others = ", ".join(map(str, result.provenance["parameters"]["raters"]))
        return (f"{said}; the designs with R = {others} raters are simulated on studies drawn from "
                f"{result.provenance['population']['description']}, fitted to the pilot.")
    return (f"{said}, and this plan keeps the pilot's raters (more items or more ratings per item do not add new "
            "people).")


def _design(row, result: Plan) -> str:
    why = extrapolations(row, result)
    note = f" (an extrapolation: {'; '.join(why)})" if why else ""
    raters = f" of R = {int(row['R'])} raters" if "R" in row else ""
    return (f"N = {int(row['N']):,} items x K = {int(row['K'])}{raters} (cost {row['cost']:,.6g}), power "
            f"{row['power']:.2f} [{row['power_low']:.2f}, {row['power_high']:.2f}], Delta {row['delta']:.3g}{note}")


def _best_words(p, result: Plan, markdown: bool = False) -> str:
    """The best power of the pilot's own R, in words (planning R only): ``N = 175 x K = 20`` for the terminal,
    ``175 × 20`` in the Markdown summary, as its other designs."""
    if "best_power" not in p:
        return ""
    raters = result.provenance["raters"]
    return (f" With its own {raters} raters no design of the grid within them has power" if pd.isna(p["best_power"])
            else f" With its own {raters} raters the best power any N of the grid reaches is {p['best_power']:.2f} "
            + (f"({int(p['best_N']):,} × {int(p['best_K'])})" if markdown else
               f"(N = {int(p['best_N']):,} x K = {int(p['best_K'])})")) + "."


def summary_lines(result: Plan) -> list[str]:
    """One line per metric: the cheapest design reaching the target power, and what the pilot's design gives."""
    lines = []
    pilot = result.pilot.set_index("metric")
    for _, row in result.cheapest.iterrows():
        metric = row["metric"]
        best = _design(row, result) if pd.notna(row["N"]) else "no design of the grid reaches it"
        p = pilot.loc[metric]
        smallest = ("not searched under compare's test" if result.test == "compare" else
                    "not reached at epsilon <= 1" if pd.isna(p["smallest_epsilon"]) else
                    f"epsilon {p['smallest_epsilon']:.3g} (Delta {p['smallest_delta']:.3g})")
        own = (f"power {p['power']:.2f} [{p['power_low']:.2f}, {p['power_high']:.2f}]; smallest detectable effect "
               f"{smallest}" if p["can_reject"] else f"compare's own test cannot reach p < {_alpha(result):g} on "
               "it (too few raters)")
        lines.append(f"{METRIC_LABELS[metric]}: cheapest with power >= {result.target:g}: {best}. The pilot's "
                     f"N = {int(p['N']):,} x K = {int(p['K'])}: {own}.{_best_words(p, result)}")
    return lines


def _alpha(result: Plan) -> float:
    return result.provenance["parameters"]["alpha"]


def summary(result: Plan) -> str:
    """The plan in words (Markdown): the effect, then per metric the cheapest design and what the pilot's gives."""
    how = result.provenance["parameters"]
    target = how["target_delta"]
    effect = (f"a {METRIC_LABELS[target[0]]} Δ of {target[1]:.3g}, which ε = {result.epsilon:.3g} gives on the pilot's "
              "design" if target else f"ε = {result.epsilon:g}")
    cost = (f"N × {how['cost_item']:g} + " if how["cost_item"] else "") + "N × K" + (
        f" × {how['cost_rating']:g}" if how["cost_rating"] != 1 else "")  # the terms that are not 0 or 1
    lines = [f"The effect is {effect} (sampler {how['sampler']}; {law_words(result)}; {how['n_samples']} simulated "
             f"studies per design; a design of N items × K ratings costs {cost})."
             # the page's notation: ρ for the rater share, as the methods page writes it
             + (f" {raters_note(result).replace('rater share rho', 'rater share ρ')}" if raters_note(result) else "")
             + f" {method_note(result)}"]
    pilot = result.pilot.set_index("metric")
    inside = result.designs[~beyond_pilot(result.designs)]
    within = cheapest(inside, result.target).set_index("metric") if len(inside) else None
    for _, row in result.cheapest.iterrows():
        p = pilot.loc[row["metric"]]
        why = extrapolations(row, result) if pd.notna(row["N"]) else []
        best = (f"{int(row['N']):,} items × {int(row['K'])} ratings"
                + (f" of R = {int(row['R'])} raters" if "R" in row else "") + f" (cost {row['cost']:,.6g}) reach power "
                f"{row['power']:.2f}" + (f", an extrapolation ({'; '.join(why)})" if why else "")
                if pd.notna(row["N"]) else f"no design of the grid reaches power {result.target:g}")
        if why:
            alt = within.loc[row["metric"]] if within is not None and row["metric"] in within.index else None
            if alt is not None and pd.notna(alt["N"]):
                # a modelled pool no larger than the pilot's is named, since it is not the pilot's own raters
                pool = f" of R = {int(alt['R'])} modelled raters" if "R" in alt and bool(alt["modelled"]) else ""
                best += (f"; within the pilot's items and raters, {int(alt['N']):,} × {int(alt['K'])}{pool} (cost "
                         f"{alt['cost']:,.6g}) reaches power {alt['power']:.2f}")
            else:
                best += "; no design within the pilot's items and raters reaches it"
        smallest = (f"no perturbation up to ε = 1 gives it power {result.target:g}" if pd.isna(p["smallest_epsilon"])
                    else f"ε = {p['smallest_epsilon']:.3g} (Δ {p['smallest_delta']:.3g}) is the smallest effect it "
                    f"detects with power {result.target:g}")
        own = (f"is too few raters for compare's own test to reach p < {_alpha(result):g}" if not p["can_reject"]
               else f"has power {p['power']:.2f} (the smallest effect it detects is not searched under compare's "
               "test)" if result.test == "compare" else f"has power {p['power']:.2f}, and {smallest}")
        lines.append(f"- {METRIC_LABELS[row['metric']]}: {best}; the pilot's {int(p['N']):,} × {int(p['K'])} "
                     f"{own}.{_best_words(p, result, True)}")
    return "\n".join(lines)


def law_words(result: Plan) -> str:
    """The noise law B is perturbed under, in words; a law other than the book's is named as such."""
    law = result.provenance["parameters"]["perturbation"]
    return (f"B perturbed with {law_name(law)} noise" + ("" if law == BOOK.perturbation else
            f", not the {law_name(BOOK.perturbation)} noise of the book's chapters"))


def method_note(result: Plan) -> str:
    """How the powers were read: fitted to rise with N, of the paper's test rather than ``compare``'s, the effect
    held at every K, and the designs on which ``compare``'s own test cannot reject."""
    how = result.provenance["parameters"]
    bands = ("its 95 % bands are Wilson's over the simulated studies, each tested with compare's "
             f"{N_SAMPLES:,} replicates" if result.test == "compare" else
             "its 95 % bands hold the Monte Carlo error of the simulated null as well as of the studies")
    if "population" in result.provenance:
        low, high = result.provenance["population"]["rho_interval"]
        bands += (f"; a modelled design's band also spans the power at either end of the rater share's interval "
                  f"(ρ {low:.3g} to {high:.3g}), what the pilot leaves unknown of its raters")
    words = ("Power is fitted to rise with N at each K (an isotonic fit through the simulated designs, each "
             f"weighted by its Monte Carlo precision); {bands}. {WHOSE_TEST[result.test]}")
    if how["target_delta"]:
        metric, delta = how["target_delta"]
        words += (f" ε is chosen at each K so that {METRIC_LABELS[metric]}'s Δ stays {delta:.3g}; the other metrics "
                  "are planned at that ε, so their Δ may change with K")
        lost = result.provenance.get("out_of_reach_ks") or []
        words += (f"; at K = {', '.join(map(str, lost))} no ε up to 1 gives it, and those designs are left out."
                  if lost else ".")
    blocked = result.designs[~result.designs["can_reject"].astype(bool)]
    if len(blocked):
        per_metric = blocked.groupby("metric")["K"].max()
        said = "; ".join(f"{METRIC_LABELS[m]} with K up to {k}" for m, k in per_metric.items())
        words += (f" compare's own test, one-sided as the power is, cannot reach p < {how['alpha']:g} on some designs "
                  f"({said}: too few raters for its percentile part), so they count as power 0.")
    return words


def readable(result: Plan) -> pd.DataFrame:
    """Per metric, the cheapest design reaching the target power and the pilot's own design, as people read them.

    Columns: metric, cheapest N × K (with "extrapolated: …" where it is one), its cost, its power, pilot N × K,
    pilot power, smallest ε (Δ) at the pilot; planning R names the cheapest design's R and adds the best power of
    the pilot's own R.
    """
    best = result.cheapest.set_index("metric")
    rows = []
    for _, p in result.pilot.iterrows():
        b = best.loc[p["metric"]]
        reached = pd.notna(b["N"])
        why = extrapolations(b, result, short=True) if reached else []
        rows.append({"metric": METRIC_LABELS[p["metric"]],
                     "cheapest N × K": (f"{int(b['N']):,} × {int(b['K'])}"
                                        + (f", R = {int(b['R'])}" if "R" in b else "")
                                        + (f" (extrapolated: {'; '.join(why)})" if why else "")) if reached
                     else "none in the grid",
                     "its cost": f"{b['cost']:,.6g}" if reached else "–",
                     "its power": f"{b['power']:.2f} [{b['power_low']:.2f}, {b['power_high']:.2f}]" if reached else "–",
                     "pilot N × K": f"{int(p['N']):,} × {int(p['K'])}",
                     "pilot power": f"{p['power']:.2f} [{p['power_low']:.2f}, {p['power_high']:.2f}]"
                     if p["can_reject"] else "compare cannot reject",
                     "smallest ε (Δ) at the pilot": "–" if pd.isna(p["smallest_epsilon"]) else
                     f"{p['smallest_epsilon']:.3g} ({p['smallest_delta']:.3g})",
                     **({f"best power with the pilot's {result.provenance['raters']} raters":
                         "–" if pd.isna(p["best_power"]) else
                         f"{p['best_power']:.2f}".replace("1.00", "1") + f" ({int(p['best_N']):,} × {int(p['best_K'])})"}
                        if "best_power" in p else {})})
    return pd.DataFrame(rows)


def figure(result: Plan, metrics=("accuracy", "mae", "f1", "jsd")):
    """Power against cost, one panel per metric (those of ``metrics`` the plan has, else its first four) and one line
    per K with its band; a star marks the cheapest design reaching the target power; hollow markers (and a hollow
    star) mark extrapolations, in N, in K or in R. Planning R draws one row of panels per R: the pilot's own, then
    the modelled ones."""
    import matplotlib.pyplot as plt

    shown = [m for m in metrics if m in set(result.designs["metric"])] or list(result.cheapest["metric"])[:4]
    groups = (list(result.designs.groupby(["modelled", "R"])) if "R" in result.designs else
              [((False, None), result.designs)])
    fig, axes = plt.subplots(len(groups), len(shown), figsize=(3.2 * len(shown), 3.0 * len(groups) + 0.6),
                             sharey=True, squeeze=False, layout="constrained")
    best = result.cheapest.set_index("metric")
    for row, ((modelled, r), group) in zip(axes, groups):
        for ax, metric in zip(row, shown):
            table = group[group["metric"] == metric]
            for k, line in table.groupby("K"):
                line = line.sort_values("cost")
                beyond = " (K > raters)" if line["beyond_raters"].any() else ""
                drawn = ax.plot(line["cost"], line["power"], marker="o", ms=3, lw=1.2, label=f"K = {k}{beyond}",
                                ls=":" if beyond else "-")[0]
                ax.fill_between(line["cost"], line["power_low"], line["power_high"], color=drawn.get_color(),
                                alpha=0.15)
                far = line[beyond_pilot(result.designs).loc[line.index]]
                ax.plot(far["cost"], far["power"], "o", ms=5, mfc="white", color=drawn.get_color())
            b = best.loc[metric]
            if pd.notna(b["N"]) and (r is None or (b["modelled"], b["R"]) == (modelled, r)):
                ax.plot(b["cost"], b["power"], "*", ms=14, color="black", zorder=5,
                        mfc="white" if extrapolations(b, result) else "black")
            ax.axhline(result.target, color="grey", ls="--", lw=0.8)
            ax.set_xscale("log")
            ax.minorticks_off()
            ax.set_title(METRIC_LABELS[metric] + ("" if r is None else
                                                  f", R = {r} ({'modelled' if modelled else 'the pilot'})"))
            ax.set_xlabel("cost")
        row[0].set_ylabel("power")
    # one legend for every panel, below them, where it hides no line or band; each K once, in the order drawn
    lines = {label: handle for ax in axes.flat for handle, label in zip(*ax.get_legend_handles_labels())}
    fig.legend(lines.values(), lines.keys(), loc="outside lower center", ncol=min(len(lines), 6), fontsize=7,
               title="hollow: extrapolated", title_fontsize=7, frameon=False)
    return fig


def check_figure(path: str) -> None:
    """Refuse, before any work, a figure whose format matplotlib cannot write, or a missing matplotlib."""
    try:
        from matplotlib.backend_bases import FigureCanvasBase
    except ImportError:
        raise ParameterError("--figure needs matplotlib: pip install matplotlib") from None
    formats = FigureCanvasBase.get_supported_filetypes()
    suffix = os.path.splitext(path)[1].lstrip(".").lower()
    if suffix not in formats:
        raise ParameterError(f"--figure {path}: {('.' + suffix) if suffix else 'no suffix'} is not a figure format; "
                             f"end the name in one of {', '.join('.' + f for f in sorted(formats))}")


def save(result: Plan, path: str) -> None:
    """Every design's power as CSV, and the pilot's design and the provenance as ``<path>.json``."""
    write_atomic(path, result.designs.to_csv(index=False))
    note = {**result.provenance, "epsilon_used": result.epsilon,
            "cheapest": result.cheapest.to_dict("records"), "pilot": result.pilot.to_dict("records")}
    write_atomic(f"{path}.json", json.dumps(json_ready(note), indent=2, allow_nan=False))


def save_figure(fig, path: str) -> None:
    """Write a figure atomically (a temporary file in the same folder, then a rename); its format from the suffix."""
    replace_atomic(path, lambda tmp: fig.savefig(tmp, dpi=150, bbox_inches="tight"), suffix=Path(path).suffix)


# ------------------------------------------------------------------------------------------ command line

def _target_delta(text: str) -> tuple[str, float]:
    metric, _, value = text.partition("=")
    try:
        return metric.strip(), float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected METRIC=VALUE, e.g. accuracy=0.05, got {text!r}") from None


def add_cli(commands, line: str) -> None:
    """Register ``plan`` on the command line's subparsers, with its one-line help."""
    cli = commands.add_parser("plan", help=line,
                              description="Power, cost and the smallest detectable effect of N x K designs, simulated "
                                          "from a pilot (see the README's 'Plan a study').")
    data_arguments(cli)
    effect = cli.add_mutually_exclusive_group(required=True)
    effect.add_argument("--epsilon", type=float,
                        help="the effect as how strongly model B is perturbed away from A, in (0, 1]")
    effect.add_argument("--target-delta", type=_target_delta, metavar="METRIC=VALUE",
                        help="the effect as a Delta of one metric, e.g. accuracy=0.05")
    sampler_argument(cli)
    cli.add_argument("--cost-item", type=float, default=0.0, help="cost of one item (default: 0)")
    cli.add_argument("--cost-rating", type=float, default=1.0, help="cost of one rating (default: 1)")
    cli.add_argument("--power", type=float, default=0.8, help="target power in (0, 1) (default: 0.8)")
    cli.add_argument("--alpha", type=float, default=ALPHA, help="significance level in (0, 1) (default: 0.05)")
    cli.add_argument("--ns", type=ints, default=None, help="comma-separated item counts (default: around the pilot's)")
    cli.add_argument("--ks", type=ints, default=None,
                     help="comma-separated ratings per item (default: 1 to 20 and twice the pilot's, up to the "
                          "raters a drawn item has)")
    cli.add_argument("--raters", type=ints, default=None,
                     help="comma-separated numbers of distinct raters R to plan beside the pilot's own (S1, S3, "
                          "S4): each R's designs are simulated on studies drawn from a population model fitted to the "
                          "pilot, and marked as modelled")
    cli.add_argument("--metrics", default="all", help="comma-separated metrics or 'all'")
    cli.add_argument("--averaging", choices=AVERAGINGS, default=BOOK.averaging,
                     help=f"how 'all' averages precision, recall and F1 over the labels (default: {BOOK.averaging}, "
                          "as in the book; weighted: by each label's support)")
    perturbation_argument(cli, "; the only law under --test compare")
    cli.add_argument("--test", choices=TESTS, default=TESTS[0],
                     help="whose test's power: the paper's, on simulated replicates (default), or compare's own, run "
                          "on simulated studies (slower: about 0.02 s a study for the vote metrics and 0.2-0.4 s with "
                          "a distribution metric, on 100 items x 5 ratings)")
    cli.add_argument("--jobs", type=int, default=1,
                     help="worker processes that test the studies of --test compare (default: 1; the same plan for "
                          "any number)")
    cli.add_argument("--n-samples", type=int, default=200,
                     help="replicates per design and hypothesis, or with --test compare studies per design "
                          "(default: 200)")
    cli.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    cli.add_argument("--out", default=None, help="CSV of every design's power; the summary goes to OUT.json")
    cli.add_argument("--figure", default=None, help="a PNG or PDF of power against cost")
    cli.add_argument("--html", default=None,
                     help="a self-contained HTML page to explore the plan (power against cost per metric, values on "
                          "hover; opens offline); needs plotly")
    cli.add_argument("--quiet", action="store_true", help="no progress bar")


def run_cli(args: argparse.Namespace) -> None:
    """The ``plan`` command."""
    check_plan(args.cost_item, args.cost_rating, args.power, args.alpha, args.epsilon, args.target_delta,
               args.n_samples, args.seed, args.test)
    check_jobs(args.jobs)
    out = output_file(args.out, inputs=[args.data], sidecar=".json", suffixes=(".csv",)) if args.out else None
    if args.figure:
        check_figure(args.figure)
    picture = output_file(args.figure, inputs=[args.data], flag="--figure") if args.figure else None
    if args.html:
        plan_page.check_plotly()
    explore = output_file(args.html, inputs=[args.data], flag="--html", suffixes=plan_page.SUFFIXES) \
        if args.html else None
    result = plan(load_data(args), sampler=args.sampler, epsilon=args.epsilon, target_delta=args.target_delta,
                  ns=args.ns, ks=args.ks, cost_item=args.cost_item, cost_rating=args.cost_rating, power=args.power,
                  alpha=args.alpha, n_samples=args.n_samples, seed=args.seed,
                  metrics="all" if args.metrics == "all" else args.metrics.split(","), progress=not args.quiet,
                  raters=args.raters, averaging=args.averaging, test=args.test, n_jobs=args.jobs,
                  perturbation=args.perturbation)
    how = "" if args.target_delta is None else f" (found for {args.target_delta[0]} Delta = {args.target_delta[1]:g})"
    print(f"epsilon {result.epsilon:.3g}{how}; sampler {result.provenance['parameters']['sampler']}; "
          f"{law_words(result)}; " + (f"{args.n_samples} studies per design; power is the share of studies whose "
                                      f"compare test gives p < {args.alpha:g}" if args.test == "compare" else
                                      f"{args.n_samples} replicates per design; power is the share of replicates "
                                      f"with p < {args.alpha:g}"))
    if result.designs["extrapolated"].any():
        print(f"note: designs with more than the pilot's {result.pilot['N'].iloc[0]:,} items are extrapolations "
              "(items resampled with replacement)", file=sys.stderr)
    if result.designs["beyond_raters"].any():
        print(f"note: designs with K above the {result.provenance['raters']} raters a drawn item has are "
              "extrapolations (the same people redrawn)", file=sys.stderr)
    if raters_note(result):
        note = raters_note(result)
        print(f"note: {note[0].lower()}{note[1:]}", file=sys.stderr)
    print("\n".join(summary_lines(result)))
    print(method_note(result))
    if out:
        save(result, out)
        print(f"wrote {len(result.designs)} rows to {args.out}", file=sys.stderr)
    if picture:
        save_figure(figure(result), picture)
        print(f"wrote the figure to {args.figure}", file=sys.stderr)
    if explore:
        command = shlex.join(["python", "-m", "analysis", *getattr(args, "argv", ["plan"])])
        write_atomic(explore, plan_page.page(result, command))
        print(f"wrote the page to {args.html}", file=sys.stderr)
