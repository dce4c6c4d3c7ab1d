"""The written rules of the paper's claims and how a verdict follows from them: the finding box a chapter opens
with. The claims themselves, one function each, are :mod:`analysis.findings`.

**How a verdict is reached.** Each claim of the paper is split into the sub-claims the paper states, and each
sub-claim is a :class:`Rule`: a direction (when it holds) and a size tolerance. The rules are listed once, in
:data:`RULES`, and the book's methods page collects them in one table. A rule marked *main* is the claim itself;
where the paper makes it for several comparisons (two datasets, two samplers), there is one main sub-claim for each.
A size rule applies only where the paper gives a size for the data a run is or imitates. The verdict
(:func:`judge`) is

- "agrees" when every sub-claim holds;
- "disagrees" when no main sub-claim holds;
- "partly agrees" otherwise, and the finding names the sub-claims that hold and those that do not;
- "cannot be checked" when no main sub-claim could be measured (no data, no comparison); no number is then stated.

Each function returns a :class:`Finding`: the question, the paper's answer with its numbers (read from the paper's
tables), ours with our numbers, the sub-claims, and the verdict that follows from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from analysis import tables

AGREES, PARTLY, DISAGREES, UNCHECKED = "agrees", "partly agrees", "disagrees", "cannot be checked"
VERDICTS = (AGREES, PARTLY, DISAGREES, UNCHECKED)
CITE = "{cite}`pandita2026multilevel`"
QUESTIONS = {
    "rq1": "Does accounting for rater behaviour across items give higher p-values than ignoring it?",
    "rq2": "Does modelling raters change how many items and how many ratings per item a reliable test needs?",
    "rq3": "What do distinct rater sets on batches of items cost?",
    "rq4": "How does cutting the rater pool to a few raters change the p-values, and do a few raters suffice?",
    "distribution": "Do distribution metrics reach significance with more ratings per item than vote metrics?",
}
# the short claim each question's finding checks (the first column of the intro's results table)
CLAIMS = {
    "rq1": "Modelling raters across items raises p-values and budgets",
    "rq2": "Modelling raters raises the budget and the best K",
    "distribution": "Distribution metrics need a smaller budget and a larger K than vote metrics",
    "rq3": "Distinct rater sets per batch raise the budget",
    "rq4": "A pool of a few raters pulls the K curves apart",
}
# one step of the paper's budget grid (1,000 -> 2,500): the tolerance on a budget or a ratio of budgets
BUDGET_STEP = 2.5
# the paper's grid has no K between 10 and 20, so a best K falls in one of two classes: K <= 10 or K >= LARGE_K
LARGE_K = 20


@dataclass(frozen=True)
class Rule:
    """One sub-claim's written rule: its name, when it holds (direction) and its size tolerance."""

    name: str
    holds_when: str
    size: str
    main: bool = False


@dataclass
class SubClaim:
    """One rule checked on one run: the paper's value, ours, and whether it holds (``None``: not measured)."""

    rule: Rule
    paper: str
    ours: str
    holds: bool | None
    subject: str = ""

    @property
    def name(self) -> str:
        return f"{self.subject}: {self.rule.name}" if self.subject else self.rule.name

    @property
    def main(self) -> bool:
        return self.rule.main

    @property
    def mark(self) -> str:
        return {True: "holds", False: "does not hold", None: "not measured"}[self.holds]


def judge(claims: list[SubClaim]) -> str:
    """The verdict the rules give (module docstring): all hold, no main one holds, or some in between."""
    mains = [c for c in claims if c.main]
    if not mains or all(c.holds is None for c in mains):
        return UNCHECKED
    if not any(c.holds for c in mains):
        return DISAGREES
    return AGREES if all(c.holds for c in claims) else PARTLY


