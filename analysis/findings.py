"""The paper's claims, each checked by one function under the written rules of :mod:`analysis.verdicts`.

Every chapter that states a claim calls the same function: :func:`raters_raise_p_values` (RQ1, RQ3 and the
real-data chapter), :func:`modelling_shifts_budget_and_k` (RQ2), :func:`distribution_metrics_favour_large_k`
(RQ2 and the real-data chapter), :func:`batches_raise_budget` (RQ3) and :func:`few_raters_split_curves` (RQ4).
Each returns a :class:`analysis.verdicts.Finding`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis import tables
from analysis.metrics import DISTRIBUTION_METRICS, METRIC_LABELS, METRICS, VOTE_METRICS
from analysis.verdicts import (AGREES, BUDGET_SIZE, DISAGREES, PARTLY, UNCHECKED,  # noqa: F401 (the verdicts)
                               CLAIMS, QUESTIONS, RULES, Finding, Rule, SubClaim, _k_class, _label, _names, _pct,
                               _within, _x)

# ------------------------------------------------------------------------------------------ the paper's numbers

def paper_contrast(paper_dataset: str, modelled: str, independent: str, which: str = "table1") -> dict:
    """From the paper's table, how often the sampler that models raters "needs more" than the one that does not.

    A metric needs more when its smallest significant budget is larger, or equal with a higher p-value, or when
    only the independent sampler reaches significance. Returns counts and the per-metric budget ratios.
    """
    table = tables.paper_table(which)
    table = table[table["dataset"] == paper_dataset].set_index(["sampler", "metric"])
    more, compared, ratios = 0, 0, {}
    for metric in METRICS:
        if (modelled, metric) not in table.index or (independent, metric) not in table.index:
            continue
        m, i = table.loc[(modelled, metric)], table.loc[(independent, metric)]
        if pd.isna(m["NK"]) and pd.isna(i["NK"]):
            continue
        compared += 1
        if pd.isna(m["NK"]) or (not pd.isna(i["NK"]) and (m["NK"] > i["NK"] or (
                m["NK"] == i["NK"] and m["p_value"] > i["p_value"]))):
            more += 1
        if not (pd.isna(m["NK"]) or pd.isna(i["NK"])):
            ratios[metric] = float(m["NK"]) / float(i["NK"])
    return {"dataset": paper_dataset, "modelled": modelled, "independent": independent, "needs_more": more,
            "compared": compared, "ratios": ratios}


def _paper_contrast_for(results: pd.DataFrame, modelled, independent) -> dict | None:
    """:func:`paper_contrast` for the paper dataset a comparison's data are or imitate (``None`` for other data)."""
    paper_name = tables._imitated(results, tables._as_run(modelled)[0])
    if paper_name is None:
        return None
    found = paper_contrast(paper_name, tables._as_run(modelled)[1], tables._as_run(independent)[1])
    return found if found["compared"] else None


def _our_contrast(results: pd.DataFrame, modelled, independent, epsilon: float) -> dict:
    """The same count as :func:`paper_contrast`, on our Table 1."""
    budgets = tables.smallest_budgets(results, modelled, independent, epsilon)
    summary = tables.table1(pd.concat([tables.select(results, modelled, epsilon),
                                       tables.select(results, independent, epsilon)]))
    p = summary.set_index(["dataset", "sampler", "metric"])["p_value"]
    more = compared = 0
    for row in budgets.itertuples():
        m, i = row.NK_first, row.NK_second
        if pd.isna(m) and pd.isna(i):
            continue
        compared += 1
        if pd.isna(m) or (not pd.isna(i) and (m > i or (m == i and p[(*tables._as_run(modelled), row.metric)]
                                                        > p[(*tables._as_run(independent), row.metric)]))):
            more += 1
    return {"needs_more": more, "compared": compared}


