"""Regex-checked machine-translation test suites: judgements, accuracy tables, significance clusters, bootstrap.

The judging follows the TQ-AutoTest tool's semantics:

* rules are searched, not anchored, and are case-sensitive;
* only the positive regex matches: pass; only the negative one: fail; both: warning;
* when neither regex matches, the tokens decide (literal, case-sensitive substrings): only a positive token:
  pass; only a negative one: fail; both or neither: warning;
* an empty output, or an output for an item the suite does not have, is not scored (judgement ``unscored``);
* a rule containing a newline, or a regex that does not compile, is an error naming the item (judgement
  ``error`` for every output of that item).

Nothing is dropped: the judgements table has one row per (item, system) output of the input, and the reason of
every ``unscored`` or ``error`` row is in its ``decided_by`` column. Accuracy and clusters use only the judged
rows (pass, fail, warning); reports count the others apart.

Accuracy is ``pass / (pass + fail)``. **Analysis 1** drops every item that has a warning for any system, so all
systems are scored on the same items; **Analysis 2** drops warnings per system. The non-weighted average is the
sum of passes over the sum of scored items; the weighted average is the mean of the category accuracies.

Systems are compared per category with the two-tailed two-proportion Z-test (pooled variance) at alpha 0.05: the
*first significance cluster* is the best system and every system not significantly worse than it. Because all
systems translate the same items, :func:`bootstrap_clusters` also gives a paired alternative: items are resampled
within each phenomenon, the same draw serving every system, and a system stays in the cluster unless the
bootstrap interval of its difference to the best system excludes zero.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from importlib.resources import files as package_files
from pathlib import Path

import numpy as np
import pandas as pd

from analysis.data.reading import read_error, read_table
from analysis.errors import AnalysisError, DataError, ParameterError

PASS, FAIL, WARNING = "pass", "fail", "warning"
ERROR, UNSCORED = "error", "unscored"
JUDGED = (PASS, FAIL, WARNING)
JUDGEMENTS = JUDGED + (ERROR, UNSCORED)
COLUMNS = ("item_id", "system", "category", "phenomenon", "judgement", "decided_by", "output")
GROUPS = ("category", "phenomenon", "tense", "verb type")  # what tables group by (the last two: suite_tables)
REVIEW_COLUMNS = ("item_id", "system", "category", "phenomenon", "source", "output", "decided_by", "review")
ALPHA = 0.05


class RuleError(AnalysisError):
    """A test-suite rule that cannot be used (a newline in it, or a regex that does not compile)."""


@dataclass(frozen=True)
class SuiteRule:
    """One test item: its phenomenon and the regexes and tokens that judge an output."""

    item_id: str
    category: str
    phenomenon: str
    source: str
    positive_regex: str = ""
    negative_regex: str = ""
    positive_tokens: tuple[str, ...] = ()
    negative_tokens: tuple[str, ...] = ()

    def check(self) -> None:
        """Raise :class:`RuleError` for a newline in any rule or a regex that does not compile."""
        for text in (self.positive_regex, self.negative_regex, *self.positive_tokens, *self.negative_tokens):
            if "\n" in text or "\r" in text:
                raise RuleError(f"item {self.item_id}: a rule contains a newline: {text!r}")
        for text in (self.positive_regex, self.negative_regex):
            try:
                re.compile(text)
            except re.error as err:
                raise RuleError(f"item {self.item_id}: invalid regex {text!r}: {err}") from err


def judge(rule: SuiteRule, output: str) -> tuple[str, str] | None:
    """(judgement, what decided it) for one output, or None when the output is empty (not scored)."""
    if output is None or (isinstance(output, float) and math.isnan(output)) or not str(output).strip():
        return None
    rule.check()
    output = str(output)
    positive = bool(rule.positive_regex) and re.search(rule.positive_regex, output) is not None
    negative = bool(rule.negative_regex) and re.search(rule.negative_regex, output) is not None
    if positive and negative:
        return WARNING, "both regexes"
    if positive:
        return PASS, "positive regex"
    if negative:
        return FAIL, "negative regex"
    positive = any(token and token in output for token in rule.positive_tokens)
    negative = any(token and token in output for token in rule.negative_tokens)
    if positive and negative:
        return WARNING, "both tokens"
    if positive:
        return PASS, "positive token"
    if negative:
        return FAIL, "negative token"
    return WARNING, "no rule matched"


# ---------------------------------------------------------------- loading

def load_rules(path: str | Path) -> dict[str, SuiteRule]:
    """Rules from a DFKI ``items.json`` (``{"items": [...]}``), keyed by item id."""
    try:
        items = json.loads(Path(path).read_text(encoding="utf-8"))["items"]
    except (OSError, ValueError, KeyError, TypeError) as err:  # ValueError: bad JSON or not UTF-8 text
        reason = "it has no 'items' key" if isinstance(err, (KeyError, TypeError)) else read_error(err)
        raise DataError(f"{path} is not a test-suite items.json with an 'items' list: {reason}") from None
    if not isinstance(items, list):
        raise DataError(f"{path}: 'items' is not a list")
    rules = {}
    for raw in items:
        if not isinstance(raw, dict):
            raise DataError(f"{path}: an item is not an object: {str(raw)[:60]!r}")
        try:
            rule = SuiteRule(item_id=str(raw["id"]), category=raw["category"], phenomenon=raw["phenomenon"],
                        source=raw["source_sentence"], positive_regex=raw.get("positive_regex") or "",
                        negative_regex=raw.get("negative_regex") or "",
                        positive_tokens=tuple(raw.get("positive_tokens") or ()),
                        negative_tokens=tuple(raw.get("negative_tokens") or ()))
        except KeyError as err:
            raise DataError(f"{path}: an item lacks the field {err}") from err
        rules[rule.item_id] = rule
    return rules


def load_outputs(path: str | Path) -> pd.DataFrame:
    """System outputs as a long table (item_id, system, output), from CSV/TSV/Parquet or WMT-style JSON lines."""
    path = Path(path)
    if path.name.endswith(".jsonl"):
        rows = []
        try:
            with open(path, encoding="utf-8") as lines:
                for number, line in enumerate(lines, 1):
                    if line.strip():
                        try:
                            record = json.loads(line)
                            rows += [(str(record["item_id"]), s, o) for s, o in record["outputs"].items()]
                        except (json.JSONDecodeError, KeyError, AttributeError, TypeError) as err:
                            raise DataError(f"{path} line {number}: expected item_id and an outputs object ({err})")
        except (OSError, UnicodeDecodeError) as err:
            raise DataError(f"cannot read {path}: {err}") from None
        table = pd.DataFrame(rows, columns=["item_id", "system", "output"])
    else:
        table = read_table(path, columns=["item_id", "system", "output"], dtype=str)
    if table.empty:
        raise DataError(f"{path} has no output (only a header, or nothing); expected rows of item_id, system, output")
    return table


def demo_paths() -> tuple[Path, Path]:
    """The embedded demo suite: (items.json, outputs.csv)."""
    folder = package_files("analysis") / "resources" / "demo_testsuite"
    return Path(str(folder / "items.json")), Path(str(folder / "outputs.csv"))


def demo_reviews() -> Path:
    """The demo suite's reviews CSV: a review of each warning that its rules leave on the demo outputs."""
    return Path(str(package_files("analysis") / "resources" / "demo_testsuite" / "reviews.csv"))


