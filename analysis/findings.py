"""The paper's claims, each checked by one function, and the finding box a chapter opens with.

Every chapter that states a claim calls the same function: :func:`raters_raise_p_values` (RQ1, RQ3 and the
real-data chapter), :func:`modelling_shifts_budget_and_k` (RQ2), :func:`distribution_metrics_favour_large_k`
(RQ2 and the real-data chapter), :func:`batches_raise_budget` (RQ3) and :func:`few_raters_split_curves` (RQ4).
Each returns a :class:`Finding`: the question, the paper's answer with its numbers (read from the paper's tables
where it gives them), ours with our numbers, and a verdict. With no data to compare, the verdict is
"cannot be checked" and no number is stated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis import tables
from analysis.metrics import DISTRIBUTION_METRICS, METRIC_LABELS, METRICS, VOTE_METRICS

AGREES, PARTLY, DISAGREES, UNCHECKED = "agrees", "partly agrees", "disagrees", "cannot be checked"
VERDICTS = (AGREES, PARTLY, DISAGREES, UNCHECKED)
CITE = "{cite}`pandita2026`"
QUESTIONS = {
    "rq1": "Does accounting for rater behaviour across items give higher p-values than ignoring it?",
    "rq2": "Does modelling raters change how many items and how many ratings per item a reliable test needs?",
    "rq3": "What do distinct rater sets on batches of items cost?",
    "rq4": "How does cutting the rater pool to a few raters change the p-values?",
    "distribution": "Do distribution metrics reach significance with more ratings per item than vote metrics?",
}


@dataclass
class Finding:
    """A claim checked on one run of the book: question, the paper's answer, ours, and a verdict."""

    question: str
    paper: str
    ours: str
    verdict: str
    numbers: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; choose from {VERDICTS}")

    @property
    def checked(self) -> bool:
        return self.verdict != UNCHECKED

    def markdown(self, title: str = "Finding") -> str:
        """The finding box as MyST Markdown (an admonition), for ``{glue:md}`` with ``:format: myst``."""
        kind = {AGREES: "tip", PARTLY: "note", DISAGREES: "warning", UNCHECKED: "important"}[self.verdict]
        return (f":::{{admonition}} {title}: {self.verdict}\n:class: {kind} finding\n\n"
                f"**Question.** {self.question}\n\n**The paper** {CITE}. {self.paper}\n\n"
                f"**This book.** {self.ours}\n\n**Verdict.** Our run {self.verdict_sentence()}\n:::\n")

    def verdict_phrase(self) -> str:
        """``agrees with the paper`` … ``cannot be checked against the paper``, to complete "our run …"."""
        return "cannot be checked against the paper" if self.verdict == UNCHECKED else f"{self.verdict} with the paper"

    def verdict_sentence(self) -> str:
        if self.verdict == UNCHECKED:
            return "cannot check this claim: see above for what is missing."
        return f"{self.verdict} with the paper." if self.verdict != PARTLY else "partly agrees with the paper."

    def glue(self, key: str, title: str = "Finding") -> None:
        """Glue the box as ``<key>`` (Markdown), the verdict as ``<key>_verdict`` and the answer as ``<key>_ours``."""
        from IPython.display import Markdown
        from myst_nb import glue

        glue(key, Markdown(self.markdown(title)), display=False)
        glue(f"{key}_verdict", Markdown(self.verdict_phrase()), display=False)
        glue(f"{key}_ours", Markdown(self.ours), display=False)

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        return f"{self.question}\nPaper: {self.paper}\nOurs: {self.ours}\nVerdict: {self.verdict}"


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _n(x) -> str:
    return "–" if x is None or pd.isna(x) else f"{int(x):,}"


def _label(run) -> str:
    return tables.run_label(*tables._as_run(run))


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


PAPER_RQ1 = ("Yes. Under S2 the p-values are lower than under S1 on DICES (Accuracy at NK = 5,000: 0.045 under S1, "
             "0.019 under S2), and S3 needs a larger budget than S2 on Toxicity. By the paper's Table 1 (ε = 0.3), the sampler "
             "that models raters needs more (a larger smallest significant budget, or a higher p-value at the same "
             "budget) for {dices} of {dices_n} metrics on DICES (S1 against S2) and {tox} of {tox_n} on Toxicity "
             "(S3 against S2).")


def paper_rq1() -> str:
    d = paper_contrast("DICES", "S1", "S2")
    t = paper_contrast("Toxicity", "S3", "S2")
    return PAPER_RQ1.format(dices=d["needs_more"], dices_n=d["compared"], tox=t["needs_more"], tox_n=t["compared"])