def _needs_more_claim(rule: Rule, results, modelled, independent, epsilon: float) -> SubClaim:
    """:data:`NEEDS_MORE` (or its main twin in RQ2) on one comparison, against the paper's count for its data."""
    ours, paper = _our_contrast(results, modelled, independent, epsilon), _paper_contrast_for(
        results, modelled, independent)
    return SubClaim(rule, f"{paper['needs_more']} of {paper['compared']} metrics" if paper else
                    "more for most metrics (its Discussion)",
                    f"{ours['needs_more']} of {ours['compared']}" if ours["compared"] else "no metric significant",
                    2 * ours["needs_more"] > ours["compared"] if ours["compared"] else None, _label(modelled))


def _budget_size_claim(results, modelled, independent, epsilon: float) -> SubClaim | None:
    """:data:`BUDGET_SIZE` on one comparison (``None`` when the paper gives no budgets for its data)."""
    paper = _paper_contrast_for(results, modelled, independent)
    if paper is None or not paper["ratios"]:
        return None
    paper_ratio = float(np.median(list(paper["ratios"].values())))
    ours = tables.smallest_budgets(results, modelled, independent, epsilon)["ratio"].dropna().astype(float)
    equal = sum(r == 1 for r in paper["ratios"].values())
    return SubClaim(BUDGET_SIZE, f"median {_x(paper_ratio)} ({equal} of {len(paper['ratios'])} equal)",
                    f"median {_x(ours.median())} ({int((ours == 1).sum())} of {len(ours)} equal)" if len(ours)
                    else "no metric significant under both",
                    _within(float(ours.median()), paper_ratio) if len(ours) else None, _label(modelled))


# ------------------------------------------------------------------------------------------ claims

PAPER_RQ1 = ("Yes. Under S2 the p-values are lower than under S1 on DICES (Accuracy at NK = 5,000: 0.045 under S1, "
             "0.019 under S2), and S3 needs a larger budget than S2 on Toxicity. By the paper's Table 1 (ε = 0.3), the sampler "
             "that models raters needs more (a larger smallest significant budget, or a higher p-value at the same "
             "budget) for {dices} of {dices_n} metrics on DICES (S1 against S2) and {tox} of {tox_n} on Toxicity "
             "(S3 against S2).")


def paper_rq1() -> str:
    d = paper_contrast("DICES", "S1", "S2")
    t = paper_contrast("Toxicity", "S3", "S2")
    return PAPER_RQ1.format(dices=d["needs_more"], dices_n=d["compared"], tox=t["needs_more"], tox_n=t["compared"])


NO_COMPARISON = "The data have no design that allows a sampler comparison (a sparse design only admits S2)."


def raters_raise_p_values(results: pd.DataFrame | None, comparisons, epsilon: float,
                          missing: str = NO_COMPARISON) -> Finding:
    """RQ1's claim: the sampler that models raters across items gives higher p-values and needs larger budgets.

    ``comparisons`` is a list of ``(modelled_run, independent_run)`` pairs, each run a ``(dataset, sampler)``.
    Rules (:data:`RULES` ``["rq1"]``), per comparison: *higher p-values* (main) holds when, among the
    (NK, K, metric) cells where the two p-values differ, the modelled run's is the higher in more than half and the
    median difference is not negative; *needs a larger budget* holds when, by the Table 1 rule, the modelled run
    needs more for more than half of the metrics significant under either. "Cannot be checked" without a
    comparison (``missing`` then says what is missing).
    """
    comparisons = list(comparisons or [])
    if results is None or not len(results) or not comparisons:
        return Finding(QUESTIONS["rq1"], paper_rq1(), missing or "No sampler comparison ran, so this run says nothing.",
                       UNCHECKED, {"comparisons": 0}, claim=CLAIMS["rq1"])
    higher, budget = RULES["rq1"]
    rows, parts, claims = [], [], []
    for modelled, independent in comparisons:
        stats = tables.compare_runs(results, modelled, independent, epsilon)
        contrast = _our_contrast(results, modelled, independent, epsilon)
        holds = stats["differing"] > 0 and stats["share_higher"] > 0.5 and stats["median_difference"] >= 0
        rows.append({"modelled": tables._as_run(modelled), "independent": tables._as_run(independent),
                     **stats, **contrast, "holds": holds})
        claims.append(SubClaim(higher, "higher (its Figures 1 and 2)",
                               f"higher in {_pct(stats['share_higher'])} of {stats['differing']:,} differing cells"
                               if stats["differing"] else "the same in every cell", holds, _label(modelled)))
        claims.append(_needs_more_claim(budget, results, modelled, independent, epsilon))
        table1_part = (f"needs more for {contrast['needs_more']} of {contrast['compared']} metrics by the Table 1 "
                       "rule" if contrast["compared"] else "no metric reaches significance under either sampler")
        if stats["differing"]:
            parts.append(f"{_label(modelled)} gives the higher p-value in {_pct(stats['share_higher'])} of the "
                         f"{stats['differing']:,} cells where it differs from {tables._as_run(independent)[1]} "
                         f"(median difference {stats['median_difference']:+.3f}); {table1_part}")
        else:
            parts.append(f"{_label(modelled)} gives the same p-value as {tables._as_run(independent)[1]} in all "
                         f"{stats['cells']:,} cells")
    held = sum(r["holds"] for r in rows)
    ours = (f"At ε = {epsilon:g}: " + "; ".join(parts) + ". " +
            ("Modelling raters raises the p-values in every comparison." if held == len(rows) else
             f"Modelling raters raises the p-values in {held} of {len(rows)} comparisons." if held else
             "Modelling raters does not raise the p-values here."))
    return Finding(QUESTIONS["rq1"], paper_rq1(), ours, None, {"comparisons": rows, "held": held}, claims,
                   CLAIMS["rq1"])


