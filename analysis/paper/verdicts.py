"""The written rules of the paper's claims and how a verdict follows from them: the finding box a chapter opens
with. The claims themselves, one function each, are :mod:`analysis.paper.findings`.

**How a verdict is reached.** Each claim of the paper is split into the sub-claims the paper states, and each
sub-claim is a :class:`VerdictRule`: the paper's sentence or Table 1 cells it rests on, a direction (when it holds) and a
size tolerance, which is what the paper's own numbers allow (the spread of its cells), never a factor of ours. A
smallest significant budget at the grid's floor under both samplers is not comparable, never a failure. The rules
are listed once, in :data:`RULES`, and the book's methods page collects them in one table. A rule marked *main*
is the claim itself; where the paper makes it for several comparisons (two datasets, two samplers), there is one
main sub-claim for each.
A size rule applies only where the paper gives a size for the data a run is or imitates. The verdict
(:func:`judge`) is

- "agrees" when every sub-claim holds;
- "disagrees" when no main sub-claim holds;
- "partly agrees" otherwise, and the finding names the sub-claims that hold and those that do not;
- "cannot be checked" when no main sub-claim could be measured (no data, no comparison); no number is then stated.

Each function returns a :class:`Finding`: the question, the paper's answer with its numbers (read from the paper's
tables), ours with our numbers, the sub-claims, and the verdict that follows from them. :func:`over_seeds` adds
each sub-claim's margin: its value on further seeds and whether it flips.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace


from analysis.paper import tables
from analysis.wording import listed

AGREES, PARTLY, DISAGREES, UNCHECKED = "agrees", "partly agrees", "disagrees", "cannot be checked"
VERDICTS = (AGREES, PARTLY, DISAGREES, UNCHECKED)
CITE = "{cite}`pandita2026multilevel`"
QUESTIONS = {
    "rq1": "Does accounting for rater behaviour across items give higher p-values than ignoring it?",
    "rq2": "Does modelling raters change how many items and how many ratings per item a reliable test needs?",
    "rq3": "What do distinct rater sets on batches of items cost?",
    "rq4": "How does cutting the rater pool to a few raters change the p-values, beside the full pool and Toxicity?",
    "distribution": "Do distribution metrics reach significance with more ratings per item than vote metrics?",
}
# the short claim each question's finding checks (the first column of the intro's results table)
CLAIMS = {
    "rq1": "Modelling raters across items raises p-values and budgets",
    "rq2": "Modelling raters raises the budget and the best K",
    "distribution": "Distribution metrics need a smaller budget and a larger K than vote metrics",
    "rq3": "Distinct rater sets per batch raise the budget",
    "rq4": "A pool of a few raters separates the K curves, as on Toxicity",
}
@dataclass(frozen=True)
class VerdictRule:
    """One sub-claim's written rule: its name, the paper's words or Table 1 cells it rests on (``source``), when it
    holds and its size tolerance. A rule without a source is refused: a sub-claim exists only where the paper
    states it."""

    name: str
    source: str
    holds_when: str
    size: str
    main: bool = False
    reading: bool = False  # the paper's words, made measurable by a comparison the paper does not make

    def __post_init__(self):
        if not self.source.strip():
            raise ValueError(f"the rule {self.name!r} quotes no source in the paper")


@dataclass
class SubClaim:
    """One rule checked on one run: the paper's value, ours, and whether it holds (``None``: not measured).

    ``subject`` names our comparison (our data, sampler), ``paper_subject`` the paper's (its dataset names only).
    ``seeds`` holds, once :func:`over_seeds` has run, ``(seed, ours, holds)`` for every seed, this run's first.
    """

    rule: VerdictRule
    paper: str
    ours: str
    holds: bool | None
    subject: str = ""
    paper_subject: str = ""
    seeds: list = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"{self.subject}: {self.rule.name}" if self.subject else self.rule.name

    @property
    def shown_name(self) -> str:
        """The name as a page shows it: a sub-claim that is the book's reading of the paper's words says so."""
        return self.name + (" (the book's reading)" if self.rule.reading else "")

    @property
    def paper_name(self) -> str:
        return f"{self.paper_subject}: {self.rule.name}" if self.paper_subject else self.rule.name

    @property
    def flips(self) -> bool:
        """Whether the sub-claim lands on both sides of its rule over the seeds."""
        return len({holds for _, _, holds in self.seeds}) > 1

    def margin(self) -> str:
        """Our value on every seed and whether it flips ("" before :func:`over_seeds`)."""
        if len(self.seeds) < 2:
            return ""
        held = sum(bool(h) for _, _, h in self.seeds)
        values = "; ".join(f"seed {seed}: {ours}" for seed, ours, _ in self.seeds)
        return (f"over {len(self.seeds)} seeds ({values}) it holds on {held} of {len(self.seeds)}, so it "
                + ("**flips between seeds**" if self.flips else "does not flip"))

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

    With sub-claims the verdict is :func:`judge`'s; a given verdict must match it. ``seed_verdicts`` maps each seed
    to its verdict once :func:`over_seeds` has run (this run's seed first).
    """

    question: str
    paper: str
    ours: str
    verdict: str | None = None
    numbers: dict = field(default_factory=dict)
    claims: list[SubClaim] = field(default_factory=list)
    claim: str = ""
    seed_verdicts: dict = field(default_factory=dict)
    data: str = ""  # what the run's data were where not the real sets: "synthetic stand-ins" (:func:`data_words`)

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

    @property
    def flips(self) -> bool:
        """Whether the verdict differs between the seeds of :func:`over_seeds`."""
        return len(set(self.seed_verdicts.values())) > 1

    def claims_markdown(self) -> str:
        """The sub-claims as a Markdown list: each with the paper's value, ours, whether it holds and, after
        :func:`over_seeds`, its margin over the seeds."""
        if not self.checked:
            return ""
        lines = []
        for c in self.claims:
            margin = c.margin()
            lines.append(f"- *{c.shown_name}*{' (main)' if c.main else ''}: the paper"
                         f"{f' ({c.paper_subject})' if c.paper_subject else ''}: {c.paper}; ours: {c.ours}; "
                         f"**{c.mark}** (rule: {c.rule.holds_when}; size: {c.rule.size})"
                         + (f"; {margin}." if margin else "."))
        if any(c.rule.reading for c in self.claims):
            lines.append("\nA sub-claim marked *the book's reading* turns the paper's words into a comparison the "
                         "paper does not make (the rule's source quotes the words); its verdict is on that reading.")
        return "\n".join(lines)

    def markdown(self, title: str = "Finding") -> str:
        """The finding box as MyST Markdown (an admonition), for ``{glue:md}`` with ``:format: myst``."""
        kind = {AGREES: "tip", PARTLY: "note", DISAGREES: "warning", UNCHECKED: "important"}[self.verdict]
        claims = f"**Sub-claims**, by the rules of {{ref}}`verdict-rules`:\n\n{self.claims_markdown()}\n\n" \
            if self.checked and self.claims else ""
        on = f" on {self.data}" if self.data and self.checked else ""
        return (f":::{{admonition}} {title}{on}: {self.verdict}\n:class: {kind} finding\n\n"
                f"**Question.** {self.question}\n\n**The paper** {CITE}. {self.paper}\n\n"
                f"**This book.** {self.ours}\n\n{claims}**Verdict.** Our run{on} {self.verdict_sentence()}\n:::\n")

    def answer(self) -> str:
        """The answer to the question in words, from the sub-claims alone (what a chapter closes with): yes, in
        part or no, the claim in the book's words, which sub-claims carry it and which do not, and whether another
        seed answers otherwise; without a measurement, what is missing."""
        if not self.checked:
            return f"This build cannot answer the question. {self.ours}"
        claim = self.claim or "the paper's claim"
        build = f"this build's {self.data}" if self.data else "this build"
        held = [c.shown_name for c in self.claims if c.holds]
        failed = [c.shown_name for c in self.claims if c.holds is False]

        def listed(names):  # names that hold commas of their own ("dices-synthetic, S1: ...") part with semicolons
            if len(names) < 2 or not any("," in n for n in names):
                return _names(names)
            return "; ".join(names[:-1]) + "; and " + names[-1]

        def verb(names, one, many):
            return f"{listed(names)} {one if len(names) == 1 else many}"
        if self.verdict == AGREES:
            text = (f"Yes. On {build}, as the paper says, {claim[:1].lower() + claim[1:]}: "
                    + (f"the one sub-claim, {held[0]}, holds." if len(held) == 1 else
                       f"all {len(held)} sub-claims hold ({listed(held)})."))
        elif self.verdict == PARTLY:
            unmeasured = [c.shown_name for c in self.claims if c.holds is None]
            short = [f"{verb(failed, 'does', 'do')} not"] if failed else []
            short += [f"{listed(unmeasured)} could not be measured"] if unmeasured else []
            # "its main form" holds only where every main sub-claim does; else only part of it does
            form = (f"holds in its main form on {build}, but not in every respect the paper states"
                    if all(c.holds for c in self.claims if c.main) else f"holds on {build} in part of its main form")
            text = (f"In part. The claim “{claim}” {form}: {verb(held, 'holds', 'hold')}, while "
                    f"{' and '.join(short)}.")
        else:
            mains = [c.shown_name for c in self.claims if c.main and c.holds is False]
            text = (f"No. On {build} the claim “{claim}” fails in its main form: {verb(mains, 'does', 'do')} not "
                    "hold" + (f", although {verb(held, 'holds', 'hold')}." if held else "."))
        if self.flips:
            text += (" Another seed answers otherwise (" + "; ".join(
                f"seed {seed}: {verdict}" for seed, verdict in self.seed_verdicts.items())
                + "), so the answer is near the edge of its rules.")
        return text

    def verdict_phrase(self) -> str:
        """``agrees with the paper`` … ``cannot be checked against the paper``, to complete "our run …" (``on
        synthetic stand-ins agrees with the paper`` where the run's data were those)."""
        if self.verdict == UNCHECKED:
            return "cannot be checked against the paper"
        return (f"on {self.data} " if self.data else "") + f"{self.verdict} with the paper" + \
            (" (the verdict flips between seeds)" if self.flips else "")

    def verdict_sentence(self) -> str:
        """The verdict as a sentence; "partly agrees" names the sub-claims that hold and those that do not; a
        verdict that flips between seeds says so, with each seed's verdict."""
        if self.verdict == UNCHECKED:
            return "cannot check this claim: see above for what is missing."
        if self.verdict != PARTLY:
            sentence = f"{self.verdict} with the paper."
        else:
            held = [c.name for c in self.claims if c.holds]
            failed = [c.name for c in self.claims if not c.holds]
            sentence = (f"partly agrees with the paper: {_names(held)} {'holds' if len(held) == 1 else 'hold'}; "
                        f"{_names(failed)} {'does' if len(failed) == 1 else 'do'} not.")
        if len(self.seed_verdicts) > 1:
            by_seed = "; ".join(f"seed {seed}: {verdict}" for seed, verdict in self.seed_verdicts.items())
            sentence += (f" **The verdict flips between seeds** ({by_seed})." if self.flips else
                         f" The verdict is the same on all {len(self.seed_verdicts)} seeds.")
        return sentence

    def row(self) -> dict:
        """The finding as one row of the intro's results table: claim, the paper (its data names and numbers
        only; several sub-claims numbered in both columns), this book (with each sub-claim's seed margin, and each
        seed's verdict where they differ), verdict (its
        seed named where other seeds give another)."""
        if not self.checked:
            return {"claim": self.claim, "paper": "; ".join(c.paper for c in self.claims) or self.paper,
                    "ours": "not checked on this build: the data it needs did not run", "verdict": self.verdict}
        many = len(self.claims) > 1  # numbered, so that a reader matches our value to the paper's sub-claim

        def number(i):
            return f"({i}) " if many else ""

        def named(subjects):  # a subject is named where it changes, not again for each of its sub-claims
            return [f"{s}: " if s and (i == 0 or s != subjects[i - 1]) else "" for i, s in enumerate(subjects)]
        theirs, ours = named([c.paper_subject for c in self.claims]), named([c.subject for c in self.claims])
        return {"claim": self.claim,
                "paper": "; ".join(f"{number(i)}{theirs[i - 1]}{c.rule.name}: {c.paper}" + (
                    " (the book's reading)" if c.rule.reading else "") for i, c in enumerate(self.claims, 1)),
                "ours": "; ".join(f"{number(i)}{ours[i - 1]}{c.rule.name}: {c.ours} ({c.mark}" + (
                    f"; {'flips' if c.flips else 'the same'} over {len(c.seeds)} seeds" if len(c.seeds) > 1
                    else "") + ")" for i, c in enumerate(self.claims, 1)) + (
                    ". The verdict flips between seeds: " + "; ".join(
                        f"seed {seed}: {verdict}" for seed, verdict in self.seed_verdicts.items())
                    if self.flips else ""),
                # a verdict that another seed does not repeat is not the whole answer: the cell names the seeds
                "verdict": self._by_seed() if self.flips else self.verdict}

    def _by_seed(self) -> str:
        """"agrees on seeds 0 and 1; partly agrees on seed 2": each verdict with its seeds, the first seed's first."""
        seeds: dict[str, list] = {}
        for seed, verdict in self.seed_verdicts.items():
            seeds.setdefault(verdict, []).append(seed)
        return "; ".join(f"{verdict} on seed{'s' if len(which) > 1 else ''} {listed(which)}"
                         for verdict, which in seeds.items())

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        return f"{self.question}\nPaper: {self.paper}\nOurs: {self.ours}\nVerdict: {self.verdict}"