# ------------------------------------------------------------------------------------------ claims

NO_COMPARISON = "The data have no design that allows a sampler comparison (a sparse design only admits S2)."


def raters_raise_p_values(results: pd.DataFrame | None, comparisons, epsilon: float,
                          missing: str = NO_COMPARISON) -> Finding:
    """RQ1's claim: the sampler that models raters across items gives higher p-values than S2.

    ``comparisons`` is a list of ``(modelled_run, independent_run)`` pairs, each run a ``(dataset, sampler)``.
    A comparison supports the claim when, among the (NK, K, metric) cells where the two p-values differ, the
    modelled run's is the higher one in more than half, and the median difference is not negative. The verdict is
    "agrees" when every comparison supports it, "partly agrees" when some do, "disagrees" when none does, and
    "cannot be checked" when there is no comparison (``missing`` then says what is missing).
    """
    comparisons = list(comparisons or [])
    if results is None or not len(results) or not comparisons:
        return Finding(QUESTIONS["rq1"], paper_rq1(), missing or "No sampler comparison ran, so this run says nothing.",
                       UNCHECKED, {"comparisons": 0})
    rows, parts = [], []
    for modelled, independent in comparisons:
        stats = tables.compare_runs(results, modelled, independent, epsilon)
        contrast = _our_contrast(results, modelled, independent, epsilon)
        holds = stats["differing"] > 0 and stats["share_higher"] > 0.5 and stats["median_difference"] >= 0
        rows.append({"modelled": tables._as_run(modelled), "independent": tables._as_run(independent),
                     **stats, **contrast, "holds": holds})
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
    verdict = AGREES if held == len(rows) else PARTLY if held else DISAGREES
    ours = (f"At ε = {epsilon:g}: " + "; ".join(parts) + ". " +
            ("Modelling raters raises the p-values in every comparison." if verdict == AGREES else
             f"Modelling raters raises the p-values in {held} of {len(rows)} comparisons." if held else
             "Modelling raters does not raise the p-values here."))
    return Finding(QUESTIONS["rq1"], paper_rq1(), ours, verdict, {"comparisons": rows, "held": held})


def modelling_shifts_budget_and_k(results: pd.DataFrame | None, comparisons, epsilon: float,
                                  missing: str = NO_COMPARISON) -> Finding:
    """RQ2's claim: modelling raters raises the smallest significant budget and the best K.

    Over the metrics that reach significance under both samplers of every comparison, count those where the
    modelled sampler needs a larger budget and those where its best K is larger. "Agrees" when both happen for
    more metrics than their opposite, "partly agrees" when one does, "disagrees" when neither does.
    """
    d = paper_contrast("DICES", "S1", "S2")
    t = paper_contrast("Toxicity", "S3", "S2")
    paper = ("Modelling raters raises the budget needed for significance, and the best K with it: for MAE the best K "
             "moves from 40 (S2) to 100 (S1) on DICES and from 9 (S2) to 20 (S3) on Toxicity, and Toxicity's "
             f"budgets grow by a median factor of {np.median(list(t['ratios'].values())):.1f} under S3 "
             f"(Table 1, ε = 0.3; on DICES the budgets stay equal for {sum(r == 1 for r in d['ratios'].values())} of "
             f"{len(d['ratios'])} metrics).")
    comparisons = list(comparisons or [])
    if results is None or not len(results) or not comparisons:
        return Finding(QUESTIONS["rq2"], paper, missing or "No sampler comparison ran.", UNCHECKED)
    larger_nk = smaller_nk = larger_k = smaller_k = both = 0
    parts = []
    for modelled, independent in comparisons:
        table = tables.smallest_budgets(results, modelled, independent, epsilon).dropna(subset=["ratio"])
        both += len(table)
        up_nk, down_nk = int((table["NK_first"] > table["NK_second"]).sum()), int(
            (table["NK_first"] < table["NK_second"]).sum())
        up_k, down_k = int((table["K_first"] > table["K_second"]).sum()), int(
            (table["K_first"] < table["K_second"]).sum())
        larger_nk, smaller_nk, larger_k, smaller_k = (larger_nk + up_nk, smaller_nk + down_nk, larger_k + up_k,
                                                      smaller_k + down_k)
        if len(table):
            parts.append(f"{_label(modelled)} against {tables._as_run(independent)[1]}: of {len(table)} metrics "
                         f"significant under both, the budget is larger for {up_nk} and smaller for {down_nk}, "
                         f"the best K larger for {up_k} and smaller for {down_k} (median budget ratio "
                         f"{table['ratio'].median():.2f})")
        else:
            parts.append(f"{_label(modelled)} against {tables._as_run(independent)[1]}: no metric reaches "
                         "significance under both samplers")
    if both == 0:
        return Finding(QUESTIONS["rq2"], paper, f"At ε = {epsilon:g}: " + "; ".join(parts) +
                       ". With no metric significant under both samplers, the shift cannot be measured.", UNCHECKED)
    budget_up, k_up = larger_nk > smaller_nk, larger_k > smaller_k
    verdict = AGREES if budget_up and k_up else PARTLY if budget_up or k_up else DISAGREES
    ours = f"At ε = {epsilon:g}: " + "; ".join(parts) + "."
    return Finding(QUESTIONS["rq2"], paper, ours, verdict,
                   {"larger_nk": larger_nk, "smaller_nk": smaller_nk, "larger_k": larger_k, "smaller_k": smaller_k,
                    "both": both})