def modelling_shifts_budget_and_k(results: pd.DataFrame | None, comparisons, epsilon: float,
                                  missing: str = NO_COMPARISON) -> Finding:
    """RQ2's claim: modelling raters raises the smallest significant budget, and the best K with it.

    Rules (:data:`RULES` ``["rq2"]``): per comparison, *needs a larger budget* (main; the Table 1 rule, for more
    than half of the metrics significant under either) and, on data that are or imitate the paper's, *budget ratio
    as the paper's* (our median ratio of smallest significant budgets within a factor 2.5 of the paper's: ×1 on
    DICES, where 7 of 7 budgets stay equal, ×3.75 on Toxicity); over all comparisons, *best K larger* (the best K
    is larger under the modelled sampler for more metrics than it is smaller).
    """
    d = paper_contrast("DICES", "S1", "S2")
    t = paper_contrast("Toxicity", "S3", "S2")
    paper = ("Modelling raters raises the budget needed for significance, and the best K with it: for MAE the best K "
             "moves from 40 (S2) to 100 (S1) on DICES and from 9 (S2) to 20 (S3) on Toxicity, and Toxicity's "
             f"budgets grow by a median factor of {np.median(list(t['ratios'].values())):.2f} under S3 "
             f"(Table 1, ε = 0.3). On DICES the budgets stay equal for {sum(r == 1 for r in d['ratios'].values())} of "
             f"{len(d['ratios'])} metrics, and S1 needs more through higher p-values at the same budget.")
    comparisons = list(comparisons or [])
    if results is None or not len(results) or not comparisons:
        return Finding(QUESTIONS["rq2"], paper, missing or "No sampler comparison ran.", UNCHECKED,
                       claim=CLAIMS["rq2"])
    main, _, k_rule = RULES["rq2"]
    larger_nk = smaller_nk = larger_k = smaller_k = both = 0
    parts, claims = [], []
    for modelled, independent in comparisons:
        table = tables.smallest_budgets(results, modelled, independent, epsilon).dropna(subset=["ratio"])
        both += len(table)
        up_nk, down_nk = int((table["NK_first"] > table["NK_second"]).sum()), int(
            (table["NK_first"] < table["NK_second"]).sum())
        up_k, down_k = int((table["K_first"] > table["K_second"]).sum()), int(
            (table["K_first"] < table["K_second"]).sum())
        larger_nk, smaller_nk, larger_k, smaller_k = (larger_nk + up_nk, smaller_nk + down_nk, larger_k + up_k,
                                                      smaller_k + down_k)
        claims.append(_needs_more_claim(main, results, modelled, independent, epsilon))
        size = _budget_size_claim(results, modelled, independent, epsilon)
        claims += [size] if size is not None else []
        if len(table):
            parts.append(f"{_label(modelled)} against {tables._as_run(independent)[1]}: of {len(table)} metrics "
                         f"significant under both, the budget is larger for {up_nk} and smaller for {down_nk}, "
                         f"the best K larger for {up_k} and smaller for {down_k} (median budget ratio "
                         f"{table['ratio'].median():.2f})")
        else:
            parts.append(f"{_label(modelled)} against {tables._as_run(independent)[1]}: no metric reaches "
                         "significance under both samplers")
    claims.append(SubClaim(k_rule, "larger for 4, smaller for 0 (MAE: 40 → 100 on DICES, 9 → 20 on Toxicity)",
                           f"larger for {larger_k}, smaller for {smaller_k}",
                           larger_k > smaller_k if both else None))
    ours = f"At ε = {epsilon:g}: " + "; ".join(parts) + "."
    return Finding(QUESTIONS["rq2"], paper, ours, None,
                   {"larger_nk": larger_nk, "smaller_nk": smaller_nk, "larger_k": larger_k, "smaller_k": smaller_k,
                    "both": both}, claims, CLAIMS["rq2"])