# ---------------------------------------------------------------- judging and tables

def judge_all(rules: dict[str, SuiteRule], outputs: pd.DataFrame) -> pd.DataFrame:
    """One row per (item, system) output of the input, in input order: category, phenomenon, judgement and what
    decided it.

    Outputs for unknown items and empty outputs get the judgement ``unscored``; outputs of items whose rule is an
    error (a newline, a regex that does not compile) get ``error``, as TQ-AutoTest reports an error for every
    output of such an item; ``decided_by`` gives the reason. ``attrs["not_scored"]`` counts them and
    ``attrs["rule_errors"]`` names the faulty items with the reason.
    """
    errors = {}
    for rule in rules.values():
        try:
            rule.check()
        except RuleError as err:
            errors[rule.item_id] = str(err)
    rows, unknown, empty, broken = [], 0, 0, 0
    for item_id, system, output in outputs[["item_id", "system", "output"]].itertuples(index=False):
        rule = rules.get(str(item_id))
        if rule is None:
            unknown += 1
            rows.append((str(item_id), system, None, None, UNSCORED, "unknown item", output))
            continue
        if rule.item_id in errors:
            broken += 1
            rows.append((rule.item_id, system, rule.category, rule.phenomenon, ERROR,
                         f"rule error: {errors[rule.item_id]}", output))
            continue
        verdict = judge(rule, output)
        if verdict is None:
            empty += 1
            rows.append((rule.item_id, system, rule.category, rule.phenomenon, UNSCORED, "empty output", output))
            continue
        rows.append((rule.item_id, system, rule.category, rule.phenomenon, verdict[0], verdict[1], output))
    table = pd.DataFrame(rows, columns=list(COLUMNS))
    table.attrs["not_scored"] = {"unknown item": unknown, "empty output": empty, "rule error": broken}
    table.attrs["rule_errors"] = errors
    return table