def distribution_metrics_favour_large_k(results: pd.DataFrame | None, epsilon: float, missing: str = "") -> Finding:
    """RQ2's second observation: distribution metrics reach significance at a smaller budget with a larger K.

    On the Table 1 rule, compare the median best K and the median smallest budget of the distribution metrics
    (MAE, Wins, KL-Div, JSD) with those of the vote metrics. "Agrees" when the distribution metrics have the larger
    K and the smaller (or equal) budget, "partly agrees" when one of the two holds, "disagrees" otherwise.
    """
    paper_s2 = tables.paper_table().query("sampler == 'S2' and dataset in ['DICES', 'D3code']").dropna(subset=["NK"])
    dist, vote = (paper_s2[paper_s2["metric"].isin(m)] for m in (DISTRIBUTION_METRICS, VOTE_METRICS))
    paper = (f"Under S2 on DICES and D3code, distribution-sensitive metrics reach significance at a smaller budget "
             f"(median NK {dist['NK'].median():,.0f}) with a larger K (median {dist['K'].median():.0f}) than the vote "
             f"metrics (median NK {vote['NK'].median():,.0f}, median K {vote['K'].median():.0f}) (Table 1, ε = 0.3).")
    if results is None or not len(results):
        return Finding(QUESTIONS["distribution"], paper, missing or "No run to compare.", UNCHECKED)
    med = tables.family_medians(results, epsilon)
    if not med["vote"]["n"] or not med["distribution"]["n"]:
        none = [f for f in ("vote", "distribution") if not med[f]["n"]]
        return Finding(QUESTIONS["distribution"], paper,
                       f"At ε = {epsilon:g}, no {' or '.join(none)} metric reaches significance on this grid, so "
                       "the two families cannot be compared.", UNCHECKED, med)
    k_larger = med["distribution"]["K"] > med["vote"]["K"]
    nk_smaller = med["distribution"]["NK"] <= med["vote"]["NK"]
    verdict = AGREES if k_larger and nk_smaller else PARTLY if k_larger or nk_smaller else DISAGREES
    ours = (f"At ε = {epsilon:g}, over {med['pairs']} (run, metric) pairs: the distribution metrics reach significance "
            f"at a median budget of {med['distribution']['NK']:,.0f} with a median best K of "
            f"{med['distribution']['K']:.0f} ({med['distribution']['n']} pairs significant); the vote metrics at "
            f"{med['vote']['NK']:,.0f} with K {med['vote']['K']:.0f} ({med['vote']['n']} pairs).")
    return Finding(QUESTIONS["distribution"], paper, ours, verdict, med)