@dataclass
class Finding:
    """A claim checked on one run of the book: question, the paper's answer, ours, sub-claims and a verdict.

    With sub-claims the verdict is :func:`judge`'s; a given verdict must match it.
    """

    question: str
    paper: str
    ours: str
    verdict: str | None = None
    numbers: dict = field(default_factory=dict)
    claims: list[SubClaim] = field(default_factory=list)
    claim: str = ""

    def __post_init__(self):
        judged = judge(self.claims) if self.claims else None
        if self.verdict is None:
            self.verdict = judged or UNCHECKED
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}; choose from {VERDICTS}")
        if judged is not None and self.verdict != judged:
            raise ValueError(f"verdict {self.verdict!r} does not follow from the sub-claims ({judged!r})")

    @property
    def checked(self) -> bool:
        return self.verdict != UNCHECKED

    def claims_markdown(self) -> str:
        """The sub-claims as a Markdown list: each with the paper's value, ours, and whether it holds."""
        if not self.checked:
            return ""
        return "\n".join(f"- *{c.name}*{' (main)' if c.main else ''}: the paper: {c.paper}; ours: {c.ours}; "
                         f"**{c.mark}** (rule: {c.rule.holds_when}; size: {c.rule.size})." for c in self.claims)

    def markdown(self, title: str = "Finding") -> str:
        """The finding box as MyST Markdown (an admonition), for ``{glue:md}`` with ``:format: myst``."""
        kind = {AGREES: "tip", PARTLY: "note", DISAGREES: "warning", UNCHECKED: "important"}[self.verdict]
        claims = f"**Sub-claims**, by the rules of {{ref}}`verdict-rules`:\n\n{self.claims_markdown()}\n\n" \
            if self.checked and self.claims else ""
        return (f":::{{admonition}} {title}: {self.verdict}\n:class: {kind} finding\n\n"
                f"**Question.** {self.question}\n\n**The paper** {CITE}. {self.paper}\n\n"
                f"**This book.** {self.ours}\n\n{claims}**Verdict.** Our run {self.verdict_sentence()}\n:::\n")

    def verdict_phrase(self) -> str:
        """``agrees with the paper`` … ``cannot be checked against the paper``, to complete "our run …"."""
        return "cannot be checked against the paper" if self.verdict == UNCHECKED else f"{self.verdict} with the paper"

    def verdict_sentence(self) -> str:
        """The verdict as a sentence; "partly agrees" names the sub-claims that hold and those that do not."""
        if self.verdict == UNCHECKED:
            return "cannot check this claim: see above for what is missing."
        if self.verdict != PARTLY:
            return f"{self.verdict} with the paper."
        held = [c.name for c in self.claims if c.holds]
        failed = [c.name for c in self.claims if not c.holds]
        return (f"partly agrees with the paper: {_names(held)} {'holds' if len(held) == 1 else 'hold'}; "
                f"{_names(failed)} {'does' if len(failed) == 1 else 'do'} not.")

    def row(self) -> dict:
        """The finding as one row of the intro's results table: claim, the paper, this book, verdict."""
        if not self.checked:
            return {"claim": self.claim, "paper": "; ".join(c.paper for c in self.claims) or self.paper,
                    "ours": "not checked on this build: the data it needs did not run", "verdict": self.verdict}
        return {"claim": self.claim,
                "paper": "; ".join(f"{c.name}: {c.paper}" for c in self.claims),
                "ours": "; ".join(f"{c.ours} ({c.mark})" for c in self.claims),
                "verdict": self.verdict}

    def glue(self, key: str, title: str = "Finding") -> None:
        """Glue the box as ``<key>`` (Markdown), the verdict as ``<key>_verdict``, the answer as ``<key>_ours``,
        and the intro's row as plain text: ``<key>_row_claim``, ``_row_paper``, ``_row_ours``, ``_row_verdict``."""
        from IPython.display import Markdown
        from myst_nb import glue

        from analysis.glue import PlainText

        glue(key, Markdown(self.markdown(title)), display=False)
        glue(f"{key}_verdict", Markdown(self.verdict_phrase()), display=False)
        glue(f"{key}_ours", Markdown(self.ours), display=False)
        for column, text in self.row().items():
            glue(f"{key}_row_{column}", PlainText(text), display=False)

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        return f"{self.question}\nPaper: {self.paper}\nOurs: {self.ours}\nVerdict: {self.verdict}"


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _label(run) -> str:
    return tables.run_label(*tables._as_run(run))


