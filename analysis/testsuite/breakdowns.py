"""The test-suite source's further tables: verbs by tense and by type, well-filled phenomena, decisive categories.

Macketanz et al. (2018) break their verb category down by tense (their Table 4) and by verb type (Table 5), list
the phenomena with at least 15 valid test sentences (Table 6), and count for each system the *decisive* categories
(those where the Z-test separates some systems) in which it is in the first significance cluster.

The DFKI data has no tense or verb-type field. Both are read from the phenomenon names of the verb category, which
the suite writes ``"<verb type> - <tense>"`` (``"Modal negated - preterite subjunctive II"``). A one-part name
(``"Imperative"``, ``"Future I"``) is a tense, aspect or mood without a type, unless it is a verb type: one of the
source's Table 5 (:data:`VERB_TYPES`) or a name seen before ``" - "`` in the judgements given. The en-de suite has
``"Modal"`` and ``"Modal negated"`` on their own: types without a tense.
"""

from __future__ import annotations

import re

import pandas as pd

from analysis.errors import ParameterError
from analysis.testsuite.suite import (accuracy, averages, cluster_table, marked, percent, scored, warning_rates,
                                without_systems, z_clusters)

VERB_CATEGORY = "Verb tense/aspect/mood"
VERB_TYPES = ("Ditransitive", "Intransitive", "Modal", "Modal negated", "Reflexive", "Transitive")  # its Table 5
MIN_ITEMS = 15  # the source's Table 6: phenomena with at least 15 valid test sentences
_SPLIT = re.compile(r"\s+-\s+")


def verb_parts(judgements: pd.DataFrame) -> pd.DataFrame:
    """The rows of the verb category with two columns added: ``verb type`` and ``tense`` (missing where the
    phenomenon names none); the tense starts with a capital (``"Future I"``)."""
    verbs = judgements[judgements["category"] == VERB_CATEGORY]
    parts = verbs["phenomenon"].astype(str).str.strip().map(lambda name: _SPLIT.split(name, maxsplit=1))
    types = {p[0] for p in parts if len(p) == 2} | set(VERB_TYPES)
    out = verbs.copy()
    out["verb type"] = [p[0] if len(p) == 2 or p[0] in types else None for p in parts]
    out["tense"] = [None if len(p) == 1 and p[0] in types else p[-1][:1].upper() + p[-1][1:] for p in parts]
    return out


def verb_table(judgements: pd.DataFrame, analysis: int = 1, by: str = "tense") -> pd.DataFrame:
    """The source's Table 4 (``by="tense"``) or 5 (``by="verb type"``): accuracy in % as text, one row per tense or
    type (first cluster in bold) and the two average rows (:func:`testsuite.cluster_table`); empty when no verb
    phenomenon names one."""
    if by not in ("tense", "verb type"):
        raise ParameterError(f"by must be 'tense' or 'verb type', got {by!r}")
    verbs = verb_parts(judgements)
    verbs = verbs[verbs[by].notna()]
    return pd.DataFrame() if scored(verbs, analysis).empty else cluster_table(verbs, analysis, by)


def valid_items(judgements: pd.DataFrame, analysis: int = 1) -> pd.Series:
    """Valid test sentences per phenomenon: the items an analysis scores, for the system with the fewest (under
    Analysis 1 every system has the same)."""
    kept = scored(judgements, analysis)
    return kept.groupby(["phenomenon", "system"]).size().groupby("phenomenon").min()


def well_filled(judgements: pd.DataFrame, analysis: int = 1, min_items: int = MIN_ITEMS) -> pd.DataFrame:
    """The source's Table 6: the phenomena with at least ``min_items`` valid test sentences (rows), with the
    columns ``category``, ``items`` (:func:`valid_items`) and one per system (accuracy in % as text, first
    cluster in bold)."""
    if min_items < 1:
        raise ParameterError(f"min_items must be at least 1, got {min_items}")
    items = valid_items(judgements, analysis)
    chosen = items[items >= min_items].index
    category = judgements.drop_duplicates("phenomenon").set_index("phenomenon")["category"]
    text = marked(judgements, analysis, "phenomenon").loc[chosen]
    return pd.concat([category.reindex(chosen), items.reindex(chosen).rename("items")], axis=1).join(text)


def decisive(judgements: pd.DataFrame, analysis: int = 1, clusters: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per system (rows, most first): ``first cluster``, the decisive categories in whose first significance
    cluster it is, and ``decisive``, the decisive categories in which it has a score. A category is decisive when
    its first cluster (:func:`testsuite.z_clusters`, or ``clusters``) leaves out at least one scored system."""
    has_score = accuracy(judgements, analysis).notna()
    member = (z_clusters(judgements, analysis) if clusters is None else clusters).reindex_like(has_score)
    member = member.fillna(False).astype(bool) & has_score
    split = (has_score & ~member).any(axis=1)
    table = pd.DataFrame({"first cluster": member[split].sum().astype(int),
                          "decisive": has_score[split].sum().astype(int)})
    return table.sort_values(["first cluster", "decisive"], ascending=False).rename_axis("system")


def kept_without(judgements: pd.DataFrame) -> pd.DataFrame:
    """What leaving one system out of Analysis 1 gains, per system (rows, most items first): ``warnings`` (% of its
    judged outputs) and ``items kept`` (the items Analysis 1 keeps for the other systems)."""
    items = {system: scored(without_systems(judgements, [system]), 1)["item_id"].nunique()
             for system in judgements["system"].unique()}
    table = pd.DataFrame({"warnings": warning_rates(judgements), "items kept": pd.Series(items)})
    return table.sort_values("items kept", ascending=False).rename_axis("system")


def analyses(judgements: pd.DataFrame, exclude=()) -> pd.DataFrame:
    """Both analyses side by side, as text, one row per system: the two averages and the items kept under
    Analysis 1 (without the ``exclude`` systems, ``–`` for them) and Analysis 2, and the warnings (% of judged
    outputs). Percentages have one decimal, counts none."""
    first = without_systems(judgements, exclude)
    columns = {}
    for number, rows in ((1, first), (2, judgements)):
        avg = averages(rows, number)
        columns[f"Analysis {number}, non-weighted"] = avg["non-weighted"]
        columns[f"Analysis {number}, weighted"] = avg["weighted"]
        columns[f"Analysis {number}, items kept"] = scored(rows, number).groupby("system").size()
    columns["warnings (%)"] = warning_rates(judgements)
    table = pd.DataFrame(columns).reindex(sorted(judgements["system"].unique()))
    for name in table.columns:
        text = (lambda v: "–" if pd.isna(v) else f"{int(v):,}") if name.endswith("kept") else percent
        table[name] = table[name].map(text)
    return table.rename_axis("system")