def batches_raise_budget(results: pd.DataFrame | None, modelled, independent, epsilon: float,
                         missing: str = "") -> Finding:
    """RQ3's claim: with distinct rater sets per batch (S3), a larger budget is needed than under S2.

    Over the metrics, count those where S3's smallest significant budget is larger than S2's (a metric that only
    S2 brings to significance counts as larger), and measure the null's spread (median ratio of null standard
    deviations). "Agrees" when S3 needs more for more than half of the metrics that reach significance under
    either sampler (and for more than need less) and its null is wider; "partly agrees" when one of the two holds.
    """
    t = paper_contrast("Toxicity", "S3", "S2")
    ratios = sorted(t["ratios"].values())
    paper = (f"Distinct rater sets add batch-specific variance, so a larger budget is needed: on Toxicity, S3 needs a "
             f"larger budget than S2 for {t['needs_more']} of {t['compared']} metrics, by a factor of "
             f"{min(ratios):g} to {max(ratios):g} (Table 1, ε = 0.3: NK 500 under S2 becomes 1,000 or 2,500 under S3).")
    if results is None or not len(results) or modelled is None:
        return Finding(QUESTIONS["rq3"], paper, missing or "No batched dataset ran.", UNCHECKED)
    table = tables.smallest_budgets(results, modelled, independent, epsilon)
    compared = table.dropna(subset=["NK_first", "NK_second"], how="all")
    more = int(((compared["NK_first"] > compared["NK_second"]) |
                (compared["NK_first"].isna() & compared["NK_second"].notna())).sum())
    fewer = int(((compared["NK_first"] < compared["NK_second"]) |
                 (compared["NK_second"].isna() & compared["NK_first"].notna())).sum())
    spread = tables.null_spread_ratio(results, modelled, independent, epsilon)
    wider = float(spread.median()) if len(spread) else float("nan")
    finite = compared["ratio"].dropna()
    if not len(compared):
        return Finding(QUESTIONS["rq3"], paper, f"At ε = {epsilon:g}, no metric reaches significance under either "
                       "sampler on this grid, so the budgets cannot be compared.", UNCHECKED)
    needs_more, null_wider = more > fewer and 2 * more > len(compared), wider > 1
    verdict = AGREES if needs_more and null_wider else PARTLY if needs_more or null_wider else DISAGREES
    ours = (f"At ε = {epsilon:g}, {_label(modelled)} needs a larger budget than {tables._as_run(independent)[1]} for "
            f"{more} of {len(compared)} metrics and a smaller one for {fewer}"
            + (f" (median ratio {finite.median():.2f} over the {len(finite)} metrics significant under both)"
               if len(finite) else "")
            + f"; its null distribution is {wider:.2f} times as wide (median over cells and metrics).")
    return Finding(QUESTIONS["rq3"], paper, ours, verdict,
                   {"more": more, "fewer": fewer, "compared": int(len(compared)), "spread": wider,
                    "median_ratio": float(finite.median()) if len(finite) else None})


def few_raters_split_curves(results: pd.DataFrame | None, full_run, cut_run, epsilon: float, n_raters: int,
                            missing: str = "") -> Finding:
    """RQ4's claim: with a few raters, the p-value curves of different K lie further apart.

    The spread of a run is the median, over metrics and budgets, of the range of p-values across K. "Agrees" when
    the cut run's spread is larger than the full run's, "disagrees" otherwise.
    """
    paper = ("With DICES cut to 5 raters, the p-values behave like those of the Toxicity data, and the curves for "
             "different K separate across budgets, which the paper puts down to the small number of raters "
             "(Figure 3; the paper gives no number for the separation).")
    if results is None or not len(results) or full_run is None or cut_run is None:
        return Finding(QUESTIONS["rq4"], paper, missing or "No cut dataset ran.", UNCHECKED)
    full, cut = tables.curve_spread(results, full_run, epsilon), tables.curve_spread(results, cut_run, epsilon)
    if np.isnan(full) or np.isnan(cut):
        return Finding(QUESTIONS["rq4"], paper, "The two runs share no cell, so the spreads cannot be compared.",
                       UNCHECKED)
    verdict = AGREES if cut > full else DISAGREES
    ours = (f"At ε = {epsilon:g} under {tables._as_run(full_run)[1]}, the median range of p-values across K is "
            f"{full:.3f} with all raters and {cut:.3f} with {n_raters}: the curves of the cut pool lie "
            f"{'further apart' if cut > full else 'no further apart'}.")
    return Finding(QUESTIONS["rq4"], paper, ours, verdict, {"full": full, "cut": cut})


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
        parts.append(f"{tables.run_label(dataset, sampler)}: {len(group)} metrics, e.g. "
                     f"{METRIC_LABELS[group['metric'].iloc[0]]} ({group['how'].iloc[0]})")
    return (f"{len(found)} of the {total} (run, metric) pairs with a paper value depart from it by a factor of "
            f"{factor:g} or more in budget or best K, or reach significance on one side only (the regenerated Table 1 "
            "shows each): " + "; ".join(parts) +
            ". Known causes that move these numbers are the stand-ins (their rater and item effects are tuned to "
            "the published designs, not fitted to the ratings), the perturbation rule and the permutation null "
            "({doc}`../book/differences`); how much each contributes to a given departure is not known.")


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
