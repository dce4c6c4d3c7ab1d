"""The real-data chapter's sections (each claim checked on real sets by the RQ chapters' functions), the registry's
table of those sets, and the opening of RQ1's sparse section."""

from __future__ import annotations

import re

import pandas as pd

from analysis.book.chapter import Setup, data_kind, glue_text, load_available, missing_sentence
from analysis.book.glue import PlainText
from analysis.data import datasets
from analysis.data.annotations import AnnotationDataset
from analysis.paper import tables
from analysis.wording import counted


def sparse_section(book: Setup, data: list[AnnotationDataset], budgets, ks, epsilon: float):
    """RQ1's sparse section: S4 beside S2 on ``data`` at ``budgets`` x ``ks``, judged by RQ1's rules; glues
    ``rq1_sparse_finding`` and ``rq1_sparse_intro`` and returns (results or None, comparisons)."""
    from analysis.book import glue
    from analysis.paper import findings

    comparisons = book.comparisons(data)
    pairs = book.pairs(comparisons)
    results = book.simulate(pairs, budgets=budgets, ks=ks) if comparisons else None
    margins = findings.margin_results(book, pairs, budgets=budgets, ks=ks)  # as every verdict's, over further seeds
    glue.finding(findings.with_margin(
        lambda r: findings.raters_raise_p_values(r, comparisons, epsilon, missing="No sparse dataset ran, so this "
                                                 "section has nothing to show."), results, book.params["seed"],
        margins), "rq1_sparse_finding")
    glue_text(rq1_sparse_intro=sparse_intro(data, budgets, ks), rq1_sparse_data=PlainText(data_kind(data)))
    return results, comparisons


def sparse_intro(data: list[AnnotationDataset], budgets, ks) -> str:
    """The opening of RQ1's sparse section: what it runs, or, without a sparse dataset, that it runs nothing."""
    if not data:
        return "This run has no sparse dataset (the chapter's `sparse_dataset` parameter is None), so this section is empty."
    names = ", ".join(f"`{ds.name}`" for ds in data)
    return (f"On {names} each item is rated by a few of a large pool of raters, and each rater rates many items. S2 "
            "treats an item's raters as new people; S4 draws a sequence of the pool's raters with replacement, and a "
            "drawn item takes the labels of the first K raters in it who rated the item, so that a drawn rater's "
            "labels count on every drawn item they rated ({ref}`the methods page <methods-s4>`). The "
            f"section runs both on budgets up to {max(budgets):,} and K in {', '.join(map(str, ks))} (fewer cells "
            "than the sections above: S4 reads every response) and judges the paper's RQ1 claim by the same rules.")


def banner(book: Setup):
    """The chapter's banner: what it ran on, or, with none of its datasets in the cache, one sentence saying that
    it has nothing to show and how to fetch them."""
    from analysis.book.chapter import Banner

    return book.banner() if book.data else Banner("No data in the cache", [
        "This chapter's datasets are not in the dataset cache, so it has nothing to show on this build: run "
        "`make data` to fetch them."], "important")


def load_groups(groups: dict[str, list[str]]) -> dict[str, tuple[list[AnnotationDataset], list[str]]]:
    """For each named group of registered datasets: those in the cache, and the names of those that are not."""
    return {group: load_available(names) for group, names in groups.items()}


def section_text(finding, data: list, missing: list[str], what: str, figure: str = "",
                 chapter_has_data: bool = True) -> str:
    """A real-data section's opening, as Markdown: the finding box when the data allowed a check; otherwise one
    sentence saying what is missing and how to get it (and never a verdict); nothing where the whole chapter ran
    without data (its opening note says so once, in one sentence)."""
    if not data and not chapter_has_data:
        return ""
    parts = []
    if missing:
        parts.append(missing_sentence(missing, f"{what} has nothing to show" if not data
                                      else f"{what} uses only the other{'s' if len(data) > 1 else ''}"))
    if data and finding is not None and finding.checked:
        parts.append(finding.markdown(f"Finding on {counted(len(data), 'dataset')}"))
    elif data and finding is not None:
        parts.append(finding.ours)
    if data and figure:
        parts.append(figure)
    return "\n\n".join(parts)


