"""The paper's claims, each checked by one function under the written rules of :mod:`analysis.paper.verdicts`.

Every chapter that states a claim calls the same function: :func:`raters_raise_p_values` (RQ1, RQ3 and the
real-data chapter), :func:`modelling_shifts_budget_and_k` (RQ2), :func:`distribution_metrics_favour_large_k`
(RQ2 and the real-data chapter), :func:`batches_raise_budget` (RQ3) and :func:`few_raters_split_curves` (RQ4).
Each returns a :class:`analysis.paper.verdicts.Finding`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.paper import tables
from analysis.paper.effect_sizes import FEW_K
from analysis.experiment.table1 import table1
from analysis.engine.metrics import DISTRIBUTION_METRICS, METRIC_LABELS, METRICS, VOTE_METRICS
from analysis.paper.verdicts import (AGREES, DISAGREES, PARTLY, UNCHECKED,  # noqa: F401 (the verdicts)
                               CLAIMS, QUESTIONS, RULES, Finding, VerdictRule, SubClaim, _label, _names, _pct, _x,
                               data_words, over_seeds)
from analysis.wording import counted

# ------------------------------------------------------------------------------------------ the budget contrast

LARGER, SMALLER, EQUAL, NOT_COMPARABLE = "larger", "smaller", "equal", "not comparable"
PAPER_FLOOR = 100  # the paper's smallest budget


def budget_side(modelled, independent, floor: float) -> str:
    """How a metric's smallest significant budget under the modelled sampler compares with the other's.

    ``None``/NaN means never significant on the grid. Equal budgets at the grid's floor, and no budget on either
    side, are ``not comparable``: the grid cannot tell which sampler would need more there.
    """
    m, i = (None if pd.isna(v) else float(v) for v in (modelled, independent))
    if m is None and i is None:
        return NOT_COMPARABLE
    if m is None or i is None:
        return LARGER if m is None else SMALLER
    if m == i:
        return NOT_COMPARABLE if m <= floor else EQUAL
    return LARGER if m > i else SMALLER


def contrast(table: pd.DataFrame, floor: float) -> dict:
    """Counts of :func:`budget_side` over a :func:`tables.smallest_budgets`-shaped table (``metric``, ``NK_first``
    the modelled run, ``NK_second`` the other), and the budget ratios of the comparable metrics significant under
    both."""
    sides = {row.metric: budget_side(row.NK_first, row.NK_second, floor) for row in table.itertuples()}
    counts = {side: sum(v == side for v in sides.values()) for side in (LARGER, SMALLER, EQUAL, NOT_COMPARABLE)}
    ratios = {row.metric: float(row.NK_first) / float(row.NK_second) for row in table.itertuples()
              if sides[row.metric] in (LARGER, SMALLER, EQUAL) and not (pd.isna(row.NK_first)
                                                                       or pd.isna(row.NK_second))}
    short = [METRIC_LABELS[m] for m, v in sides.items() if v in (SMALLER, EQUAL)]
    floored = [METRIC_LABELS[m] for m, v in sides.items() if v == NOT_COMPARABLE]
    return {**counts, "compared": counts[LARGER] + counts[SMALLER] + counts[EQUAL], "ratios": ratios,
            "sides": sides, "short": short, "not_comparable_metrics": floored}


def contrast_text(c: dict) -> str:
    """``larger for 1, the same for 7, smaller for 0 of 8 metrics`` (with the metrics that are not comparable)."""
    if not c["compared"]:
        return "no metric comparable"
    text = (f"larger for {c[LARGER]}, the same for {c[EQUAL]}, smaller for {c[SMALLER]} of {c['compared']} "
            f"metric{'' if c['compared'] == 1 else 's'}")
    if c[NOT_COMPARABLE]:
        text += f" ({', '.join(c['not_comparable_metrics'])} not comparable)"
    return text


def paper_contrast(paper_dataset: str, modelled: str, independent: str, which: str = "table1") -> dict:
    """:func:`contrast` on the paper's table: how the sampler that models raters compares with the one that does
    not, by the smallest significant budget per metric (the paper's grid starts at NK = 100)."""
    table = tables.paper_table(which)
    table = table[table["dataset"] == paper_dataset].set_index(["sampler", "metric"])["NK"]
    rows = [{"metric": m, "NK_first": table[(modelled, m)], "NK_second": table[(independent, m)]}
            for m in METRICS if (modelled, m) in table.index and (independent, m) in table.index]
    found = contrast(pd.DataFrame(rows, columns=["metric", "NK_first", "NK_second"]), PAPER_FLOOR)
    return {"dataset": paper_dataset, "modelled": modelled, "independent": independent, **found}


def _paper_name(results: pd.DataFrame, run) -> str | None:
    return tables.imitated(results, tables.as_run(run)[0])


def _paper_subject(results: pd.DataFrame, modelled, independent) -> str:
    """The paper's name for a comparison (``DICES, S1 against S2``), "" where our data imitate none of its sets; a
    sampler the paper did not have (S4) is named as the book's, the paper's claim carried to it."""
    name = _paper_name(results, modelled)
    if not name:
        return ""
    modelled_sampler = tables.as_run(modelled)[1]
    words = f"{name}, {modelled_sampler} against {tables.as_run(independent)[1]}"
    return words + (" (the paper's general claim; it ran D3code under S2 alone)" if modelled_sampler == "S4" else "")


def _paper_contrast_for(results: pd.DataFrame, modelled, independent) -> dict | None:
    """:func:`paper_contrast` for the paper dataset a comparison's data are or imitate (``None`` for other data)."""
    name = _paper_name(results, modelled)
    if name is None:
        return None
    found = paper_contrast(name, tables.as_run(modelled)[1], tables.as_run(independent)[1])
    return found if found["compared"] else None


def our_contrast(results: pd.DataFrame, modelled, independent, epsilon: float) -> dict:
    """:func:`contrast` on our runs, the floor being the smallest budget they simulated."""
    floor = float(pd.concat([tables.select(results, r, epsilon) for r in (modelled, independent)])["NK"].min())
    return contrast(tables.smallest_budgets(results, modelled, independent, epsilon), floor)


def _needs_more_claim(rule: VerdictRule, results, modelled, independent, epsilon: float) -> SubClaim:
    """The "needs a larger budget" rule (RQ1's, RQ2's and RQ3's alike) on one comparison, with the paper's count
    for the data it is or imitates."""
    ours, paper = our_contrast(results, modelled, independent, epsilon), _paper_contrast_for(
        results, modelled, independent)
    return SubClaim(rule, contrast_text(paper) if paper else "larger (its RQ1 and RQ3 answers)", contrast_text(ours),
                    ours[LARGER] > ours[SMALLER] if ours["compared"] else None, _label(modelled),
                    _paper_subject(results, modelled, independent))


def _budget_size_claim(rule: VerdictRule, results, modelled, independent, epsilon: float) -> SubClaim | None:
    """The "budget ratio as the paper's" rule on one comparison (``None`` where the paper gives no budgets for its
    data): our median ratio within the range of the paper's per-metric ratios."""
    paper = _paper_contrast_for(results, modelled, independent)
    if paper is None or not paper["ratios"]:
        return None
    low, high = min(paper["ratios"].values()), max(paper["ratios"].values())
    ours = list(our_contrast(results, modelled, independent, epsilon)["ratios"].values())
    median = float(np.median(ours)) if ours else float("nan")
    span = _x(low) if low == high else f"{_x(low)} to {_x(high)}"
    return SubClaim(rule, f"{span} over {counted(len(paper['ratios']), 'metric')}",
                    f"median {_x(median)} over {counted(len(ours), 'metric')}" if ours else
                    "no metric significant under both",
                    bool(low <= median <= high) if ours else None, _label(modelled),
                    _paper_subject(results, modelled, independent))


# ------------------------------------------------------------------------------------------ claims

def paper_rq1() -> str:
    d, t = paper_contrast("DICES", "S1", "S2"), paper_contrast("Toxicity", "S3", "S2")
    return ("Yes: the samplers that model raters give higher p-values (its Figures 1 and 2; on DICES, Accuracy at "
            "NK = 5,000 has p 0.045 under S1 and 0.019 under S2) and need larger budgets. By its Table 1 (ε = 0.3), "
            f"the smallest significant budget is {contrast_text(d)} on DICES (S1 against S2), and "
            f"{contrast_text(t)} on Toxicity (S3 against S2).")


NO_COMPARISON = "The data have no design that allows a sampler comparison (a sparse design only admits S2)."


def raters_raise_p_values(results: pd.DataFrame | None, comparisons, epsilon: float,
                          missing: str = NO_COMPARISON) -> Finding:
    """RQ1's claim: the sampler that models raters across items gives higher p-values and needs larger budgets.

    ``comparisons`` is a list of ``(modelled_run, independent_run)`` pairs, each run a ``(dataset, sampler)``.
    Rules (:data:`RULES` ``["rq1"]``), per comparison: *higher p-values* (main) holds when, among the
    (NK, K, metric) cells where the two p-values differ, the modelled run's is the higher in more than half and the
    median difference is not negative; *needs a larger budget* holds when more metrics need a larger smallest
    significant budget under the modelled run than a smaller one (:func:`budget_side`; RQ3 applies the same rule).
    "Cannot be checked" without a comparison (``missing`` then says what is missing).
    """
    comparisons = list(comparisons or [])
    if results is None or not len(results) or not comparisons:
        return Finding(QUESTIONS["rq1"], paper_rq1(), missing or "No sampler comparison ran, so this run says nothing.",
                       UNCHECKED, {"comparisons": 0}, claim=CLAIMS["rq1"])
    higher, budget = RULES["rq1"]
    rows, parts, claims = [], [], []
    for modelled, independent in comparisons:
        stats = tables.compare_runs(results, modelled, independent, epsilon)
        found = our_contrast(results, modelled, independent, epsilon)
        holds = stats["differing"] > 0 and stats["share_higher"] > 0.5 and stats["median_difference"] >= 0
        rows.append({"modelled": tables.as_run(modelled), "independent": tables.as_run(independent),
                     **stats, "contrast": found, "holds": holds})
        claims.append(SubClaim(higher, "higher (its Figures 1 and 2)",
                               f"higher in {_pct(stats['share_higher'])} of {stats['differing']:,} differing cells"
                               if stats["differing"] else "the same in every cell", holds, _label(modelled),
                               _paper_subject(results, modelled, independent)))
        claims.append(_needs_more_claim(budget, results, modelled, independent, epsilon))
        budget_part = f"its smallest significant budget is {contrast_text(found)}"
        if stats["differing"]:
            parts.append(f"{_label(modelled)} gives the higher p-value in {_pct(stats['share_higher'])} of the "
                         f"{stats['differing']:,} cells where it differs from {tables.as_run(independent)[1]} "
                         f"(median difference {stats['median_difference']:+.3f}); {budget_part}")
        else:
            parts.append(f"{_label(modelled)} gives the same p-value as {tables.as_run(independent)[1]} in all "
                         f"{stats['cells']:,} cells")
    held = sum(r["holds"] for r in rows)
    ours = (f"At ε = {epsilon:g}: " + "; ".join(parts) + ". " +
            (f"Modelling raters raises the p-values {'in every comparison' if len(rows) > 1 else 'here'}."
             if held == len(rows) else
             f"Modelling raters raises the p-values in {held} of {len(rows)} comparisons." if held else
             "Modelling raters does not raise the p-values here.")
            + beyond_sentence(results, epsilon))  # the budget sub-claim counts those designs too
    return Finding(QUESTIONS["rq1"], paper_rq1(), ours, None, {"comparisons": rows, "held": held}, claims,
                   CLAIMS["rq1"])


def k_shift(table: pd.DataFrame) -> tuple[int, int]:
    """Over the metrics of a :func:`tables.smallest_budgets`-shaped table significant under both runs: for how
    many the best K is larger under the modelled run, and for how many smaller."""
    both = table.dropna(subset=["K_first", "K_second"])
    return int((both["K_first"] > both["K_second"]).sum()), int((both["K_first"] < both["K_second"]).sum())


def paper_k_shift() -> tuple[int, int]:
    """:func:`k_shift` on the paper's Table 1, DICES (S1 against S2) and Toxicity (S3 against S2) together."""
    table = tables.paper_table()
    up = down = 0
    for dataset, modelled in (("DICES", "S1"), ("Toxicity", "S3")):
        chosen = table[table["dataset"] == dataset].set_index(["sampler", "metric"])
        pairs = pd.DataFrame({"K_first": chosen.loc[modelled, "K"], "K_second": chosen.loc["S2", "K"]}).astype(float)
        u, d = k_shift(pairs)
        up, down = up + u, down + d
    return up, down


def modelling_shifts_budget_and_k(results: pd.DataFrame | None, comparisons, epsilon: float,
                                  missing: str = NO_COMPARISON) -> Finding:
    """RQ2's claim: modelling raters raises the smallest significant budget, and the best K with it.

    Rules (:data:`RULES` ``["rq2"]``): per comparison, *needs a larger budget* (main; RQ1's rule) and, on data that
    are or imitate the paper's, *budget ratio as the paper's* (our median ratio of smallest significant budgets
    within the range of the paper's per-metric ratios: ×1 on DICES, where 7 of 7 budgets stay equal, ×2 to ×5 on
    Toxicity); over all comparisons, *best K larger* (larger under the modelled sampler for more metrics than it is
    smaller).
    """
    d, t = paper_contrast("DICES", "S1", "S2"), paper_contrast("Toxicity", "S3", "S2")
    k_up, k_down = paper_k_shift()
    paper = ("Modelling raters raises the budget needed for significance, and the best K with it: for MAE the best K "
             "moves from 40 (S2) to 100 (S1) on DICES and from 9 (S2) to 20 (S3) on Toxicity. By its Table 1 "
             f"(ε = 0.3) the budget is {contrast_text(d)} on DICES and {contrast_text(t)} on Toxicity, and the best K "
             f"is larger for {k_up} metrics and smaller for {k_down} over both.")
    comparisons = list(comparisons or [])
    if results is None or not len(results) or not comparisons:
        return Finding(QUESTIONS["rq2"], paper, missing or "No sampler comparison ran.", UNCHECKED,
                       claim=CLAIMS["rq2"])
    main, size_rule, k_rule = RULES["rq2"]
    larger_k = smaller_k = both = 0
    parts, claims = [], []
    for modelled, independent in comparisons:
        table = tables.smallest_budgets(results, modelled, independent, epsilon)
        up_k, down_k = k_shift(table)
        larger_k, smaller_k = larger_k + up_k, smaller_k + down_k
        both += int(table.dropna(subset=["K_first", "K_second"]).shape[0])
        claims.append(_needs_more_claim(main, results, modelled, independent, epsilon))
        size = _budget_size_claim(size_rule, results, modelled, independent, epsilon)
        claims += [size] if size is not None else []
        found = our_contrast(results, modelled, independent, epsilon)
        ratios = list(found["ratios"].values())
        parts.append(f"{_label(modelled)} against {tables.as_run(independent)[1]}: the budget is "
                     f"{contrast_text(found)}, the best K larger for {up_k} and smaller for {down_k}"
                     + (f" (median budget ratio {np.median(ratios):.2f})" if ratios else ""))
    claims.append(SubClaim(k_rule, f"larger for {k_up}, smaller for {k_down} (MAE: 40 → 100 on DICES, 9 → 20 on "
                           "Toxicity)", f"larger for {larger_k}, smaller for {smaller_k}",
                           larger_k > smaller_k if both else None))
    compared = pd.concat([tables.select(results, run) for pair in comparisons for run in pair])
    ours = f"At ε = {epsilon:g}: " + "; ".join(parts) + "." + beyond_sentence(compared, epsilon)
    return Finding(QUESTIONS["rq2"], paper, ours, None,
                   {"larger_k": larger_k, "smaller_k": smaller_k, "both": both}, claims, CLAIMS["rq2"])


def _family_runs(results: pd.DataFrame) -> pd.DataFrame:
    """The runs the family claim is about: S2 on data that are or imitate DICES or D3code, as in the paper; else
    every S2 run; else every run."""
    s2 = results[results["sampler"] == "S2"]
    paper = s2[[tables.imitated(results, d) in ("DICES", "D3code") for d in s2["dataset"]]]
    return paper if len(paper) else s2 if len(s2) else results


def paper_families() -> dict:
    """From the paper's Table 1 under S2 on DICES and D3code: the distribution metrics' budgets and best K (range
    and median) and the vote metrics' (median and smallest budget)."""
    paper_s2 = tables.paper_table().query("sampler == 'S2' and dataset in ['DICES', 'D3code']").dropna(subset=["NK"])
    dist, vote = (paper_s2[paper_s2["metric"].isin(m)] for m in (DISTRIBUTION_METRICS, VOTE_METRICS))
    return {"dist_nk": float(dist["NK"].median()), "dist_nk_range": (float(dist["NK"].min()), float(dist["NK"].max())),
            "dist_k": float(dist["K"].median()), "dist_k_range": (float(dist["K"].min()), float(dist["K"].max())),
            "vote_nk": float(vote["NK"].median()), "vote_nk_min": float(vote["NK"].min()),
            "vote_k": float(vote["K"].median())}


def beyond_sentence(results: pd.DataFrame, epsilon: float) -> str:
    """A sentence naming the (run, metric) pairs whose Table 1 design the data cannot supply (``beyond_data``), with
    a leading space; empty when there are none."""
    summary = table1(results[np.isclose(results["epsilon"], epsilon)])
    if "beyond_data" not in summary or not summary["beyond_data"].any():
        return ""
    beyond = summary[summary["beyond_data"]]
    pairs = ", ".join(f"{METRIC_LABELS[r.metric]} on {_label((r.dataset, r.sampler))} "
                      f"(N {r.NK // r.K:,} × K {r.K})" for r in beyond.itertuples())
    one = len(beyond) == 1
    return (f" {len(beyond)} of these (run, metric) pairs {'rests' if one else 'rest'} on a design the data cannot "
            f"supply, K above the raters a drawn item comes from ({tables.WHOSE_RATERS}) or N above the items, so "
            f"{'its' if one else 'their'} smallest significant design is an extrapolation: {pairs}.")


def distribution_metrics_favour_large_k(results: pd.DataFrame | None, epsilon: float, missing: str = "") -> Finding:
    """RQ2's second observation: distribution metrics reach significance at a smaller budget with a larger K.

    The paper states it under S2 on DICES and D3code, so only those runs count (:func:`_family_runs`). On the
    Table 1 rule, the median best K and the median smallest budget of the distribution metrics (MAE, Wins, KL-Div,
    JSD) are set against those of the vote metrics. Rules (:data:`RULES` ``["distribution"]``): *smaller budget*
    (main), *larger best K*, and, on data that are or imitate DICES or D3code, the paper's sizes: *distribution
    budget as the paper's* (within the paper's 1,000 to 2,500), *vote budget as the paper's* (at least 2,500) and
    *best K from 40 to 100*.
    """
    p = paper_families()
    paper = (f"Under S2 on DICES and D3code, distribution-sensitive metrics reach significance at a smaller budget "
             f"(median NK {p['dist_nk']:,.0f}; {p['dist_nk_range'][0]:,.0f} to {p['dist_nk_range'][1]:,.0f}) with a "
             f"larger K ({p['dist_k_range'][0]:.0f} to {p['dist_k_range'][1]:.0f}) than the vote metrics (NK "
             f"{p['vote_nk_min']:,.0f} or more, median {p['vote_nk']:,.0f}; median K {p['vote_k']:g}) (Table 1, "
             "ε = 0.3).")
    if results is None or not len(results):
        return Finding(QUESTIONS["distribution"], paper, missing or "No run to compare.", UNCHECKED,
                       claim=CLAIMS["distribution"])
    chosen = _family_runs(results)
    med = tables.family_medians(chosen, epsilon)
    if not med["vote"]["n"] or not med["distribution"]["n"]:
        none = [f for f in ("vote", "distribution") if not med[f]["n"]]
        return Finding(QUESTIONS["distribution"], paper,
                       f"At ε = {epsilon:g}, no {' or '.join(none)} metric reaches significance on this grid, so "
                       "the two families cannot be compared.", UNCHECKED, med, claim=CLAIMS["distribution"])
    budget, dist_size, vote_size, k_larger, k_range, vote_k = RULES["distribution"]
    o = {"dist_nk": med["distribution"]["NK"], "dist_k": med["distribution"]["K"], "vote_nk": med["vote"]["NK"],
         "vote_k": med["vote"]["K"]}
    names = sorted({tables.imitated(results, d) for d in chosen["dataset"]} - {None})
    subject = " and ".join(n for n in names if n in ("DICES", "D3code"))
    paper_subject = f"{subject}, S2" if subject else ""
    # both families at the grid's smallest budget: the grid cannot tell which needs less (RQ1's floor rule)
    floor = float(chosen.loc[np.isclose(chosen["epsilon"], epsilon), "NK"].min())
    floored = o["dist_nk"] <= floor and o["vote_nk"] <= floor
    claims = [SubClaim(budget, f"{p['dist_nk']:,.0f} against {p['vote_nk']:,.0f}",
                       f"{o['dist_nk']:,.0f} against {o['vote_nk']:,.0f}"
                       + (", both at the grid's smallest budget: not comparable" if floored else ""),
                       None if floored else o["dist_nk"] < o["vote_nk"], paper_subject=paper_subject),
              SubClaim(k_larger, f"{p['dist_k']:g} against {p['vote_k']:g}", f"{o['dist_k']:g} against "
                       f"{o['vote_k']:g}", o["dist_k"] > o["vote_k"], paper_subject=paper_subject)]
    if subject:  # the paper's sizes, on its data only
        low, high = p["dist_nk_range"]
        claims += [
            SubClaim(dist_size, f"{low:,.0f} to {high:,.0f}", f"median {o['dist_nk']:,.0f}",
                     bool(low <= o["dist_nk"] <= high), paper_subject=paper_subject),
            SubClaim(vote_size, f"{p['vote_nk_min']:,.0f} or more", f"median {o['vote_nk']:,.0f}",
                     bool(o["vote_nk"] >= p["vote_nk_min"]), paper_subject=paper_subject),
            SubClaim(k_range, f"{p['dist_k_range'][0]:.0f} to {p['dist_k_range'][1]:.0f}",
                     f"median {o['dist_k']:g}", bool(o["dist_k"] >= p["dist_k_range"][0]),
                     paper_subject=paper_subject),
            SubClaim(vote_k, f"median {p['vote_k']:g}", f"median {o['vote_k']:g}",
                     bool((o["vote_k"] > FEW_K) == (p["vote_k"] > FEW_K)), paper_subject=paper_subject)]
    runs = ", ".join(_label(r) for r in tables.runs(chosen))
    ours = (f"At ε = {epsilon:g}, on {runs} ({med['pairs']} (run, metric) pairs): the distribution metrics reach "
            f"significance at a median budget of {o['dist_nk']:,.0f} with a median best K of {o['dist_k']:g} "
            f"({med['distribution']['n']} pairs significant); the vote metrics at {o['vote_nk']:,.0f} with K "
            f"{o['vote_k']:g} ({med['vote']['n']} pairs).{beyond_sentence(chosen, epsilon)}"
            + (f" Both families reach significance at the grid's smallest budget, NK {floor:,.0f}, so this grid "
               "cannot tell which needs less; a grid with smaller budgets can." if floored else ""))
    return Finding(QUESTIONS["distribution"], paper, ours, None, med, claims, CLAIMS["distribution"])


def budget_moves(paper_dataset: str, first: str, second: str) -> str:
    """How the paper's smallest significant budgets move from sampler ``first`` to ``second`` on one of its
    datasets, read from its Table 1: ``NK 500 under S2 becomes 1,000 (F1-Score, JSD) or 2,500 (...) under S3``."""
    table = tables.paper_table().query("dataset == @paper_dataset").pivot(index="metric", columns="sampler",
                                                                          values="NK").dropna()
    parts = []
    for before, group in table.groupby(first, sort=True):
        targets = [f"{after:,.0f} ({', '.join(METRIC_LABELS[m] for m in sorted(g.index, key=METRICS.index))})"
                   for after, g in group.groupby(second, sort=True)]
        parts.append(f"NK {before:,.0f} under {first} becomes {' or '.join(targets)} under {second}")
    return "; ".join(parts)


def batches_raise_budget(results: pd.DataFrame | None, modelled, independent, epsilon: float,
                         missing: str = "") -> Finding:
    """RQ3's claim: with distinct rater sets per batch (S3), a larger budget is needed than under S2.

    Rules (:data:`RULES` ``["rq3"]``): *needs a larger budget* (main; RQ1's rule, :func:`budget_side`, so that the
    same comparison gets the same count in both chapters), *for every metric* (every comparable metric; the
    paper: 8 of 8), *budget ratio as the paper's* (on data that are or imitate Toxicity, our median ratio within
    the paper's ×2 to ×5) and *wider null* (median ratio of null standard deviations above 1).
    """
    t = paper_contrast("Toxicity", "S3", "S2")
    ratios = sorted(t["ratios"].values())
    paper = (f"Distinct rater sets add batch-specific variance, so a larger budget is needed: on Toxicity, S3's "
             f"smallest significant budget is {contrast_text(t)} against S2's, by a factor of {min(ratios):g} to "
             f"{max(ratios):g} (Table 1, ε = 0.3: {budget_moves('Toxicity', 'S2', 'S3')}).")
    if results is None or not len(results) or modelled is None:
        return Finding(QUESTIONS["rq3"], paper, missing or "No batched dataset ran.", UNCHECKED, claim=CLAIMS["rq3"])
    found = our_contrast(results, modelled, independent, epsilon)
    if not found["compared"]:
        return Finding(QUESTIONS["rq3"], paper, f"At ε = {epsilon:g}, no metric is comparable between the two "
                       "samplers on this grid (none significant, or all at its smallest budget under both), so the "
                       "budgets cannot be compared.", UNCHECKED, claim=CLAIMS["rq3"])
    spread = tables.null_spread_ratio(results, modelled, independent, epsilon)
    wider = float(spread.median()) if len(spread) else float("nan")
    main, every, size_rule, null = RULES["rq3"]
    paper_subject = _paper_subject(results, modelled, independent)
    claims = [_needs_more_claim(main, results, modelled, independent, epsilon),
              SubClaim(every, f"{t[LARGER]} of {t['compared']}", f"{found[LARGER]} of {found['compared']}" +
                       (f"; not {', '.join(found['short'])}" if found["short"] else ""),
                       found[LARGER] == found["compared"], paper_subject=paper_subject)]
    size = _budget_size_claim(size_rule, results, modelled, independent, epsilon)
    claims += [size] if size is not None else []
    claims.append(SubClaim(null, "wider (no number)", f"null sd {_x(wider)} {tables.as_run(independent)[1]}'s "
                           "(median over cells and metrics)" if len(spread) else "not measured",
                           wider > 1 if len(spread) else None, paper_subject=paper_subject))
    ratio_list = list(found["ratios"].values())
    ours = (f"At ε = {epsilon:g}, {_label(modelled)}'s smallest significant budget is {contrast_text(found)} "
            f"against {tables.as_run(independent)[1]}'s"
            + (f" (median ratio {np.median(ratio_list):.2f})" if ratio_list else "")
            + (f"; its null distribution is {wider:.2f} times as wide (median over cells and metrics)."
               if len(spread) else "."))
    return Finding(QUESTIONS["rq3"], paper, ours, None,
                   {**{k: found[k] for k in (LARGER, SMALLER, EQUAL, NOT_COMPARABLE, "compared")}, "spread": wider,
                    "median_ratio": float(np.median(ratio_list)) if ratio_list else None}, claims, CLAIMS["rq3"])


FEW_RATERS_LIMIT = ("In this simulation the gold standard G and model A both resample the same {n} raters' "
                    "responses, so a K above {n} repeats their opinions, and a small p-value on the cut pool says "
                    "that A is closer than B to those {n} raters, not to the population they were drawn from. What "
                    "raters beyond the {n} would change cannot be measured by resampling them.")


def few_raters_split_curves(results: pd.DataFrame | None, full: str | None, cut: str | None, samplers,
                            epsilon: float, n_raters: int, toxicity: str | None = None,
                            missing: str = "") -> Finding:
    """RQ4's claim: with a few raters, the p-value curves of different K lie further apart, as on Toxicity.

    ``full`` and ``cut`` name the two datasets, ``samplers`` the samplers both ran under (S1 and S2 on DICES), and
    ``toxicity`` the Toxicity data (or its stand-in) run under S2, the sampler both designs allow. The spread of a
    run is the median, over metrics and budgets, of the range of p-values across K. Rules (:data:`RULES`
    ``["rq4"]``): *K curves further apart* (main, one per sampler, since the paper does not say which its Figure 3
    shows): the cut run's spread is larger than the full run's; *like Toxicity*: under S2 the cut run's spread is
    closer to Toxicity's than to the full run's; *Toxicity's curves apart too*: Toxicity's is larger than the full
    run's. The closing advice follows the measured spreads and states what resampling a few raters cannot show.
    """
    paper = ("With DICES cut to 5 raters, the p-values behave like those of the Toxicity data, and the p-values across "
             "budgets show a separation in both, which the paper puts down to the small number of raters (Figure 3; "
             "no number for the separation, and no budgets for the cut data; that the separation is one between the "
             "curves of different K is the book's reading). It recommends collecting more annotators per item.")
    if results is None or not len(results) or full is None or cut is None or not samplers:
        return Finding(QUESTIONS["rq4"], paper, missing or "No cut dataset ran.", UNCHECKED, claim=CLAIMS["rq4"])
    further, like, apart = RULES["rq4"]
    claims, parts, numbers = [], [], {}
    for sampler in samplers:
        spread = {name: tables.curve_spread(results, (name, sampler), epsilon) for name in (full, cut)}
        measured = not any(np.isnan(v) for v in spread.values())
        claims.append(SubClaim(further, "“a separation” (Figure 3; no full-pool curves)",
                               f"median range of p across K {spread[full]:.3f} with all raters → "
                               f"{spread[cut]:.3f} with {n_raters}" if measured else "not measured",
                               spread[cut] > spread[full] if measured else None, sampler, f"DICES-5, {sampler}"))
        if measured:
            numbers[sampler] = spread
            parts.append(f"under {sampler}, the median range of p-values across K is {spread[full]:.3f} with all "
                         f"raters and {spread[cut]:.3f} with {n_raters}")
    if not parts:
        return Finding(QUESTIONS["rq4"], paper, "The runs share no cell, so the spreads cannot be compared.",
                       UNCHECKED, claim=CLAIMS["rq4"])
    tox = tables.curve_spread(results, (toxicity, "S2"), epsilon) if toxicity else float("nan")
    s2 = numbers.get("S2")
    measured = s2 is not None and not np.isnan(tox)
    claims.append(SubClaim(like, "“behave similarly” (Figure 3)", f"{s2[cut]:.3f} against {tox:.3f} (Toxicity) and "
                           f"{s2[full]:.3f} (all raters)" if measured else "not measured",
                           abs(s2[cut] - tox) < abs(s2[cut] - s2[full]) if measured else None, "S2",
                           "DICES-5 and Toxicity, S2"))
    claims.append(SubClaim(apart, "“a separation” (Figure 3; no full-pool curves)", f"{tox:.3f} against {s2[full]:.3f}" if measured
                           else "not measured", tox > s2[full] if measured else None, "S2",
                           "Toxicity and DICES, S2"))
    if measured:
        parts.append(f"on Toxicity (S2) it is {tox:.3f}")
        numbers["toxicity"] = tox
    apart_cut = [s for s, v in numbers.items() if s != "toxicity" and v[cut] > v[full]]
    closer_cut = [s for s, v in numbers.items() if s != "toxicity" and v[cut] < v[full]]
    advice = (f" So with {n_raters} raters the split of a budget between items and ratings per item moves the "
              f"p-value more than with all raters under {_names(apart_cut)}: with a small pool, K has to be chosen "
              "with care." if apart_cut else "")
    if closer_cut:
        advice += (f" Under {_names(closer_cut)} cutting the pool brings the K curves closer together, the opposite "
                   "of the paper's explanation that few raters pull them apart.")
    if tox == tox and s2 is not None and tox < s2[full]:
        advice += (" Toxicity's curves lie closer together than those of DICES with all raters, which the paper's "
                   "explanation does not lead one to expect either.")
    ours = (f"At ε = {epsilon:g}: " + "; ".join(parts) + "." + advice + " "
            + FEW_RATERS_LIMIT.format(n=n_raters))
    return Finding(QUESTIONS["rq4"], paper, ours, None, numbers, claims, CLAIMS["rq4"])


MARGIN_SEEDS = 2  # further seeds, besides the chapter's own: three in all
MARGIN_SHRINK = 4  # the further seeds run a quarter of the chapter's replicates, at its ε only


def margin_results(book, pairs, budgets=None, ks=None) -> dict:
    """The chapter's runs on :data:`MARGIN_SEEDS` further seeds (seed + 1, …), for the verdicts' margins, keyed by
    seed. They run at the chapter's ε only, with 1/:data:`MARGIN_SHRINK` of its replicates, on the chapter's grid or
    on the ``budgets`` and ``ks`` of a section that runs fewer: enough to show on which side of each rule a
    sub-claim falls, at a fraction of the grid's cost (their cells are cached like any other, so chapters that
    share runs share them)."""
    if not pairs:
        return {}
    seed, n = book.params["seed"], max(1, book.params["n_samples"] // MARGIN_SHRINK)
    return {seed + i: book.simulate(pairs, epsilons=[book.epsilon], seed=seed + i, n_samples=n, budgets=budgets,
                                    ks=ks) for i in range(1, MARGIN_SEEDS + 1)}


def with_margin(check, results: pd.DataFrame, seed: int, extra: dict) -> Finding:
    """``check`` (a claim function of one results table) on this run, with its margin over the seeds of ``extra``
    (:func:`margin_results`): see :func:`analysis.paper.verdicts.over_seeds`; its words say where the runs were
    drawn from synthetic stand-ins (:func:`analysis.paper.verdicts.data_words`)."""
    finding = over_seeds(check(results), seed, {s: check(r) for s, r in extra.items()})
    if results is not None and "origin" in results:  # None: no data, no run
        finding.data = data_words(results["origin"].dropna())
    return finding


def summary(checks: list[tuple[str, Finding]]) -> str:
    """A chapter's closing list of the claims it checked, as Markdown; one sentence when it could check none."""
    checked = [(label, f) for label, f in checks if f.checked]
    if not checked:
        return ("No claim could be checked on this run: the datasets it needs are not in the dataset cache. Run "
                "`make data` and rebuild the book to check them.")
    lines = [f"- **{label}**: our run {f.verdict_phrase()}. {f.ours}" for label, f in checked]
    skipped = [label for label, f in checks if not f.checked]
    if skipped:
        lines.append(f"- Not checked, for lack of data: {', '.join(skipped)}.")
    return "\n".join(lines)