def _family_runs(results: pd.DataFrame) -> pd.DataFrame:
    """The runs the family claim is about: S2 on data that are or imitate DICES or D3code, as in the paper; else
    every S2 run; else every run."""
    s2 = results[results["sampler"] == "S2"]
    paper = s2[[tables._imitated(results, d) in ("DICES", "D3code") for d in s2["dataset"]]]
    return paper if len(paper) else s2 if len(s2) else results


def distribution_metrics_favour_large_k(results: pd.DataFrame | None, epsilon: float, missing: str = "") -> Finding:
    """RQ2's second observation: distribution metrics reach significance at a smaller budget with a larger K.

    The paper states it under S2 on DICES and D3code, so only those runs count (:func:`_family_runs`). On the
    Table 1 rule, the median best K and the median smallest budget of the distribution metrics (MAE, Wins, KL-Div,
    JSD) are set against those of the vote metrics. Rules (:data:`RULES` ``["distribution"]``): *smaller budget*
    (main), *budget ratio as the paper's* (vote over distribution, within a factor 2.5 of the paper's ×5), *larger
    best K*, and *best K classes as the paper's* (each family's median best K on the same side of 10–20 as the
    paper's: K ≥ 20 for both families, 100 and 24.5).
    """
    paper_s2 = tables.paper_table().query("sampler == 'S2' and dataset in ['DICES', 'D3code']").dropna(subset=["NK"])
    dist, vote = (paper_s2[paper_s2["metric"].isin(m)] for m in (DISTRIBUTION_METRICS, VOTE_METRICS))
    p = {"dist_nk": float(dist["NK"].median()), "dist_k": float(dist["K"].median()),
         "vote_nk": float(vote["NK"].median()), "vote_k": float(vote["K"].median())}
    paper = (f"Under S2 on DICES and D3code, distribution-sensitive metrics reach significance at a smaller budget "
             f"(median NK {p['dist_nk']:,.0f}) with a larger K (median {p['dist_k']:.0f}) than the vote "
             f"metrics (median NK {p['vote_nk']:,.0f}, median K {p['vote_k']:g}) (Table 1, ε = 0.3).")
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
    budget, size, k_larger, k_class = RULES["distribution"]
    o = {"dist_nk": med["distribution"]["NK"], "dist_k": med["distribution"]["K"], "vote_nk": med["vote"]["NK"],
         "vote_k": med["vote"]["K"]}
    classes = (_k_class(p["dist_k"]) == _k_class(o["dist_k"]), _k_class(p["vote_k"]) == _k_class(o["vote_k"]))
    claims = [
        SubClaim(budget, f"{p['dist_nk']:,.0f} against {p['vote_nk']:,.0f}",
                 f"{o['dist_nk']:,.0f} against {o['vote_nk']:,.0f}", o["dist_nk"] < o["vote_nk"]),
        SubClaim(size, _x(p["vote_nk"] / p["dist_nk"]), _x(o["vote_nk"] / o["dist_nk"]),
                 _within(o["vote_nk"] / o["dist_nk"], p["vote_nk"] / p["dist_nk"])),
        SubClaim(k_larger, f"{p['dist_k']:g} against {p['vote_k']:g}", f"{o['dist_k']:g} against {o['vote_k']:g}",
                 o["dist_k"] > o["vote_k"]),
        SubClaim(k_class, f"distribution {_k_class(p['dist_k'])}, vote {_k_class(p['vote_k'])}",
                 f"distribution {_k_class(o['dist_k'])}, vote {_k_class(o['vote_k'])}", all(classes)),
    ]
    runs = ", ".join(_label(r) for r in tables.runs(chosen))
    ours = (f"At ε = {epsilon:g}, on {runs} ({med['pairs']} (run, metric) pairs): the distribution metrics reach "
            f"significance at a median budget of {o['dist_nk']:,.0f} with a median best K of {o['dist_k']:g} "
            f"({med['distribution']['n']} pairs significant); the vote metrics at {o['vote_nk']:,.0f} with K "
            f"{o['vote_k']:g} ({med['vote']['n']} pairs).")
    return Finding(QUESTIONS["distribution"], paper, ours, None, med, claims, CLAIMS["distribution"])