def judged(judgements: pd.DataFrame) -> pd.DataFrame:
    """The rows with a judgement (pass, fail, warning), without the ``error`` and ``unscored`` ones."""
    return judgements[judgements["judgement"].isin(JUDGED)]


def not_scored(judgements: pd.DataFrame) -> pd.Series:
    """How many outputs were not scored, per judgement (error, unscored) and reason."""
    rest = judgements[~judgements["judgement"].isin(JUDGED)]
    reason = rest["decided_by"].astype(str).str.split(":").str[0] if "decided_by" in rest else rest["judgement"]
    return rest.groupby([rest["judgement"], reason]).size().rename("outputs")


def check_judgements(table: pd.DataFrame, where: str = "the judgements") -> pd.DataFrame:
    """Raise a :class:`DataError` for a judgements table that a report cannot use: no row, missing columns, or a
    judgement that is none of pass, fail, warning, error and unscored."""
    missing = {"item_id", "system", "category", "phenomenon", "judgement"} - set(table.columns)
    if missing:
        raise DataError(f"{where} lacks column(s) {sorted(missing)}; write it with 'testsuite judge'")
    if table.empty:
        raise DataError(f"{where} has no judgement (only a header); judge some outputs with 'testsuite judge'")
    unknown = sorted(set(table["judgement"].astype(str)) - set(JUDGEMENTS))
    if unknown:
        raise DataError(f"{where} has unknown judgement value(s) {unknown[:5]}; expected {', '.join(JUDGEMENTS)}")
    if judged(table).empty:
        raise DataError(f"{where} has no scored output (every row is error or unscored)")
    return table


def scored(judgements: pd.DataFrame, analysis: int) -> pd.DataFrame:
    """The rows an analysis scores. Analysis 1 scores every system on one item set, as the source does: the items
    that every system has a pass or a fail on (an item with a warning, an error or an unscored output for any
    system, or without an output of some system, is dropped for all). Analysis 2 drops each warning, error and
    unscored output on its own."""
    if analysis not in (1, 2):
        raise ParameterError(f"analysis must be 1 or 2, got {analysis!r}")
    decided = judgements[judgements["judgement"].isin((PASS, FAIL))]
    if analysis == 1:
        systems = decided.groupby("item_id")["system"].nunique()
        common = systems.index[systems == judgements["system"].nunique()]
        return decided[decided["item_id"].isin(common)]
    return decided


def without_systems(judgements: pd.DataFrame, systems=()) -> pd.DataFrame:
    """The rows of every system but ``systems`` (as the source leaves its unsupervised systems out of Analysis 1);
    a name that is not a system of ``judgements`` is a :class:`ParameterError`."""
    unknown = sorted(set(systems) - set(judgements["system"]))
    if unknown:
        raise ParameterError(f"no system named {', '.join(unknown)}; the systems are "
                             f"{', '.join(sorted(judgements['system'].unique()))}")
    return judgements[~judgements["system"].isin(list(systems))]


def counts(judgements: pd.DataFrame, by: str = "category") -> pd.DataFrame:
    """Pass, fail and warning counts (columns) per (group, system) (rows)."""
    if by not in GROUPS or by not in judgements.columns:
        raise ParameterError(f"by must be one of {', '.join(GROUPS)} (tense and verb type after "
                             f"suite_tables.verb_parts), got {by!r}")
    table = judgements.groupby([by, "system"])["judgement"].value_counts().unstack(fill_value=0)
    return table.reindex(columns=[PASS, FAIL, WARNING], fill_value=0)