def data_words(origins) -> str:
    """What a finding's runs were drawn from, for its words (:attr:`Finding.data`), given their datasets' origins
    (:func:`analysis.paper.tables.origin`): ``"synthetic stand-ins"`` where every one is a stand-in, ``"synthetic
    stand-ins in part"`` where some are, else empty."""
    origins = set(origins)
    if "stand-in" not in origins:
        return ""
    return "synthetic stand-ins" if origins == {"stand-in"} else "synthetic stand-ins in part"


def over_seeds(finding: Finding, seed: int, others: dict) -> Finding:
    """``finding`` (on ``seed``) with its margin: each sub-claim's value and side on every seed of ``others``
    (seed -> the same claim function's :class:`Finding` on that seed's results), and every seed's verdict.

    A sub-claim another seed does not state (its comparison did not run there) counts as not measured there.
    """
    if not finding.checked:
        return finding
    by_seed = {seed: finding, **others}
    for c in finding.claims:
        c.seeds = []
        for s, other in by_seed.items():
            match = next((o for o in other.claims if o.name == c.name), None)
            c.seeds.append((s, match.ours, match.holds) if match else (s, "not measured", None))
    finding.seed_verdicts = {s: other.verdict for s, other in by_seed.items()}
    return finding


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _label(run) -> str:
    return tables.run_label(*tables.as_run(run))