def batches_raise_budget(results: pd.DataFrame | None, modelled, independent, epsilon: float,
                         missing: str = "") -> Finding:
    """RQ3's claim: with distinct rater sets per batch (S3), a larger budget is needed than under S2.

    Over the metrics significant under either sampler, count those where S3's smallest significant budget is larger
    than S2's (a metric that only S2 brings to significance counts as larger) and those where it is smaller, and
    measure the null's spread (median ratio of null standard deviations). Rules (:data:`RULES` ``["rq3"]``): *S3
    needs a larger budget* (main: more than half of the metrics, and more than need less), *for every metric* (all
    but at most one; the paper: 8 of 8), *budget ratio as the paper's* (on data that are or imitate Toxicity,
    within a factor 2.5 of the paper's median ×3.75) and *wider null* (median ratio above 1).
    """
    t = paper_contrast("Toxicity", "S3", "S2")
    ratios = sorted(t["ratios"].values())
    paper = (f"Distinct rater sets add batch-specific variance, so a larger budget is needed: on Toxicity, S3 needs a "
             f"larger budget than S2 for {t['needs_more']} of {t['compared']} metrics, by a factor of "
             f"{min(ratios):g} to {max(ratios):g} (Table 1, ε = 0.3: NK 500 under S2 becomes 1,000 or 2,500 under S3).")
    if results is None or not len(results) or modelled is None:
        return Finding(QUESTIONS["rq3"], paper, missing or "No batched dataset ran.", UNCHECKED, claim=CLAIMS["rq3"])
    table = tables.smallest_budgets(results, modelled, independent, epsilon)
    compared = table.dropna(subset=["NK_first", "NK_second"], how="all")
    if not len(compared):
        return Finding(QUESTIONS["rq3"], paper, f"At ε = {epsilon:g}, no metric reaches significance under either "
                       "sampler on this grid, so the budgets cannot be compared.", UNCHECKED, claim=CLAIMS["rq3"])
    larger = (compared["NK_first"] > compared["NK_second"]).fillna(False) | (
        compared["NK_first"].isna() & compared["NK_second"].notna())
    smaller = (compared["NK_first"] < compared["NK_second"]).fillna(False) | (
        compared["NK_second"].isna() & compared["NK_first"].notna())
    more, fewer = int(larger.sum()), int(smaller.sum())
    short = [METRIC_LABELS[m] for m in compared.loc[~larger.to_numpy(dtype=bool), "metric"]]
    spread = tables.null_spread_ratio(results, modelled, independent, epsilon)
    wider = float(spread.median()) if len(spread) else float("nan")
    finite = compared["ratio"].dropna().astype(float)
    main, every, _, null = RULES["rq3"]
    claims = [SubClaim(main, f"{t['needs_more']} of {t['compared']} metrics", f"{more} of {len(compared)} "
                       f"(smaller for {fewer})", more > fewer and 2 * more > len(compared)),
              SubClaim(every, f"{t['needs_more']} of {t['compared']}", f"{more} of {len(compared)}" +
                       (f"; not {', '.join(short)}" if short else ""), more >= len(compared) - 1)]
    size = _budget_size_claim(results, modelled, independent, epsilon)
    claims += [size] if size is not None else []
    claims.append(SubClaim(null, "wider (no number)", f"{_x(wider)}" if len(spread) else "not measured",
                           wider > 1 if len(spread) else None))
    ours = (f"At ε = {epsilon:g}, {_label(modelled)} needs a larger budget than {tables._as_run(independent)[1]} for "
            f"{more} of {len(compared)} metrics and a smaller one for {fewer}"
            + (f" (median ratio {finite.median():.2f} over the {len(finite)} metrics significant under both)"
               if len(finite) else "")
            + (f"; the budget is not larger for {', '.join(short)}" if short else "")
            + f"; its null distribution is {wider:.2f} times as wide (median over cells and metrics).")
    return Finding(QUESTIONS["rq3"], paper, ours, None,
                   {"more": more, "fewer": fewer, "compared": int(len(compared)), "spread": wider,
                    "median_ratio": float(finite.median()) if len(finite) else None}, claims, CLAIMS["rq3"])