def accuracy(judgements: pd.DataFrame, analysis: int = 1, by: str = "category") -> pd.DataFrame:
    """Accuracy in % per group (rows) and system (columns) after the analysis' warning rule."""
    kept = counts(scored(judgements, analysis), by)
    return (100 * kept[PASS] / (kept[PASS] + kept[FAIL])).unstack("system")


def averages(judgements: pd.DataFrame, analysis: int = 1, by: str = "category") -> pd.DataFrame:
    """Per system (rows): ``non-weighted`` (sum of passes over scored items) and ``weighted`` (mean of the
    accuracies of the ``by`` groups), in %."""
    kept = scored(judgements, analysis)
    per_system = kept.groupby("system")["judgement"].agg(lambda j: 100 * (j == PASS).mean())
    return pd.DataFrame({"non-weighted": per_system, "weighted": accuracy(judgements, analysis, by).mean()})


def warning_rates(judgements: pd.DataFrame) -> pd.Series:
    """Share of judged outputs (pass, fail, warning) judged 'warning', per system, in %."""
    return judged(judgements).groupby("system")["judgement"].agg(lambda j: 100 * (j == WARNING).mean())


# ---------------------------------------------------------------- significance

def z_test(correct_a: int, n_a: int, correct_b: int, n_b: int) -> tuple[float, float]:
    """Two-tailed two-proportion Z-test with pooled variance: (z, p)."""
    from scipy.stats import norm  # here, not at the top: scipy.stats takes a second to import
    if n_a < 1 or n_b < 1:
        raise ParameterError("both samples need at least one item")
    pooled = (correct_a + correct_b) / (n_a + n_b)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n_a + 1 / n_b))
    if se == 0:
        return 0.0, 1.0
    z = (correct_a / n_a - correct_b / n_b) / se
    return z, float(2 * norm.sf(abs(z)))


def z_clusters(judgements: pd.DataFrame, analysis: int = 1, by: str = "category", alpha: float = ALPHA) -> pd.DataFrame:
    """True where a system is in the first significance cluster of a group (Z-test against the best system)."""
    kept = counts(scored(judgements, analysis), by)
    passes, totals = kept[PASS].unstack("system"), (kept[PASS] + kept[FAIL]).unstack("system")
    member = pd.DataFrame(False, index=passes.index, columns=passes.columns)
    for group in passes.index:
        rate = (passes.loc[group] / totals.loc[group]).dropna()
        if rate.empty:
            continue
        best = rate.idxmax()
        for system in rate.index:
            p = z_test(int(passes.loc[group, best]), int(totals.loc[group, best]),
                       int(passes.loc[group, system]), int(totals.loc[group, system]))[1]
            member.loc[group, system] = system == best or rate[system] == rate[best] or p >= alpha
    return member


def bootstrap_clusters(judgements: pd.DataFrame, analysis: int = 1, by: str = "category", n_boot: int = 1000,
                       seed: int = 0, alpha: float = ALPHA) -> pd.DataFrame:
    """First clusters from a paired item bootstrap stratified by phenomenon (seeded).

    Every replicate redraws the items of each phenomenon with replacement, and the same draw serves every
    system. A system leaves the cluster of its group when the two-sided ``1 - alpha`` percentile interval of
    (best accuracy - its accuracy) lies above zero.
    """
    kept = scored(judgements, analysis)
    correct = (kept.assign(ok=kept["judgement"] == PASS).pivot_table(index="item_id", columns="system", values="ok",
                                                                     aggfunc="first").astype(float))
    meta = kept.drop_duplicates("item_id").set_index("item_id").loc[correct.index, ["category", "phenomenon"]]
    valid = correct.notna().to_numpy(float)
    hits = correct.fillna(0).to_numpy(float)
    rng = np.random.default_rng(seed)
    weights = np.zeros((n_boot, len(correct)))
    for _, positions in meta.reset_index().groupby("phenomenon").indices.items():
        draws = rng.multinomial(len(positions), np.full(len(positions), 1 / len(positions)), size=n_boot)
        weights[:, positions] = draws
    member = pd.DataFrame(False, index=sorted(meta[by].unique()), columns=correct.columns)
    observed = accuracy(judgements, analysis, by)
    for group in member.index:
        columns = np.flatnonzero(meta[by].to_numpy() == group)
        w = weights[:, columns]
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = (w @ hits[columns]) / (w @ valid[columns])
        rate = observed.loc[group].dropna()
        if rate.empty:
            continue
        best = rate.idxmax()
        b = correct.columns.get_loc(best)
        for system in rate.index:
            s = correct.columns.get_loc(system)
            diff = rates[:, b] - rates[:, s]
            diff = diff[~np.isnan(diff)]
            lower = np.quantile(diff, alpha / 2) if len(diff) else 0.0
            member.loc[group, system] = system == best or lower <= 0
    return member