def _x(ratio: float) -> str:
    return f"×{ratio:.3g}"


# ------------------------------------------------------------------------------------------ the rules

ANY_SIZE = "any: the paper states no size"
NEEDS_MORE = VerdictRule(
    "needs a larger budget", "“S1 and S3 result in higher p-value estimates and need higher budgets” (RQ1); "
    "“Accounting for rater behavior increases the budget required” (RQ2)",
    "by the Table 1 rule, more metrics need a larger smallest significant budget under the modelled sampler (or "
    "reach significance only under the other) than a smaller one; a metric significant at the grid's smallest "
    "budget under both samplers, or under neither, is not comparable", ANY_SIZE)
BUDGET_SIZE = VerdictRule(
    "budget ratio as the paper's", "Table 1's budgets on the same data: on DICES S1 and S2 equal for 7 of 7 metrics "
    "significant under both; on Toxicity S3 over S2 from ×2 to ×5",
    "the median ratio of the two samplers' smallest significant budgets (metrics comparable and significant under "
    "both) lies within the range of the paper's per-metric ratios on the data ours are or imitate",
    "the paper's own spread: ×1 exactly on DICES, ×2 to ×5 on Toxicity; on its data only")
RULES: dict[str, tuple[VerdictRule, ...]] = {
    "rq1": (
        VerdictRule("higher p-values", "“S1 and S3 result in higher p-value estimates” (RQ1; Figures 1 and 2)",
             "the modelled sampler's p-value is the higher in more than half of the cells where the two differ, "
             "and the median difference is not negative", ANY_SIZE, main=True),
        NEEDS_MORE,
    ),
    "rq2": (
        replace(NEEDS_MORE, main=True),
        BUDGET_SIZE,
        VerdictRule("best K larger", "“The number of raters required also increases when modeling raters” (RQ2: MAE's K "
             "40 → 100 on DICES, 9 → 20 on Toxicity)", "over all comparisons, the best K at the smallest "
             "significant budget is larger under the modelled sampler for more metrics than it is smaller",
             ANY_SIZE),
    ),
    "distribution": (
        VerdictRule("smaller budget", "distribution-sensitive metrics “achieve significance at a lower total budget” "
             "than the vote metrics (section 5, under S2 on DICES and D3code)", "under S2, the distribution "
             "metrics' median smallest significant budget is below the vote metrics' (both at the grid's smallest "
             "budget: not comparable)", ANY_SIZE, main=True),
        VerdictRule("distribution budget as the paper's", "“at a lower total budget of NK=1000” (section 5)",
             "the distribution metrics' median smallest significant budget lies within the paper's range for them",
             "the paper's own spread over the four distribution metrics on DICES and D3code: 1,000 to 2,500; on "
             "its data only"),
        VerdictRule("vote budget as the paper's", "vote metrics “achieve significance at a higher total budget of "
             "NK>=2500” (section 5)", "the vote metrics' median smallest significant budget is at least 2,500",
             "the paper's bound, 2,500; on its data only"),
        VerdictRule("larger best K", "“while requiring a higher K” (section 5)", "the distribution metrics' median best "
             "K is above the vote metrics'", ANY_SIZE),
        VerdictRule("best K from 40 to 100", "“a higher K from 40 to 100” (section 5)", "the distribution metrics' "
             "median best K is at least 40 (the grid's largest K is 100)", "the paper's range, 40 to 100"),
        VerdictRule("vote best K as the paper's", "Table 1: the vote metrics' best K under S2 on DICES and D3code",
             "the vote metrics' median best K is on the paper's side of 10 (10 or less, or above)",
             "the class of the paper's median; on its data only"),
    ),
    "rq3": (
        replace(NEEDS_MORE, main=True, source="“the required budget to achieve significance increases” (section 5, "
                "S3 against S2 on Toxicity); “scaling up the evaluation budget” (RQ3)"),
        VerdictRule("for every metric", "“Accuracy, Wins, Recall, and KL-Div” fivefold, “MAE, F1-Score, and JSD” "
             "double (section 5); Precision 1,000 → 2,500 (Table 1)", "S3 needs the larger budget for every "
             "comparable metric significant under either sampler", "none: every metric"),
        BUDGET_SIZE,
        VerdictRule("wider null", "S3 “introduces batch-specific behavior, increasing the overall variance” (RQ3)",
             "the median ratio of null standard deviations (S3 over S2, over cells and metrics) is above 1",
             ANY_SIZE),
    ),
    "rq4": (
        VerdictRule("K curves further apart", "“a separation in both the datasets”, which “may be due to the small "
             "number of raters” (RQ4, Figure 3); the paper shows no curves of the full pool, so the comparison with "
             "them is the book's", "with the cut pool, the median range of p-values across K (over metrics and "
             "budgets) is larger than with all raters", ANY_SIZE + " (Figure 3 only)", main=True, reading=True),
        VerdictRule("like Toxicity", "the cut-DICES p-values “behave similarly to those of the toxicity dataset” (RQ4)",
             "under S2 (the sampler both designs allow), the cut pool's median range across K is closer to "
             "Toxicity's than to the full pool's", ANY_SIZE + " (Figure 3 only)"),
        VerdictRule("Toxicity's curves apart too", "“a separation in both the datasets” (RQ4); the comparison with the "
             "full pool, which the paper does not draw, is the book's", "under S2, Toxicity's median range across K "
             "is larger than the full pool's", ANY_SIZE + " (Figure 3 only)", reading=True),
    ),
}