def few_raters_suffice(results: pd.DataFrame, full_run, cut_run, epsilon: float) -> dict:
    """RQ4's practical question on one sampler: per metric, does the cut pool reach p < 0.05 at the full pool's
    smallest significant budget or below? Counts ``same_or_less``, ``more`` (a larger budget, or never on this
    grid) and ``compared`` (metrics significant with either pool)."""
    table = tables.smallest_budgets(results, cut_run, full_run, epsilon)
    compared = table.dropna(subset=["NK_first", "NK_second"], how="all")
    more = int(((compared["NK_first"] > compared["NK_second"]).fillna(False) | compared["NK_first"].isna()).sum())
    return {"same_or_less": int(len(compared)) - more, "more": more, "compared": int(len(compared))}


def few_raters_split_curves(results: pd.DataFrame | None, full: str | None, cut: str | None, samplers,
                            epsilon: float, n_raters: int, missing: str = "") -> Finding:
    """RQ4's claim: with a few raters, the p-value curves of different K lie further apart; and whether a few
    raters suffice.

    ``full`` and ``cut`` name the two datasets, ``samplers`` the samplers both ran under (S1 and S2 on DICES). The
    spread of a run is the median, over metrics and budgets, of the range of p-values across K. Rule
    (:data:`RULES` ``["rq4"]``): *K curves further apart* (main) holds under a sampler when the cut run's spread is
    larger than the full run's; the paper does not say which sampler its Figure 3 shows, so there is one main
    sub-claim per sampler. The practical question is answered by :func:`few_raters_suffice` per sampler; it is
    measured, not judged, since the paper gives no budgets for the cut data.
    """
    paper = ("With DICES cut to 5 raters, the p-values behave like those of the Toxicity data, and the curves for "
             "different K separate across budgets, which the paper puts down to the small number of raters "
             "(Figure 3; the paper gives no number for the separation, and no budgets for the cut data).")
    if results is None or not len(results) or full is None or cut is None or not samplers:
        return Finding(QUESTIONS["rq4"], paper, missing or "No cut dataset ran.", UNCHECKED, claim=CLAIMS["rq4"])
    (rule,) = RULES["rq4"]
    claims, parts, answers, numbers = [], [], [], {}
    for sampler in samplers:
        spread = {name: tables.curve_spread(results, (name, sampler), epsilon) for name in (full, cut)}
        measured = not any(np.isnan(v) for v in spread.values())
        claims.append(SubClaim(rule, "further apart (Figure 3)",
                               f"{spread[full]:.3f} → {spread[cut]:.3f}" if measured else "not measured",
                               spread[cut] > spread[full] if measured else None, sampler))
        if not measured:
            continue
        suffice = few_raters_suffice(results, (full, sampler), (cut, sampler), epsilon)
        numbers[sampler] = {"full": spread[full], "cut": spread[cut], **suffice}
        parts.append(f"under {sampler}, the median range of p-values across K is {spread[full]:.3f} with all raters "
                     f"and {spread[cut]:.3f} with {n_raters}, so the cut pool's curves lie "
                     f"{'further apart' if spread[cut] > spread[full] else 'no further apart'}")
        answers.append(f"{suffice['same_or_less']} of {suffice['compared']} metrics under {sampler}" if
                       suffice["compared"] else f"none under {sampler}, where no metric reaches significance")
    if not parts:
        return Finding(QUESTIONS["rq4"], paper, "The runs share no cell, so the spreads cannot be compared.",
                       UNCHECKED, claim=CLAIMS["rq4"])
    counts = [n for n in numbers.values() if n["compared"]]
    enough = sum(n["same_or_less"] for n in counts), sum(n["compared"] for n in counts)
    answer = ("" if not enough[1] else
              f" Do {n_raters} raters suffice? They reach p < 0.05 at the full pool's smallest significant budget or "
              f"below for {_names(answers)}; for the rest they need a larger budget or never reach significance "
              f"on this grid. So on this run {n_raters} raters "
              + ("suffice for most metrics." if 2 * enough[0] > enough[1] else "do not suffice for most metrics."))
    ours = f"At ε = {epsilon:g}: " + "; ".join(parts) + "." + answer
    return Finding(QUESTIONS["rq4"], paper, ours, None, numbers, claims, CLAIMS["rq4"])