def percent(value) -> str:
    """A percentage as the book prints it: one decimal, ``–`` when missing."""
    return "–" if pd.isna(value) else f"{value:.1f}"


def marked(judgements: pd.DataFrame, analysis: int = 1, by: str = "category", clusters=None) -> pd.DataFrame:
    """Accuracy in % as text per group (rows) and system (columns), first-cluster members in bold (``**...**``)."""
    member = z_clusters(judgements, analysis, by) if clusters is None else clusters
    text = accuracy(judgements, analysis, by).apply(lambda col: col.map(percent))
    for group in text.index:
        for system in text.columns:
            if member.loc[group, system] and text.loc[group, system] != "–":
                text.loc[group, system] = f"**{text.loc[group, system]}**"
    return text


def cluster_table(judgements: pd.DataFrame, analysis: int = 1, by: str = "category", clusters=None) -> pd.DataFrame:
    """:func:`marked`, followed by the rows ``non-weighted average`` and ``weighted average`` (the mean of the
    ``by`` groups)."""
    avg = averages(judgements, analysis, by).T.map(percent)
    return pd.concat([marked(judgements, analysis, by, clusters),
                      avg.rename(index={"non-weighted": "non-weighted average", "weighted": "weighted average"})])


def items_needed(p_best: float, gap: float, alpha: float = ALPHA, power: float = 0.8) -> int:
    """Items per group for the two-tailed two-proportion Z-test to separate accuracies ``p_best`` and
    ``p_best - gap`` with the given power (normal approximation, equal sizes)."""
    from scipy.stats import norm
    p2 = p_best - gap
    if not 0 < p2 < p_best <= 1:
        raise ParameterError(f"need 0 < p_best - gap < p_best <= 1, got p_best={p_best}, gap={gap}")
    z_a, z_b = norm.isf(alpha / 2), norm.isf(1 - power)
    mean = (p_best + p2) / 2
    n = (z_a * math.sqrt(2 * mean * (1 - mean)) + z_b * math.sqrt(p_best * (1 - p_best) + p2 * (1 - p2))) ** 2 / gap**2
    return math.ceil(n)


# ---------------------------------------------------------------- manual review

def read_reviews(path: str | Path) -> pd.DataFrame:
    """A reviews CSV (written by :func:`export_warnings`, ``review`` filled with pass, fail or left blank), checked;
    its columns are :data:`REVIEW_COLUMNS` with ``review`` stripped."""
    from analysis.data.reading import read_table

    review = read_table(path, columns=list(REVIEW_COLUMNS), dtype=str,
                        hint="write the file with 'testsuite review export'")
    review["review"] = review["review"].str.strip()
    bad = sorted(set(review["review"]) - {"", PASS, FAIL})
    if bad:
        raise DataError(f"{path}: the review column holds {bad[:5]}; use 'pass', 'fail' or leave it blank")
    twice = review.duplicated(["item_id", "system", "output"])
    if twice.any():
        first = review[twice].iloc[0]
        raise DataError(f"{path}: the output of system {first['system']} for item {first['item_id']} is reviewed twice")
    return review


def _review_keys(table: pd.DataFrame) -> pd.MultiIndex:
    """(item_id, system, output) of each row: a review holds for the output it judged, not for a new one."""
    if "output" not in table.columns:
        raise DataError("the judgements have no output column; write them with 'testsuite judge'")
    return pd.MultiIndex.from_arrays([table["item_id"].astype(str), table["system"].astype(str),
                                      table["output"].fillna("").astype(str)])


