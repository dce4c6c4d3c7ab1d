"""How each registered dataset's upstream files become a long (item, rater, label[, batch]) table, one parser per
format, and the WMT outputs file built from WMT's line-aligned text files. :mod:`analysis.data.datasets` names
which parser reads which dataset.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pandas as pd

from analysis.data.reading import read_table
from analysis.errors import DataError


def numeric_if_possible(values: pd.Series) -> pd.Series:
    converted = pd.to_numeric(values, errors="coerce")
    return converted if converted.notna().sum() == values.notna().sum() else values


def columns(file: str, item: str, rater: str, label: str) -> Callable[[Path], pd.DataFrame]:
    def parse(folder: Path) -> pd.DataFrame:
        table = read_table(folder / file, columns=[item, rater, label])
        return table.rename(columns={item: "item", rater: "rater", label: "label"})
    return parse


def lewidi(pattern: str) -> Callable[[Path], pd.DataFrame]:
    """LeWiDi JSON (2023: comma-separated annotators/annotations; 2025: an annotator -> label dict).

    Item ids restart per split, so the item key is ``split:id``.
    """
    def parse(folder: Path) -> pd.DataFrame:
        rows = []
        paths = sorted(folder.glob(pattern))
        if not paths:
            raise DataError(f"no file matching {pattern} in {folder}")
        for path in paths:
            split = path.stem.rsplit("_", 1)[-1]
            try:
                entries = json.loads(path.read_text(encoding="utf-8"))
            except json.JSONDecodeError as err:
                raise DataError(f"{path} is not valid JSON: {err}") from err
            for item_id, entry in entries.items():
                annotations = entry.get("annotations")
                if isinstance(annotations, dict):
                    pairs = annotations.items()
                else:
                    pairs = zip(str(entry["annotators"]).split(","), str(annotations).split(","))
                rows += [(f"{split}:{item_id}", rater.strip(), value) for rater, value in pairs]
        table = pd.DataFrame(rows, columns=["item", "rater", "label"])
        table["label"] = numeric_if_possible(table["label"])
        return table
    return parse


def caries(folder: Path) -> pd.DataFrame:
    """Expand the pattern table (one row per pattern of 5 dentists' ratings, with its count) to ratings."""
    patterns = read_table(folder / "caries_patterns.csv")
    raters = [c for c in patterns.columns if c.startswith("rater_")]
    expanded = patterns.loc[patterns.index.repeat(patterns["n"])].reset_index(drop=True)
    expanded["item"] = range(len(expanded))
    return expanded.melt(id_vars="item", value_vars=raters, var_name="rater", value_name="label")


def d3code(folder: Path) -> pd.DataFrame:
    """D3code ratings; ``rating_raw`` -1 (the rater did not understand the item) becomes a missing label."""
    table = read_table(folder / "d3-ratings.csv", columns=["item_id", "rater_id", "rating_raw"])
    table["rating_raw"] = table["rating_raw"].where(table["rating_raw"] >= 0)
    return table.rename(columns={"item_id": "item", "rater_id": "rater", "rating_raw": "label"})


def kumar(folder: Path) -> pd.DataFrame:
    """Kumar et al. (2021): JSON lines, one comment per line with a list of ratings (worker id, toxic score)."""
    rows = []
    with open(folder / "toxicity_ratings.json", encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                comment = json.loads(line)
                rows += [(comment["comment_id"], r["worker_id"], r["toxic_score"]) for r in comment["ratings"]]
            except (json.JSONDecodeError, KeyError, TypeError) as err:
                raise DataError(f"toxicity_ratings.json line {number} does not follow the published schema: {err}")
    return pd.DataFrame(rows, columns=["item", "rater", "label"])


def build_wmt_items(items_json: str | Path, source: str | Path, hypotheses: dict[str, str | Path], campaign: str,
                    pair: str) -> str:
    """The per-item outputs file (JSON lines) from a DFKI ``items.json`` and WMT's line-aligned txt-ts files.

    Source lines are keyed by their stripped text. Items are taken in id order; an item whose stripped source
    sentence is a source line takes that line, the k-th item sharing a sentence its k-th occurrence (the last one
    when there are fewer occurrences than items); other items are left out. Every system's hypothesis file gives
    line ``src_line`` unchanged. One record per line, keys as in ``wmt_dfki_testsuite_outputs/SOURCE.md``.
    """
    items = sorted(json.loads(Path(items_json).read_text(encoding="utf-8"))["items"], key=lambda i: str(i["id"]))
    lines = Path(source).read_text(encoding="utf-8").split("\n")
    hyps = {system: Path(path).read_text(encoding="utf-8").split("\n") for system, path in hypotheses.items()}
    for system, hyp in hyps.items():
        if len(hyp) != len(lines):
            raise DataError(f"{hypotheses[system]} has {len(hyp)} lines, the source {source} {len(lines)}; the files "
                            "are not line-aligned")
    where: dict[str, list[int]] = {}
    for number, line in enumerate(lines, 1):
        where.setdefault(line.strip(), []).append(number)
    used: dict[str, int] = {}
    out = []
    for item in items:
        key = str(item["source_sentence"]).strip()
        if key not in where:
            continue
        used[key] = used.get(key, 0) + 1
        occurrences = where[key]
        k = min(used[key], len(occurrences))
        number = occurrences[k - 1]
        record = {"campaign": campaign, "langpair": pair, "item_id": str(item["id"]), "src_line": number,
                  "n_src_occurrences": len(occurrences), "occurrence_used": k, "source": lines[number - 1],
                  "outputs": {system: hyps[system][number - 1] for system in sorted(hyps)}}
        out.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(out)