def departures_note(results: pd.DataFrame | None, epsilon: float, factor: float = 4.0) -> str:
    """Where our Table 1 departs from the paper's by ``factor`` or more, as Markdown ("" when there are no paper
    values to depart from). It names the departures and says which causes are known and which are not."""
    if results is None or not len(results) or not tables.has_paper_values(results):
        return ""
    if not np.isclose(epsilon, tables.PAPER_EPSILON):
        return (f"At ε = {epsilon:g} the paper's Table 1 (ε = {tables.PAPER_EPSILON:g}) is not comparable cell by cell, "
                "so departures from it are not counted.")
    found = tables.departures(results, epsilon, factor)
    summary = tables.table1(results[np.isclose(results["epsilon"], epsilon)])
    total = sum(tables.paper_value_exists(tables._imitated(results, d), s, m)
                for d, s, m in zip(summary["dataset"], summary["sampler"], summary["metric"])
                if tables._imitated(results, d) is not None)
    if found.empty:
        return (f"None of the {total} (run, metric) pairs with a paper value departs from it by a factor of "
                f"{factor:g} or more in budget or best K.")
    parts = []
    for (dataset, sampler), group in found.groupby(["dataset", "sampler"], sort=False):
        parts.append(f"{tables.run_label(dataset, sampler)}: {len(group)} metric{'' if len(group) == 1 else 's'}, e.g. "
                     f"{METRIC_LABELS[group['metric'].iloc[0]]} ({group['how'].iloc[0]})")
    return (f"{len(found)} of the {total} (run, metric) pairs with a paper value depart from it by a factor of "
            f"{factor:g} or more in budget or best K, or reach significance on one side only (the regenerated Table 1 "
            "shows each): " + "; ".join(parts) +
            ". Known causes that move these numbers are the stand-ins (fitted to published statistics of the data, "
            "never to its ratings), the perturbation rule and the permutation null "
            "({doc}`../book/differences`); {ref}`chapter-why` reruns the departures under alternatives to each and "
            "says which cause explains which.")