def export_warnings(judgements: pd.DataFrame, rules: dict[str, SuiteRule], path: str | Path) -> dict[str, int]:
    """Write the warnings as a reviews CSV (columns :data:`REVIEW_COLUMNS`; a reviewer fills ``review`` with pass
    or fail), atomically; outputs already decided by manual review come with their review filled.

    No review is lost: when ``path`` already holds reviews, a warning of the same output of the same item and
    system takes its review, and the reviews that match no such warning stay at the end of the file. Returns the
    counts ``warnings`` (rows to review, reviewed or not), ``reviewed`` (of those) and ``other`` (the reviews
    kept at the end).
    """
    from analysis.io import write_atomic

    reviewed = judgements["decided_by"].eq("manual review") if "decided_by" in judgements else False
    rows = judgements[judgements["judgement"].eq(WARNING) | reviewed].copy()
    rows["source"] = rows["item_id"].map(lambda i: rules[i].source if i in rules else "")
    rows["review"] = rows["judgement"].where(rows["judgement"] != WARNING, "")
    other = pd.DataFrame(columns=list(REVIEW_COLUMNS))
    if Path(path).is_file():
        earlier = read_reviews(path)
        earlier = earlier[earlier["review"] != ""]
        known = _review_keys(earlier)
        carried = pd.Series(earlier["review"].to_numpy(), index=known).reindex(_review_keys(rows)).fillna("")
        rows["review"] = rows["review"].where(rows["review"] != "", carried.to_numpy())
        other = earlier[~known.isin(_review_keys(rows))]
    table = pd.concat([rows[list(REVIEW_COLUMNS)], other[list(REVIEW_COLUMNS)]])
    write_atomic(path, table.to_csv(index=False))
    return {"warnings": len(rows), "reviewed": int((rows["review"] != "").sum()), "other": len(other)}


def apply_reviews(judgements: pd.DataFrame, reviewed: str | Path) -> pd.DataFrame:
    """``judgements`` with each warning replaced by its review (pass or fail; a blank review leaves it a warning).

    A review applies to the output it judged: one of another output (the system was run again) or of an output
    that is no longer a warning (the rules were refined) is not applied. Reviewed rows get ``decided_by`` =
    ``manual review``; ``attrs["reviews"]`` counts the reviews ``applied`` and ``not applied``.
    """
    review = read_reviews(reviewed)
    decided = review[review["review"] != ""]
    decided = pd.Series(decided["review"].to_numpy(), index=_review_keys(decided))
    out = judgements.copy()
    keys = _review_keys(out)
    hit = keys.isin(decided.index) & (out["judgement"] == WARNING).to_numpy()
    out.loc[hit, "judgement"] = decided.reindex(keys[hit]).to_numpy()
    out.loc[hit, "decided_by"] = "manual review"
    out.attrs["reviews"] = {"applied": int(hit.sum()), "not applied": len(decided) - int(hit.sum())}
    return out


# ---------------------------------------------------------------- the real suites in the dataset cache

SUITE_DATASETS = ("dfki_mt_testsuite", "wmt_dfki_testsuite_outputs")  # the suite's items and the judged outputs


def suite_paths(campaign: str, pair: str = "de-en") -> tuple[Path, Path]:
    """(items.json, outputs) of ``campaign``: ``"demo"`` (embedded) or ``"wmt22"``/``"wmt23"`` from the dataset
    cache (registry entries ``dfki_mt_testsuite`` and ``wmt_dfki_testsuite_outputs``, which ``make data`` fetches),
    whose files are checked against their registered sha256; a missing or altered file is a :class:`DataError`."""
    if campaign == "demo":
        return demo_paths()
    from analysis.data import datasets

    if campaign not in ("wmt22", "wmt23") or pair not in ("de-en", "en-de"):
        raise ParameterError(f"campaign must be demo, wmt22 or wmt23 and pair de-en or en-de, got {campaign}, {pair}")
    cache = datasets.data_dir()
    items, outputs = SUITE_DATASETS
    paths = {items: cache / items / "testset" / pair / "items.json",
             outputs: cache / outputs / f"{campaign}.{pair}.dfki_items.jsonl"}
    for name, path in paths.items():  # the files of this pair first, so that a missing one is the one named
        if not path.is_file():
            raise DataError(f"dataset {name!r} is not in the cache: {path} is missing; run `make data` or "
                            f"`python -m analysis datasets fetch {name}`")
    for name in paths:
        datasets.verify(name)
    return paths[items], paths[outputs]