def _within(ours: float, paper: float, factor: float = BUDGET_STEP) -> bool:
    """Whether two positive sizes differ by at most ``factor`` either way."""
    return bool(ours > 0 and paper > 0 and max(ours / paper, paper / ours) <= factor * (1 + 1e-9))


def _k_class(k: float) -> str:
    return f"K ≥ {LARGE_K}" if k >= LARGE_K else "K ≤ 10" if k <= 10 else f"between 10 and {LARGE_K}"


def _x(ratio: float) -> str:
    return f"×{ratio:.3g}"


# ------------------------------------------------------------------------------------------ the rules

ANY_SIZE = "any: the paper states no size"
PAPER_SIZE = f"within a factor {BUDGET_STEP:g} (one step of the budget grid) of the paper's, on its data only"
NEEDS_MORE = Rule("needs a larger budget",
                  "by the Table 1 rule the modelled sampler needs more (a larger smallest significant budget, or the "
                  "same budget with a higher p-value) for more than half of the metrics significant under either",
                  ANY_SIZE)
BUDGET_SIZE = Rule("budget ratio as the paper's",
                   "the median ratio of the two samplers' smallest significant budgets (metrics significant under "
                   "both) is the paper's for the same data", PAPER_SIZE)
RULES: dict[str, tuple[Rule, ...]] = {
    "rq1": (
        Rule("higher p-values", "the modelled sampler's p-value is the higher in more than half of the cells where "
             "the two differ, and the median difference is not negative", ANY_SIZE, main=True),
        NEEDS_MORE,
    ),
    "rq2": (
        replace(NEEDS_MORE, main=True),
        BUDGET_SIZE,
        Rule("best K larger", "over all comparisons, the best K at the smallest significant budget is larger under "
             "the modelled sampler for more metrics than it is smaller", ANY_SIZE),
    ),
    "distribution": (
        Rule("smaller budget", "under S2, the distribution metrics' median smallest significant budget is below the "
             "vote metrics'", ANY_SIZE, main=True),
        Rule("budget ratio as the paper's", "the vote metrics' median budget over the distribution metrics' is the "
             "paper's", f"within a factor {BUDGET_STEP:g} (one step of the budget grid)"),
        Rule("larger best K", "the distribution metrics' median best K is above the vote metrics'", ANY_SIZE),
        Rule("best K classes as the paper's", f"each family's median best K is in the paper's class (K ≤ 10 or "
             f"K ≥ {LARGE_K}; the grid has no K in between)", "the class"),
    ),
    "rq3": (
        Rule("S3 needs a larger budget", "S3's smallest significant budget is larger than S2's (or only S2 reaches "
             "significance) for more than half of the metrics significant under either, and for more than need a "
             "smaller one", ANY_SIZE, main=True),
        Rule("for every metric", "S3 needs the larger budget for every metric significant under either sampler",
             "one metric may fall short"),
        BUDGET_SIZE,
        Rule("wider null", "the median ratio of null standard deviations (S3 over S2, over cells and metrics) is "
             "above 1", ANY_SIZE),
    ),
    "rq4": (
        Rule("K curves further apart", "with the cut pool, the median range of p-values across K (over metrics and "
             "budgets) is larger than with all raters", ANY_SIZE + " (Figure 3 only)", main=True),
    ),
}


def rules_table() -> pd.DataFrame:
    """Every rule, one row each, in the order of :data:`RULES` (the methods page's table holds the same text)."""
    return pd.DataFrame([{"claim": CLAIMS[key], "sub-claim": rule.name, "main": "yes" if rule.main else "",
                          "holds when": rule.holds_when, "size tolerance": rule.size}
                         for key, rules in RULES.items() for rule in rules])