def rule_effects(by_rule: dict[str, pd.DataFrame], epsilon: float, budget: int) -> dict[str, float]:
    """Per perturbation rule, the median over runs and vote metrics of Δ at the largest K over Δ at the smallest K
    (at one budget): above 1, a large K helps the vote metrics; below 1, their effect fades with K."""
    out = {}
    for rule, results in by_rule.items():
        chosen = results[np.isclose(results["epsilon"], epsilon) & (results["NK"] == budget)
                         & results["metric"].isin(VOTE_METRICS)]
        ratios = []
        for _, group in chosen.groupby(["dataset", "sampler", "metric"]):
            group = group.sort_values("K")
            first, last = group["delta"].iloc[0], group["delta"].iloc[-1]
            if len(group) > 1 and first > 0:
                ratios.append(last / first)
        out[rule] = float(np.median(ratios)) if ratios else float("nan")
    return out


def rule_effect_note(by_rule: dict[str, pd.DataFrame], epsilon: float, budget: int) -> str:
    """One sentence measuring :func:`rule_effects` for the page."""
    effects = rule_effects(by_rule, epsilon, budget)
    first = next(iter(by_rule.values()))
    ks = sorted(set(first.loc[first["NK"] == budget, "K"]))
    if len(ks) < 2 or any(np.isnan(v) for v in effects.values()):
        return "The grid has too few K at this budget to measure how Δ changes with K."
    parts = [f"{ratio:.2f} times under the {rule} rule" for rule, ratio in effects.items()]
    return (f"At N×K = {budget:,} and ε = {epsilon:g}, the vote metrics' Δ at K = {ks[-1]} is " + " and ".join(parts) +
            f" its value at K = {ks[0]} (median over runs and vote metrics).")


def kl_note(results: pd.DataFrame | None, epsilon: float) -> str:
    """What KL-Div's smoothing does to this run, measured, as one Markdown paragraph ("" without KL-Div cells).

    A label that G's responses on an item hold and X's lack costs about ``ln(1/1e-12)`` = 27.6 nats times G's
    share of it, so at small K KL-Div counts mostly such misses; the note gives Δ at the smallest K and the cells
    where B scores better (Δ < 0) with their p-values.
    """
    if results is None or not len(results):
        return ""
    kl = results[np.isclose(results["epsilon"], epsilon) & (results["metric"] == "kl_div")]
    if not len(kl):
        return ""
    k0 = int(kl["K"].min())
    at_k0 = float(kl.loc[kl["K"] == k0, "delta"].median())
    negative = kl[kl["delta"] < 0]
    runs = ", ".join(_label(r) for r in tables.runs(negative))
    return (f"In this run KL-Div's Δ at K = {k0} is {at_k0:.2f} (median over runs and budgets). "
            + (f"{len(negative)} of its {len(kl)} cells have a negative Δ, B scoring better than A, at K = "
               f"{int(negative['K'].min())}–{int(negative['K'].max())} ({runs}); their median p-value is "
               f"{negative['p_value'].median():.2f}." if len(negative) else "No cell has a negative Δ."))


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


def departures_count(results: pd.DataFrame | None, epsilon: float, factor: float = 4.0) -> str:
    """One plain sentence: how many (run, metric) pairs depart from the paper's Table 1 by ``factor`` or more."""
    if results is None or not len(results) or not tables.has_paper_values(results):
        return "This build ran on no dataset with paper values, so no departure was measured."
    if not np.isclose(epsilon, tables.PAPER_EPSILON):
        return f"This build's RQ2 ran at ε = {epsilon:g}, where the paper's Table 1 does not apply cell by cell."
    found = tables.departures(results, epsilon, factor)
    summary = tables.table1(results[np.isclose(results["epsilon"], epsilon)])
    total = sum(tables.paper_value_exists(tables._imitated(results, d), s, m)
                for d, s, m in zip(summary["dataset"], summary["sampler"], summary["metric"])
                if tables._imitated(results, d) is not None)
    return (f"In this build, {len(found)} of the {total} (run, metric) pairs with a paper value depart from it by a "
            f"factor of {factor:g} or more in budget or best K, or reach significance on one side only.")