def real_data_sections(book: Setup, groups: dict, epsilon: float, sparse_ks=(1, 2, 3, 5, 10)) -> tuple[dict, dict, dict]:
    """Run and check the real-data chapter's four groups (crossed, batched, large_k, sparse).

    Each claim is checked by the same function as in the chapter that states it. The sparse sets (and the set with
    many raters per item) run under S2 on the chapter's grid and, for RQ1's check, under S4 beside S2 at ``sparse_ks`` only (S4 reads every response;
    results ``"sparse_raters"``). Glues ``real_<group>`` (the section's opening: the finding box, or one sentence
    naming what is missing) and ``real_summary``; returns the results per group (``None`` where no dataset is in the
    cache), the sampler comparisons per group, and each group's first comparison (``None`` where there is none).
    """
    from analysis.paper import findings

    pairs = {g: book.comparisons(data) for g, (data, _) in groups.items()}
    runs = {g: [(ds, s) for ds, s in book.pairs(data=data) if g not in ("sparse", "large_k") or s == "S2"]
            for g, (data, _) in groups.items()}
    results = {g: book.simulate(runs[g]) if data else None for g, (data, _) in groups.items()}
    results["sparse_raters"] = (book.simulate(book.pairs(pairs["sparse"]), ks=list(sparse_ks)) if pairs["sparse"]
                                else None)
    # each verdict's margin over further seeds, as in the RQ chapters; the sparse sets' on S4's own K
    margins = {g: findings.margin_results(book, book.pairs(data=data)) if data and g != "sparse" else {}
               for g, (data, _) in groups.items()}
    margins["sparse_raters"] = findings.margin_results(book, book.pairs(pairs["sparse"]), ks=list(sparse_ks))

    def checked(group, check):
        return findings.with_margin(check, results[group], book.params["seed"], margins[group])

    crossed = checked("crossed", lambda r: findings.raters_raise_p_values(r, pairs["crossed"], epsilon))
    modelled, independent = pairs["batched"][0] if pairs["batched"] else (None, None)
    batched = checked("batched", lambda r: findings.batches_raise_budget(r, modelled, independent, epsilon))
    batched_raters = checked("batched", lambda r: findings.raters_raise_p_values(r, pairs["batched"], epsilon))
    large = checked("large_k", lambda r: findings.distribution_metrics_favour_large_k(r, epsilon))
    sparse = checked("sparse_raters", lambda r: findings.raters_raise_p_values(
        r, pairs["sparse"], epsilon, missing="No sparse set in the cache has raters who rate several items."))
    shown = f", {pairs['crossed'][0][0][0]}," if pairs["crossed"] else ""  # the dataset of the first comparison
    sections = {
        "crossed": (crossed, "the RQ1 check on crossed data",
                    f"{{numref}}`fig-real-crossed` draws the p-value curves of the first crossed set{shown} under both "
                    "samplers."),
        "batched": (batched, "the RQ3 check on batched data", (batched_raters.ours + " {numref}`fig-real-batched` "
                    "draws its p-value curves.") if batched_raters.checked else ""),
        "large_k": (large, "the large-K check",
                    "{numref}`fig-real-large-k` shows JSD's p-value over every (budget, K) cell."),
        "sparse": (sparse if pairs["sparse"] else None, "the sparse section",
                   f"The check runs S4 beside S2 at K = {', '.join(map(str, sparse_ks))}: the first table below "
                   "counts, cell by cell, how often S4's p-value is the higher; the second gives both samplers' "
                   "smallest significant budgets at those K, the ones the finding compares; the third gives S2's "
                   "on the chapter's whole grid (every K), the ones an analysis that treats an item's raters as new "
                   "people would report."),
    }
    from analysis.book import missing as gaps

    for g, (_, what, _) in sections.items():
        gaps.record(book.chapter, what, groups[g][1])
    glue_text(**{f"real_{g}": section_text(finding, groups[g][0], groups[g][1], what, figure, bool(book.data))
                 for g, (finding, what, figure) in sections.items()},
              real_summary=closing(book.data, [("RQ1, crossed sets", crossed), ("RQ3, batched set", batched),
                                               ("RQ1, batched set", batched_raters), ("RQ2, many raters", large),
                                               ("RQ1, sparse sets (S4)", sparse)]))
    return results, pairs, {g: found[0] if found else None for g, found in pairs.items()}


def closing(data: list, checks) -> str:
    """The chapter's closing list of the claims checked, as Markdown; one sentence where the chapter ran without any
    of its datasets, which promises nothing."""
    from analysis.paper import findings

    if not data:
        return "With none of its datasets in the cache, this build checks no claim on real data."
    return f"On this build:\n\n{findings.summary(checks)}"


def _source(url: str | None) -> str:
    """Where a registered file comes from: ``github.com/owner/repository`` for GitHub (the registry pins the
    commit), else the host."""
    if not url:
        return "built locally from the upstream files"
    found = re.match(r"https://raw\.githubusercontent\.com/([^/]+)/([^/]+)/", url)
    if found:
        return f"github.com/{found[1]}/{found[2]}"
    return re.sub(r"^https?://([^/]+).*", r"\1", url)


# the registry table's two halves, each narrow enough for a page: what a set is and its size; where it comes from
REGISTRY_PARTS = {"size": ["dataset", "what it is", "items", "raters", "ratings", "in the cache"],
                  "origin": ["dataset", "source", "licence"]}


def registry_table(names: list[str], part: str | None = None) -> tables.Table:
    """The registered datasets ``names`` as a citation table: what each is, its source, licence and size (from the
    registry, so it is shown whether or not the files are in the cache); ``part`` (``"size"`` or ``"origin"``)
    keeps one half of its columns (:data:`REGISTRY_PARTS`)."""
    rows = []
    for name in names:
        entry = datasets.registered(name)
        counts = entry["counts"]
        files = [f for f in entry["files"] if f.get("role") != "upstream"] or entry["files"]
        rows.append({"dataset": name, "what it is": entry["description"],
                     "source": "; ".join(dict.fromkeys(_source(f["url"]) for f in files)),
                     "licence": entry["licence"], "items": counts.get("items"), "raters": counts.get("raters"),
                     "ratings": counts.get("ratings"), "in the cache": entry["in_cache"]})
    frame = pd.DataFrame(rows)
    caption = {"size": "what each set is and its size, from the dataset registry that ships with the package",
               "origin": "where each set comes from and its licence, from the dataset registry"}.get(
        part, "from the dataset registry that ships with the package")
    return tables.Table(frame[REGISTRY_PARTS[part]] if part else frame, caption)
