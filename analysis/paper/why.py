"""Why our Table 1 differs from the paper's: agreement per cell under each global switch, and what moves each departure.

A cell is one (paper dataset, sampler, metric) of the paper's Table 1 (ε = 0.3) or of its appendix (at the ε the
identities infer). Three comparisons say whether our cell agrees with the paper's:

* **Δ within ×1.25**: our mean Δ at the paper's own (NK, K) over the paper's (:mod:`analysis.paper.effect_sizes`);
* **best-K class**: both K at most 10, or both at least 20 (or neither side reaches p < 0.05);
* **budget**: both smallest significant budgets within one step of the paper's budget grid (or neither reaches it).

Each alternative is one set of global choices (:class:`analysis.experiment.choices.Choices`): the baseline is the
book's choices, what the research-question chapters run (every switch an identity of
:mod:`analysis.paper.identities` pins, and the noise law the paper's cells favour: :func:`inferred`); every other
alternative changes one switch of it to another value (:func:`alternatives`), and the reference choices change them
all back at once. Every alternative runs for several seeds, so a departure is attributed to a switch only when the
switch moves it beyond the spread of the reseeded runs (:func:`departures`).
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Iterable, Mapping

import numpy as np
import pandas as pd

from analysis.data import datasets
from analysis.paper import effect_sizes, identities, tables
from analysis.paper.crossings import MIXING_WORDS
from analysis.experiment.choices import BOOK, NOISE_WORDS, Choices
from analysis.experiment.grid import ALPHA
from analysis.experiment.workers import in_workers
from analysis.engine.metrics import AVERAGINGS, METRIC_LABELS, METRICS, SMOOTHINGS
from analysis.engine.split import NULL_MIXINGS
from analysis.wording import counted

COUNTS = (effect_sizes.WITHIN, *effect_sizes.RULES.values())
RUNS = (("dices350", "S1"), ("dices350", "S2"), ("d3code", "S2"), ("toxicity_kumar2021", "S2"),
        ("toxicity_kumar2021", "S3"))
BASELINE = "the book's choices"  # what the research-question chapters run (:func:`inferred`)
REFERENCE = "reference choices"  # the choices written down before the paper's numbers were read (``Choices()``)
# every value of every switch, in words; each alternative changes one switch of the book's choices to another value
VALUES = {"averaging": {"weighted": "weighted averaging", "macro": "macro averaging", "micro": "micro averaging",
                        "macro-all": "macro over all labels"},
          "smoothing": {s: f"smoothing {s:g}" for s in SMOOTHINGS},
          "perturbation": NOISE_WORDS,
          "granularity": {"levels": "five labels (D3code, Toxicity)", "binary": "binary labels (D3code, Toxicity)"},
          "stand_ins": {"v2": "stand-ins v2", "v3": "stand-ins v3 (a0 from the K = 1 cells)"},
          "dices_labels": {"three": "three labels (DICES)", "unsure-as-no": "DICES's Unsure merged into No",
                           "unsure-as-yes": "DICES's Unsure merged into Yes"},
          "null_mixing": {reading: f"the null's columns: {MIXING_WORDS[reading]}" for reading in NULL_MIXINGS}}
SWITCH_WORDS = {"averaging": "averaging", "smoothing": "smoothing", "perturbation": "noise law",
                "granularity": "granularity", "stand_ins": "stand-ins", "dices_labels": "DICES's labels",
                "null_mixing": "null's mixing"}
TABLES = {"table1": "Table 1", "appendix": "appendix"}
GRID, PAPER_CELLS = "grid", "paper cells"


# ------------------------------------------------------------------------------------------ the identities

def inferred(smoothing: identities.Inference, averaging: identities.Inference,
             granularity: identities.Inference) -> Choices:
    """Every switch an identity pins, the rest at its reference value: the KL smoothing (where the inferred ``s``
    with the natural log is one of :data:`analysis.engine.metrics.SMOOTHINGS`); the averaging that no identity rules out
    when exactly one is left (recall unequal to accuracy rules out weighted and micro, F1 unequal to accuracy
    micro); the granularity where every dataset with evidence fits one and the same. The noise law has no
    identity of its own: it is the book's, the one the paper's cells favour (this page's comparison of the laws). These are the choices the
    book's chapters run."""
    s = smoothing.answer
    chosen = {"perturbation": BOOK.perturbation}
    if s and s["base"] == "e" and s["s"] in SMOOTHINGS:
        chosen["smoothing"] = s["s"]
    ruled_out = set()
    if str(averaging.answer.get("recall", "")).startswith("not"):
        ruled_out |= {"weighted", "micro"}
    if str(averaging.answer.get("f1", "")).startswith("not"):
        ruled_out |= {"micro"}
    # no identity tells the macro average's two label sets apart (a label absent from both vote vectors): the
    # labels present, as scikit-learn's macro average, stand for both
    left = [a for a in AVERAGINGS if a not in ruled_out and a != "macro-all"]
    if len(left) == 1:
        chosen["averaging"] = left[0]
    fits = set(granularity.answer.values())
    if len(fits) == 1 and None not in fits:
        chosen["granularity"] = fits.pop()
    return Choices(**chosen)


def alternatives(book: Choices) -> dict[str, Choices]:
    """The book's choices under :data:`BASELINE`; each other value of each switch (:data:`VALUES`), the rest the
    book's, under its name; and the :data:`REFERENCE` choices, every switch back at once."""
    out = {BASELINE: book}
    for switch, values in VALUES.items():
        out.update({name: replace(book, **{switch: value}) for value, name in values.items()
                    if value != getattr(book, switch)})
    out[REFERENCE] = Choices()
    return out


def choices_by_switch(book: Choices) -> dict[str, tuple[str, ...]]:
    """Per switch in words, the alternatives that differ from the book's choices in it alone, the book's first."""
    return {SWITCH_WORDS[switch]: (BASELINE, *(name for value, name in values.items()
                                               if value != getattr(book, switch)))
            for switch, values in VALUES.items()}


def definition_alternatives(book: Choices) -> list[str]:
    """The alternatives that change the metrics' definitions alone (each other averaging and smoothing), after the
    book's choices."""
    by_switch = choices_by_switch(book)
    return [BASELINE, *by_switch[SWITCH_WORDS["averaging"]][1:], *by_switch[SWITCH_WORDS["smoothing"]][1:]]


# ------------------------------------------------------------------------------------------ simulation

def _groups(by_alternative: Mapping[str, Choices]) -> dict[tuple, list[str]]:
    """Alternatives that share one simulation: the same data and the same grid settings but the averaging (the
    averagings are read from the same replicates, :data:`analysis.paper.effect_sizes.ALL_AVERAGINGS`). Keyed by
    (data, those settings as sorted (name, value) pairs)."""
    out: dict[tuple, list[str]] = {}
    for name, c in by_alternative.items():
        data = tuple(c.dataset(datasets.paper_or_stand_in(real)) for real, _ in RUNS)
        settings = tuple(sorted((k, v) for k, v in c.grid().items() if k != "averaging"))
        out.setdefault((data, settings), []).append(name)
    return out


def settled(results: pd.DataFrame, epsilons, alpha: float = ALPHA) -> bool:
    """Whether every metric of ``results`` reaches p < ``alpha`` at some K, at every one of ``epsilons``: then no
    larger budget can change the Table 1 rule's choice."""
    for epsilon in epsilons:
        at = results[np.isclose(results["epsilon"], epsilon)]
        if at.empty or not (at.groupby("metric")["p_value"].min() < alpha).all():
            return False
    return True


def simulate(by_alternative: Mapping[str, Choices], budgets, ks, epsilons, seeds: Iterable[int], n_samples: int,
             appendix_epsilon: float, cell_samples: int | None = None, n_jobs: int = 1, scheduler=None,
             loaded: dict | None = None) -> dict[str, dict[int, pd.DataFrame]]:
    """Every alternative's five runs, per seed: the grid ``budgets`` × ``ks`` × ``epsilons``, budget by budget up to
    the first at which every metric is significant (:func:`settled`; larger budgets cannot change the rules), and
    the paper's own cells (Table 1, and the appendix at ``appendix_epsilon``) at ``cell_samples`` replicates (default
    ``n_samples``: the cells are few, so they can afford the paper's 1000 where the grid cannot), the metrics renamed
    to the paper's columns (:func:`analysis.paper.effect_sizes.select`). Returns ``{alternative: {seed: results}}``; results columns
    as :func:`analysis.paper.tables.simulate`'s and ``part`` (:data:`GRID` or :data:`PAPER_CELLS`). ``loaded``:
    datasets already loaded, by name. Without a ``scheduler``, the simulations (one per group of alternatives
    that share data and every grid setting but the averaging) run in ``n_jobs`` worker processes, a group's seeds
    one after another in one process, which then builds the drawing tables of the group's data once for all its seeds: the same tables
    as one by one, since every cell is seeded by itself."""
    cells = effect_sizes.paper_cells(appendix_epsilon=appendix_epsilon)
    loaded = {} if loaded is None else loaded
    groups = _groups(by_alternative)
    for data, _ in groups:
        loaded.update({name: datasets.load(name) for name in set(data) - set(loaded)})
    options = dict(budgets=budgets, ks=ks, epsilons=epsilons, n_samples=n_samples, cells=cells,
                   cell_samples=cell_samples or n_samples, scheduler=scheduler)
    outer = n_jobs if scheduler is None and len(groups) > 1 else 1  # the groups share the workers, or each grid has them
    found = in_workers({key: partial(_group_run, *key, list(seeds), {name: loaded[name] for name in key[0]},
                                     n_jobs=1 if outer > 1 else n_jobs, **options)
                        for key in groups}, outer)
    group_of = {name: key for key, names in groups.items() for name in names}
    return {name: {seed: effect_sizes.select(results, choices.averaging)
                   for seed, results in found[group_of[name]].items()} for name, choices in by_alternative.items()}


def _group_run(data: tuple, settings: tuple, seeds: list[int], loaded: dict, budgets, ks, epsilons, n_samples: int,
               cells: pd.DataFrame, cell_samples: int, n_jobs: int, scheduler) -> dict[int, pd.DataFrame]:
    """One group's simulation (:func:`simulate`), ``{seed: results}``: per seed, the grid of each run, then the
    paper's cells, under the group's ``settings`` (:func:`_groups`)."""
    choices = replace(BOOK, **dict(settings))
    return {seed: _seed_run(data, choices, seed, loaded, budgets, ks, epsilons, n_samples, cells, cell_samples, n_jobs,
                            scheduler) for seed in seeds}


def _seed_run(data: tuple, choices: Choices, seed: int, loaded: dict, budgets, ks, epsilons, n_samples: int,
              cells: pd.DataFrame, cell_samples: int, n_jobs: int, scheduler) -> pd.DataFrame:
    """One group's simulation for one seed: the grid of each run, then the paper's cells."""
    parts = []
    for name, (_, sampler) in zip(data, RUNS):
        for budget in sorted(budgets):
            parts.append(tables.simulate([(loaded[name], sampler)], [budget], ks, epsilons,
                                          effect_sizes.ALL_AVERAGINGS, n_samples, seed, n_jobs, choices=choices,
                                          scheduler=scheduler).assign(part=GRID))
            if settled(parts[-1], epsilons):
                break
    mapping = {effect_sizes.paper_dataset(name): name for name in data}
    at_cells = effect_sizes.simulate(cells, seeds=[seed], n_samples=cell_samples, choices=choices, data=mapping,
                                     n_jobs=n_jobs, metrics=effect_sizes.ALL_AVERAGINGS, loaded=loaded)
    return pd.concat([*parts, at_cells.assign(part=PAPER_CELLS)], ignore_index=True)


# ------------------------------------------------------------------------------------------ counts

def cells(results: Mapping[int, pd.DataFrame], appendix_epsilon: float) -> pd.DataFrame:
    """One row per (table, cell, seed): the Δ comparison at the paper's cell and both rules on the grid.

    ``results``: ``{seed: results}`` of one alternative, its ``part`` column telling the paper's cells
    (:data:`PAPER_CELLS`) from the grid (:data:`GRID`), which alone gives the rules. Columns:
    ``table``, ``dataset``, ``sampler``, ``metric``, ``seed``, ``K`` (the paper's, at its Δ cell), ``paper_delta``,
    ``delta``, ``ratio``, ``within``, ``k_class``, ``budget`` (NaN where the paper prints no Δ)."""
    paper = effect_sizes.paper_cells(appendix_epsilon=appendix_epsilon)
    parts = []
    for seed, found in results.items():
        effects = effect_sizes.effect_sizes(paper, found[found["part"] == PAPER_CELLS])
        effects = effects[["table", "dataset", "sampler", "metric", "seed", "K", "paper_delta", "delta", "ratio",
                           "within"]]
        for which, epsilon in (("table1", tables.PAPER_EPSILON), ("appendix", appendix_epsilon)):
            rules = effect_sizes.agreement(found[found["part"] == GRID], epsilon, which).assign(table=which, seed=seed)
            parts.append(rules[["table", "dataset", "sampler", "metric", "seed", *effect_sizes.RULES]].merge(
                effects[effects["table"] == which], on=["table", "dataset", "sampler", "metric", "seed"],
                how="left"))
    return pd.concat(parts, ignore_index=True)


def _spread(values: pd.Series) -> str:
    return f"{np.median(values):g} ({int(values.min())}–{int(values.max())})"


def counts_table(by_alternative: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Per alternative and table: the count of agreeing cells under each comparison, as ``median (min–max) of n``
    over seeds. ``by_alternative``: ``{alternative: cells frame}`` (:func:`cells`). Columns: ``alternative``,
    ``table``, then one per comparison (:data:`COUNTS`)."""
    rows = []
    for name, frame in by_alternative.items():
        for which, label in TABLES.items():
            part = frame[frame["table"] == which]
            row = {"alternative": name, "table": label}
            for column, title in zip(("within", *effect_sizes.RULES), COUNTS):
                judged = part.dropna(subset=[column])
                per_seed = judged.groupby("seed")[column].sum()
                n = int(judged.groupby("seed").size().max()) if len(judged) else 0
                row[title] = f"{_spread(per_seed)} of {n}" if n else "no cell"
            rows.append(row)
    return pd.DataFrame(rows, columns=["alternative", "table", *COUNTS])


def count_values(frame: pd.DataFrame, which: str, column: str = "within") -> tuple[float, int, int]:
    """(median, min, max) over seeds of the agreeing cells of one table under one comparison."""
    per_seed = frame[frame["table"] == which].dropna(subset=[column]).groupby("seed")[column].sum()
    return float(np.median(per_seed)), int(per_seed.min()), int(per_seed.max())


# ------------------------------------------------------------------------------------------ departures

def departures(by_alternative: Mapping[str, pd.DataFrame], baseline: str = BASELINE,
               exclude: Iterable[str] = (), factor: float = effect_sizes.FACTOR) -> pd.DataFrame:
    """Each departure of the baseline and what moves it.

    A Δ departure is a cell whose median ratio over seeds lies outside ``[1 / factor, factor]``; a rule departure
    a (cell, rule) that fails in most seeds. A switch (any alternative but ``baseline`` and ``exclude``) explains a
    Δ departure when its median ratio lies within the factor and its range of ratios over seeds does not overlap
    the baseline's (the reseeded spread; :data:`REFERENCE` counts as a switch, the combination of its values); it
    explains a rule departure when the rule holds in every seed under it
    and fails in every seed of the baseline. Columns: ``table``, ``run``, ``metric``, ``K`` (the paper's),
    ``departs`` (``Δ``, or the rule), ``baseline`` (ratio ``median (min–max)``, or seeds failing), ``ratio`` (the
    baseline's median ratio), ``cause`` (the switches that explain it, or ``unexplained``), ``under the cause`` (what
    each shows, prefixed with its name where there are several).
    """
    base = by_alternative[baseline]
    keys = ["table", "dataset", "sampler", "metric"]
    others = [n for n in by_alternative if n != baseline and n not in set(exclude)]

    def ratios(frame):
        judged = frame.dropna(subset=["ratio"])
        return judged.groupby(keys)["ratio"].agg(["median", "min", "max"])

    def rule_shares(frame, rule):
        return frame.groupby(keys)[rule].agg(["mean", "min", "max"])

    rows = []
    base_ratio = ratios(base)
    alt_ratio = {n: ratios(by_alternative[n]) for n in others}
    k_of = base.dropna(subset=["K"]).groupby(keys)["K"].first()
    for key, r in base_ratio.iterrows():
        if 1 / factor <= r["median"] <= factor:
            continue
        found = []
        for n in others:
            a = alt_ratio[n].loc[key] if key in alt_ratio[n].index else None
            if a is None or not 1 / factor <= a["median"] <= factor:
                continue
            if a["min"] > r["max"] or a["max"] < r["min"]:
                found.append(f"{n}: {effect_sizes.ratio_text(a['median'])} ({a['min']:.2f}–{a['max']:.2f})")
        rows.append((key, "Δ", f"{effect_sizes.ratio_text(r['median'])} ({r['min']:.2f}–{r['max']:.2f})", r["median"],
                     found))
    for rule, label in effect_sizes.RULES.items():
        shares = rule_shares(base, rule)
        alt = {n: rule_shares(by_alternative[n], rule) for n in others}
        for key, r in shares.iterrows():
            if r["mean"] >= 0.5:
                continue
            found = [n for n in others if r["max"] == 0 and key in alt[n].index and alt[n].loc[key, "min"] == 1]
            n_seeds = int(base.groupby(keys)["seed"].nunique().loc[key])
            rows.append((key, label, f"fails in {round((1 - r['mean']) * n_seeds)} of {counted(n_seeds, 'seed')}",
                         base_ratio["median"].get(key, np.nan), [f"{n}: holds in every seed" for n in found]))
    out = [{"table": TABLES[key[0]], "run": f"{key[1]} {key[2]}", "metric": METRIC_LABELS[key[3]],
            "K": k_of.get(key, np.nan), "departs": departs, "baseline": shown, "ratio": ratio,
            "cause": "; ".join(f.split(":")[0] for f in found) or "unexplained",
            "under the cause": ("; ".join(found) if len(found) > 1 else found[0].split(": ", 1)[1]) if found
            else "–"}
           for key, departs, shown, ratio, found in rows]
    frame = pd.DataFrame(out, columns=["table", "run", "metric", "K", "departs", "baseline", "ratio", "cause",
                                       "under the cause"])
    order = {m: i for i, m in enumerate(METRIC_LABELS[m] for m in METRICS)}
    return frame.sort_values(["table", "departs", "run", "metric"], key=lambda c: c.map(order) if c.name == "metric"
                             else c, kind="stable").reset_index(drop=True)


def causes(departed: pd.DataFrame) -> pd.DataFrame:
    """Per switch, the departures it explains, per table and kind, sorted by cause; columns ``cause``, ``table``,
    ``departs``, ``departures``. A departure explained by two switches counts for each."""
    rows = [{"cause": c.strip(), "table": r.table, "departs": r.departs}
            for r in departed.itertuples() for c in r.cause.split(";")]
    frame = pd.DataFrame(rows, columns=["cause", "table", "departs"])
    return frame.groupby(["cause", "table", "departs"]).size().rename("departures").reset_index()


def finding(by_alternative: Mapping[str, pd.DataFrame], departed: pd.DataFrame, appendix_epsilon: float,
            baseline: str = BASELINE, combined: str = REFERENCE) -> str:
    """The counts of Δ within ×1.25 under the baseline and the combined choices, which switches explain how many
    departures, and what stays unexplained, with its ratios, as Markdown."""
    def within(name, which):
        median, low, high = count_values(by_alternative[name], which)
        n = int(by_alternative[name][by_alternative[name]["table"] == which].dropna(subset=["within"])
                .groupby("seed").size().max())
        return f"{median:g} ({low}–{high}) of {n}"

    seeds = by_alternative[baseline]["seed"].nunique()
    lines = [f"Over {counted(seeds, 'seed')}, our Δ lies within ×{effect_sizes.FACTOR:g} of the paper's in "
             f"{within(baseline, 'table1')} Table 1 cells and {within(baseline, 'appendix')} appendix cells "
             f"(ε = {appendix_epsilon:g}) under {baseline}, and in {within(combined, 'table1')} and "
             f"{within(combined, 'appendix')} under {combined}."]
    delta = departed[departed["departs"] == "Δ"]
    explained = delta[delta["cause"] != "unexplained"]
    table = causes(explained)
    if len(table):
        per_cause = table.groupby("cause", sort=False)["departures"].sum()
        lines.append(f"Of the {len(delta)} Δ departures under {baseline}, {len(explained)} move within the factor, "
                     "beyond the reseeded spread, when one choice changes (a departure that several changes move is "
                     "counted under each): " + "; ".join(f"{cause} {n}" for cause, n in per_cause.items()) + ".")
    else:
        lines.append(f"No change of one choice moves any of the {len(delta)} Δ departures under {baseline} "
                     "within the factor beyond the reseeded spread.")
    rest = delta[delta["cause"] == "unexplained"]
    if len(rest):
        by_run = rest.groupby("run", sort=False)["ratio"].agg(["size", "min", "max"])
        lines.append(f"{len(rest)} stay unexplained: " + "; ".join(
            f"{run} {int(r['size'])} " + (f"(ratio {r['min']:.2f})" if f"{r['min']:.2f}" == f"{r['max']:.2f}" else
                                          f"(ratios {r['min']:.2f} to {r['max']:.2f})")
            for run, r in by_run.iterrows())
            + ".")
    rules = departed[departed["departs"] != "Δ"]
    moved = rules[rules["cause"] != "unexplained"]
    lines.append(f"Of {len(rules)} best-K and budget departures ((cell, rule) pairs that fail in most seeds), "
                 f"{len(moved)} are explained: under some change of one choice the rule holds in every seed, where it "
                 f"fails in every seed under {baseline}.")
    return " ".join(lines)


def fitted_table(fitted: pd.DataFrame) -> tables.Table:
    """The cells stand-ins v3 are fitted on (:func:`analysis.paper.identities.v3_cells`) as the page shows them: the
    paper's tables and the metrics by their names, each cell's ``E[Σ p̂²]`` to three decimals."""
    shown = fitted[["table", "dataset", "sampler", "metric", "NK", "C", "sum_p2"]].assign(
        table=fitted["table"].map(TABLES), metric=fitted["metric"].map(METRIC_LABELS))
    return tables.Table(shown.rename(columns={"sum_p2": "E[Σ p̂²]"}).round(3), "the cells stand-ins v3 are fitted on")


def fitted_apart(by_alternative: Mapping[str, pd.DataFrame], fitted: pd.DataFrame) -> pd.DataFrame:
    """Per alternative and table, the count of Δ within the factor on the cells stand-ins v3 were fitted on and on
    every other (predicted) cell, ``median (min–max) of n`` over seeds. ``fitted``: the fit's cells, columns
    ``table``, ``dataset``, ``sampler``, ``metric`` (:func:`analysis.paper.identities.v3_cells`). Columns:
    ``alternative``, ``table``, ``fitted cells``, ``predicted cells``."""
    keys = ["table", "dataset", "sampler", "metric"]
    marked = set(map(tuple, fitted[keys].drop_duplicates().to_numpy()))
    rows = []
    for name, frame in by_alternative.items():
        judged = frame.dropna(subset=["within"])
        is_fitted = pd.Series([tuple(k) in marked for k in judged[keys].to_numpy()], index=judged.index)
        for which, label in TABLES.items():
            row = {"alternative": name, "table": label}
            for part, title in ((is_fitted, "fitted cells"), (~is_fitted, "predicted cells")):
                chosen = judged[part & (judged["table"] == which)]
                per_seed = chosen.groupby("seed")["within"].sum()
                n = int(chosen.groupby("seed").size().max()) if len(chosen) else 0
                row[title] = f"{_spread(per_seed)} of {n}" if n else "none"
            rows.append(row)
    return pd.DataFrame(rows, columns=["alternative", "table", "fitted cells", "predicted cells"])


def predicted_per_seed(by_alternative: Mapping[str, pd.DataFrame], fitted: pd.DataFrame) -> pd.DataFrame:
    """Per alternative and seed, the predicted cells (every cell but ``fitted``'s, both tables together) with Δ
    within the factor. Columns: ``alternative``, ``seed``, ``predicted``."""
    keys = ["table", "dataset", "sampler", "metric"]
    marked = set(map(tuple, fitted[keys].drop_duplicates().to_numpy()))
    rows = []
    for name, frame in by_alternative.items():
        judged = frame.dropna(subset=["within"])
        keep = [tuple(k) not in marked for k in judged[keys].to_numpy()]
        for seed, n in judged[keep].groupby("seed")["within"].sum().items():
            rows.append({"alternative": name, "seed": seed, "predicted": int(n)})
    return pd.DataFrame(rows, columns=["alternative", "seed", "predicted"])


def best_on_predicted(per_seed: pd.DataFrame, candidates: Iterable[str]) -> str:
    """Of ``candidates`` (the default first), the one the predicted cells favour (:func:`predicted_per_seed`):
    another candidate replaces the default only when it predicts more cells in every seed than the default does in
    any (beyond the reseeded spread); of several such, the one with the highest median."""
    counts = per_seed.groupby("alternative")["predicted"]
    low, high, median = counts.min(), counts.max(), counts.median()
    chosen = [c for c in candidates if c in median.index]
    default, others = chosen[0], chosen[1:]
    better = [c for c in others if low[c] > high[default]]
    return max(better, key=lambda c: (median[c], -others.index(c))) if better else default


def counts_sentence(counts: pd.DataFrame, alternatives: Iterable[str] | None = None) -> str:
    """:func:`counts_table` as one sentence: per alternative (those named in ``alternatives``, in their order, where
    given), its Δ count in Table 1 and in the appendix."""
    if alternatives is not None:
        order = [a for a in dict.fromkeys(alternatives) if a in set(counts["alternative"])]
        counts = counts.set_index("alternative").loc[order].reset_index()
    parts = []
    for name, group in counts.groupby("alternative", sort=False):
        by_table = group.set_index("table")[effect_sizes.WITHIN]
        parts.append(f"{name} {by_table.get('Table 1', 'no cell')} in Table 1 and "
                     f"{by_table.get('appendix', 'no cell')} in the appendix")
    return f"Cells with Δ within ×{effect_sizes.FACTOR:g} of the paper's, median (min–max) over seeds: " + \
        "; ".join(parts) + "."


def preferred_table(per_seed: pd.DataFrame, book: Choices) -> pd.DataFrame:
    """Per choice (:func:`choices_by_switch`) and value, the predicted cells within the factor as median (min–max)
    over seeds, and beside the value they favour (:func:`best_on_predicted`: the book's unless another beats it
    beyond the reseeded spread) ✓ where it beats every other value so, or "kept" where the book's is kept because
    none beats it, though it does not beat them all (a tie, or within the spread). Columns: ``choice``, ``value``,
    ``predicted cells``, ``favoured``."""
    counts = per_seed.groupby("alternative")["predicted"]
    spread = {name: f"{v.median():g} ({v.min()}–{v.max()})" for name, v in counts}
    low, high = counts.min(), counts.max()
    rows = []
    for switch, names in choices_by_switch(book).items():
        if not all(n in spread for n in names):
            continue
        best = best_on_predicted(per_seed, names)
        clear = all(low[best] > high[n] for n in names if n != best)
        rows += [{"choice": switch, "value": _value_words(book, switch, n), "predicted cells": spread[n],
                  "favoured": ("✓" if clear else "kept") if n == best else ""} for n in names]
    return pd.DataFrame(rows, columns=["choice", "value", "predicted cells", "favoured"])


def _value_words(book: Choices, switch_words: str, name: str) -> str:
    """An alternative's value of one choice in words; the book's own value for :data:`BASELINE`."""
    if name != BASELINE:
        return name
    switch = next(k for k, w in SWITCH_WORDS.items() if w == switch_words)
    return f"{VALUES[switch][getattr(book, switch)]} (the book's)"


def preferred_sentence(per_seed: pd.DataFrame, book: Choices) -> str:
    """:func:`preferred_table` in one sentence: the choices whose book's value the predicted cells favour, and those
    where another value beats it beyond the reseeded spread."""
    kept, moved = [], []
    for switch, names in choices_by_switch(book).items():
        if set(names) <= set(per_seed["alternative"]):
            best = best_on_predicted(per_seed, names)
            kept.append(switch) if best == BASELINE else moved.append(f"{switch}, {best}")
    parts = []
    if kept:
        listed = kept[0] if len(kept) == 1 else ", ".join(kept[:-1]) + " or " + kept[-1]
        parts.append(f"On the predicted cells, no other value beats the book's beyond the reseeded spread for {listed}.")
    if moved:
        parts.append("Another value beats the book's for: " + "; ".join(moved) + ".")
    return " ".join(parts)
