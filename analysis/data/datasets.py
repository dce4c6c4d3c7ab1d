"""Named datasets: a registry of real annotation files (pinned URLs, sha256, parsers), the stand-ins, or a path.

Each registry entry names its files, where each comes from (a raw GitHub URL pinned to a commit), its sha256, a
parser that turns the files into a long (item, rater, label) table, the label order and a licence note. Files live
in a cache laid out as ``<cache>/<dataset>/<file>``; ``$ANNOTATION_DATA_DIR`` sets the cache (the tests point it at
the project's shared data folder), otherwise pooch's user cache is used. :func:`fetch` downloads with pooch and
checks the hashes; :func:`load` never downloads: a missing or altered file is an error that says what to run.

The paper's three datasets (DICES-350, D3code, Kumar et al.'s toxicity ratings) have no known hash here: the first
download records one in ``<cache>/<dataset>/SHA256SUMS`` and later loads check against it.
"""

from __future__ import annotations

import csv
import difflib
import os
import shutil
from dataclasses import dataclass, field
from importlib.resources import files as package_files
from pathlib import Path
from typing import Callable

import pandas as pd

from analysis.data.annotations import AnnotationDataset, from_table, load_annotations
from analysis.data import parsers
from analysis.data.reading import file_sha256
from analysis.errors import DataError
from analysis.io import write_atomic
from analysis.data.synthetic import STAND_INS, make_stand_in

DATA_ENV = "ANNOTATION_DATA_DIR"
RECORDED = "SHA256SUMS"


@dataclass(frozen=True)
class RemoteFile:
    """One file of a dataset: its name in the cache, where it comes from and its sha256 (None: not known yet)."""

    name: str
    url: str
    sha256: str | None
    local_only: bool = False
    role: str = ""  # "": used as downloaded; "upstream": only to build the derived files; "derived": built by fetch
    bytes: int | None = None


@dataclass(frozen=True)
class Entry:
    """A registered dataset: files, a parser to a long table, and what a user should know about it."""

    name: str
    description: str
    licence: str
    parse: Callable[[Path], pd.DataFrame] | None
    files: tuple[RemoteFile, ...] = field(default=())
    label_order: tuple | None = None
    duplicates: str = "error"
    batch: str | None = None
    paper: bool = False
    kind: str = "annotations"  # or "testsuite": MT test-suite rules and system outputs (analysis.testsuite.suite)
    depends: tuple[str, ...] = ()

    @property
    def kept(self) -> tuple[RemoteFile, ...]:
        """The files a load reads and checks (upstream files only serve to build derived ones)."""
        return tuple(f for f in self.files if f.role != "upstream")


# ---------------------------------------------------------------- the registry

def _registry_files() -> dict[str, tuple[RemoteFile, ...]]:
    text = (package_files("analysis") / "resources" / "registry.csv").read_text()
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    out: dict[str, list[RemoteFile]] = {}
    for row in rows:
        out.setdefault(row["dataset"], []).append(
            RemoteFile(row["file"], row["url"], row["sha256"] or None, bool(int(row["local_only"])),
                       row.get("role") or "", int(row["bytes"]) if row.get("bytes") else None))
    return {name: tuple(entries) for name, entries in out.items()}


def _registered_counts() -> dict[str, dict[str, object]]:
    """What each registered dataset holds once loaded (``resources/counts.csv``): the expectations of the tests
    and what ``datasets info`` shows before a download."""
    text = (package_files("analysis") / "resources" / "counts.csv").read_text()
    out: dict[str, dict[str, object]] = {}
    for row in csv.DictReader(line for line in text.splitlines() if not line.startswith("#")):
        value = row["value"]
        try:
            value = int(value)
        except ValueError:
            try:
                value = float(value)
            except ValueError:
                pass
        out.setdefault(row["dataset"], {})[row["quantity"]] = value
    return out


COUNTS = _registered_counts()


_FILES = _registry_files()
_TRUTHINFER = "none stated at the origin (zhydhkcws/crowd_truth_infer, its answer.csv)"
_LEWIDI = "none stated at the origin (the LeWiDi shared task release, Le-Wi-Di/le-wi-di.github.io)"
_DICES_URL = ("https://raw.githubusercontent.com/google-research-datasets/dices-dataset/main/350/"
              "diverse_safety_adversarial_dialog_350.csv")

ENTRIES: dict[str, Entry] = {entry.name: entry for entry in [
    Entry("dices350", "DICES-350: 350 conversations rated for safety by 123 raters (fully crossed)", "CC BY 4.0",
          parsers.columns("diverse_safety_adversarial_dialog_350.csv", "item_id", "rater_id", "Q_overall"),
          (RemoteFile("diverse_safety_adversarial_dialog_350.csv", _DICES_URL, None),),
          label_order=("No", "Unsure", "Yes"), paper=True),
    Entry("d3code", "D3code: 4554 items rated for offensiveness (0-4) by 4309 raters in 21 countries (sparse)",
          "CC BY 4.0 (as stated by the origin)", parsers.d3code,
          (RemoteFile("d3-ratings.csv", "https://raw.githubusercontent.com/google-research-datasets/D3code/main/"
                                       "d3-ratings.csv", None),),
          label_order=(0, 1, 2, 3, 4), paper=True),
    Entry("toxicity_kumar2021", "Kumar et al. (2021): 107,620 comments, 5 raters each in batches of 20 (batched)",
          "research release of the authors; check its terms before redistribution", parsers.kumar,
          (RemoteFile("toxicity_ratings.json", "https://data.esrg.stanford.edu/study/toxicity-perspectives/"
                                               "toxicity_ratings.json", None),),
          label_order=(0, 1, 2, 3, 4), paper=True),
    Entry("truthinfer_duck", "Duck identification: 108 images x 39 workers, binary (fully crossed)", _TRUTHINFER,
          parsers.columns("answer.csv", "question", "worker", "answer"), _FILES["truthinfer_duck"]),
    Entry("truthinfer_dog", "Dog breeds: 807 images, 10 of 109 workers each, 4 classes", _TRUTHINFER,
          parsers.columns("answer.csv", "question", "worker", "answer"), _FILES["truthinfer_dog"]),
    Entry("truthinfer_face_sentiment", "Face sentiment: 584 faces, 7-9 of 27 workers each, 4 classes", _TRUTHINFER,
          parsers.columns("answer.csv", "question", "worker", "answer"), _FILES["truthinfer_face_sentiment"]),
    Entry("truthinfer_product", "Product matching: 8315 pairs, 3 of 176 workers each, binary", _TRUTHINFER,
          parsers.columns("answer.csv", "question", "worker", "answer"), _FILES["truthinfer_product"]),
    Entry("truthinfer_emotion", "Emotion intensity: 700 texts, 10 of 38 workers each, 0-100 scores", _TRUTHINFER,
          parsers.columns("answer.csv", "question", "worker", "answer"), _FILES["truthinfer_emotion"]),
    Entry("lewidi23_hs_brexit", "HS-Brexit: 1120 tweets x 6 annotators, hate speech (fully crossed)", _LEWIDI,
          parsers.lewidi("HS-Brexit_*.json"), _FILES["lewidi23_hs_brexit"]),
    Entry("lewidi23_armis", "ArMIS: 943 Arabic tweets x 3 annotators, misogyny (fully crossed)", _LEWIDI,
          parsers.lewidi("ArMIS_*.json"), _FILES["lewidi23_armis"]),
    Entry("lewidi23_convabuse", "ConvAbuse: 4050 conversations, 2-8 of 8 annotators, abuse severity -3..1",
          _LEWIDI, parsers.lewidi("ConvAbuse_*.json"), _FILES["lewidi23_convabuse"]),
    Entry("lewidi23_md_agreement", "MD-Agreement: 10,753 tweets, about 5 of 819 annotators, offensiveness",
          _LEWIDI, parsers.lewidi("MD-Agreement_*.json"), _FILES["lewidi23_md_agreement"], duplicates="first"),
    Entry("lewidi25_csc", "CSC sarcasm (dev+test): 1408 items in 188 disjoint rater groups, ratings 1-6", _LEWIDI,
          parsers.lewidi("CSC_[dt]*.json"), _FILES["lewidi25_csc"]),
    Entry("lewidi25_mp", "MP (dev+test): 6761 items, 2-19 of 506 annotators, binary", _LEWIDI,
          parsers.lewidi("MP_[dt]*.json"), _FILES["lewidi25_mp"]),
    Entry("lewidi25_paraphrase", "Paraphrase: 500 pairs x 4 annotators, -5..5 (fully crossed)", _LEWIDI,
          parsers.lewidi("Paraphrase_[dt]*.json"), _FILES["lewidi25_paraphrase"]),
    Entry("lewidi25_varierrnli", "VariErrNLI: 488 NLI items, 1-4 of 4 annotators, NLI label sets", _LEWIDI,
          parsers.lewidi("VariErrNLI_[dt]*.json"), _FILES["lewidi25_varierrnli"]),
    Entry("popquorn_offensiveness", "POPQUORN offensiveness: 1500 comments, 5-10 of 262 raters, 1-5 (sparse)",
          "none stated at the origin (Jiaxin-Pei/Potato-Prolific-Dataset: no LICENSE file, none in its README)",
          parsers.columns("raw_data.csv", "instance_id", "user_id", "offensiveness"),
          _FILES["popquorn_offensiveness"]),
    Entry("prolific_toxicity_gender", "Prolific toxicity pilot: 120 comments, about 109 of 545 raters each, 1/-1",
          "none stated at the origin (duanxiaoni/cost-effective-subjective-assessment-dataset: no LICENSE file)",
          parsers.columns("pilot_annotations.csv", "comment", "workerId", "answer"), _FILES["prolific_toxicity_gender"]),
    Entry("dawid_skene_anesthesia", "Dawid & Skene anaesthesia: 45 patients x 5 anaesthetists, 1-4 (first of "
          "rater 1's three ratings kept)", "R package rater (GPL); converted to CSV, local only",
          parsers.columns("anesthesia.csv", "item", "rater", "rating"), _FILES["dawid_skene_anesthesia"],
          duplicates="first"),
    Entry("espeland_caries", "Espeland & Handelman caries: 3859 radiographs x 5 dentists, 1-2", "R package rater "
          "(GPL); converted to CSV, local only", parsers.caries, _FILES["espeland_caries"]),
    Entry("dfki_mt_testsuite", "DFKI linguistically motivated MT test suite, public half: de-en 2767 and en-de 2324 "
          "items with regex and token rules (DFKI-NLP/mt-testsuite)",
          "CC BY-NC-SA 4.0, the safe reading: the upstream README names CC BY-NC-SA 4.0 but links CC BY-SA 4.0; no "
          "LICENSE file. Cite Macketanz et al. (2022), LREC, https://aclanthology.org/2022.lrec-1.99",
          None, _FILES["dfki_mt_testsuite"], kind="testsuite"),
    Entry("wmt_dfki_testsuite_outputs", "WMT22 and WMT23 primary systems' outputs for the DFKI suite's items "
          "(de-en, en-de), built from the line-aligned txt-ts files of wmt-conference/wmt22-news-systems and "
          "wmt23-news-systems", "none stated upstream (no LICENSE file, no licence in the READMEs): the outputs "
          "belong to the WMT participants; research data with unclear terms; cite the WMT22 and WMT23 General MT "
          "findings papers. The DFKI source sentences fall under the DFKI suite's licence",
          None, _FILES["wmt_dfki_testsuite_outputs"], kind="testsuite", depends=("dfki_mt_testsuite",)),
    Entry("tq_autotest", "TQ-AutoTest's example sentences: correct and incorrect translations of suite items "
          "(de-en 774, en-de 813; DFKI-NLP/TQ_AutoTest, example/)", "no clear licence: no LICENSE file and none in "
          "the README at the pinned commit (the first commit's README said 'License => MIT?'); the corpus itself is "
          "the DFKI suite's", None, _FILES["tq_autotest"], kind="testsuite"),
]}


def data_dir() -> Path:
    """The dataset cache: ``$ANNOTATION_DATA_DIR`` or pooch's user cache.

    Returns
    -------
    pathlib.Path
        The folder that holds one subfolder per registered dataset (it need not exist yet).
    """
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    import pooch

    return Path(pooch.os_cache("annotator-bootstrap")) / "data"


def names() -> list[str]:
    """Every name :func:`load` accepts besides file paths: registry entries, then stand-ins.

    Returns
    -------
    list of str
        The registered datasets' names in registry order, then the stand-ins' names.
    """
    return sorted(ENTRIES) + sorted(STAND_INS)


def entry(name: str) -> Entry:
    if name not in ENTRIES:
        raise DataError(f"unknown dataset {name!r}{_did_you_mean(name, ENTRIES)}; `python -m analysis datasets list` "
                        "lists the registered ones")
    return ENTRIES[name]


def _did_you_mean(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=3)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def _recorded_hashes(folder: Path) -> dict[str, str]:
    path = folder / RECORDED
    if not path.is_file():
        return {}
    return dict(reversed(line.split(maxsplit=1)) for line in path.read_text().splitlines() if line.strip())


def verify(name: str, folder: Path | None = None) -> dict[str, str]:
    """Check that every file of ``name`` is in the cache with its expected sha256.

    Parameters
    ----------
    name : str
        A registered dataset.
    folder : pathlib.Path, optional
        Where its files are (default: its folder in :func:`data_dir`).

    Returns
    -------
    dict of str to str
        Each file's name and its sha256. A missing or altered file raises :class:`analysis.DataError`.
    """
    spec = entry(name)
    folder = folder or data_dir() / name
    recorded = _recorded_hashes(folder)
    hashes = {}
    for remote in spec.kept:
        path = folder / remote.name
        how = ("it is converted from R data and cannot be downloaded; copy it from the project's shared data"
               if remote.local_only else f"run `make data` or `python -m analysis datasets fetch {name}`")
        if not path.is_file():
            raise DataError(f"dataset {name!r} is not in the cache: {path} is missing; {how}")
        actual = file_sha256(path)
        expected = remote.sha256 or recorded.get(remote.name)
        if expected and actual != expected:
            raise DataError(f"{path} has sha256 {actual[:16]}…, expected {expected[:16]}… (the file is corrupted or "
                            f"was changed); delete it and {how}")
        hashes[remote.name] = actual
    return hashes


def fetch(name: str, progress: bool = True) -> Path:
    """Download ``name``'s files into the cache with pooch, checking (or, if unknown, recording) their sha256.

    Derived files are then built from the upstream files (see :data:`BUILDERS`) and their sha256 checked. A failed
    fetch removes the dataset's folder when this call created it, so that no empty or partial folder is left.

    Parameters
    ----------
    name : str
        A registered dataset (the datasets it is built from are fetched first).
    progress : bool, default True
        Show pooch's download bars.

    Returns
    -------
    pathlib.Path
        The dataset's folder in :func:`data_dir`.
    """
    spec = entry(name)
    for other in spec.depends:
        if not available(other):
            fetch(other, progress)
    folder = data_dir() / name
    created = not folder.exists()
    try:
        _fetch_into(spec, folder, progress)
        verify(name, folder)
    except BaseException:
        if created:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return folder


def _fetch_into(spec: Entry, folder: Path, progress: bool) -> None:
    import pooch

    name = spec.name
    recorded = _recorded_hashes(folder)
    for remote in spec.files:
        if remote.local_only:
            if not (folder / remote.name).is_file():
                raise DataError(f"{name}/{remote.name} is converted from R data and cannot be downloaded")
            continue
        if remote.role == "derived":
            continue
        target = folder / remote.name
        if remote.role == "upstream" and all((folder / d.name).is_file() for d in spec.files if d.role == "derived") \
                and _derived_ok(spec, folder):
            continue  # already built: the upstream files are not needed again
        known = remote.sha256 or recorded.get(remote.name)
        pooch.retrieve(remote.url, known_hash=f"sha256:{known}" if known else None, fname=target.name,
                       path=target.parent, progressbar=progress)
        if not known:
            recorded[remote.name] = file_sha256(target)
            lines = "".join(f"{digest}  {file}\n" for file, digest in sorted(recorded.items()))
            (folder / RECORDED).write_text(lines)
            print(f"{name}/{remote.name}: no published sha256; recorded {recorded[remote.name]} in {folder / RECORDED}")
    for remote in spec.files:
        if remote.role == "derived" and not _file_ok(folder / remote.name, remote.sha256):
            build(spec, folder, remote)


def _file_ok(path: Path, sha256: str | None) -> bool:
    return path.is_file() and (sha256 is None or file_sha256(path) == sha256)


def _derived_ok(spec: Entry, folder: Path) -> bool:
    return all(_file_ok(folder / d.name, d.sha256) for d in spec.files if d.role == "derived")


def build(spec: Entry, folder: Path, derived: RemoteFile) -> Path:
    """Build one derived file from its upstream files in ``folder`` and check its sha256 (a mismatch removes it)."""
    builder = BUILDERS.get(spec.name)
    if builder is None:
        raise DataError(f"{spec.name}/{derived.name} is a derived file but no builder is registered")
    for remote in spec.files:
        if remote.role == "upstream":
            path = folder / remote.name
            if not _file_ok(path, remote.sha256):
                raise DataError(f"{path} is missing or altered; run `python -m analysis datasets fetch {spec.name}`")
    target = folder / derived.name
    write_atomic(target, builder(folder, derived.name))
    actual = file_sha256(target)
    if derived.sha256 and actual != derived.sha256:
        target.unlink()
        raise DataError(f"{target} was built with sha256 {actual[:16]}…, expected {derived.sha256[:16]}…; an "
                        "upstream file differs from the registered one")
    return target


def _build_wmt(folder: Path, derived: str) -> str:
    """Builder of ``wmt_dfki_testsuite_outputs``: ``<campaign>.<pair>.dfki_items.jsonl`` from ``upstream/<campaign>``."""
    campaign, pair = derived.split(".")[:2]
    year = "20" + campaign[-2:]
    upstream = folder / "upstream" / campaign
    source = upstream / f"generaltest{year}.{pair}.src.{pair[:2]}"
    prefix = f"generaltest{year}.{pair}.hyp."
    hypotheses = {p.name[len(prefix):].rsplit(".", 1)[0]: p for p in upstream.glob(f"{prefix}*")
                  if any(f.name == f"upstream/{campaign}/{p.name}" for f in entry(folder.name).files)}
    items = data_dir() / "dfki_mt_testsuite" / "testset" / pair / "items.json"
    return parsers.build_wmt_items(items, source, hypotheses, campaign, pair)


#: The datasets whose files are built from upstream downloads, each name with the function that builds them.
BUILDERS: dict[str, Callable[[Path, str], str]] = {"wmt_dfki_testsuite_outputs": _build_wmt}


def load_entry(name: str) -> AnnotationDataset:
    """Parse a registered dataset from the cache (never downloads)."""
    spec = entry(name)
    if spec.parse is None:
        raise DataError(f"{name!r} is not an annotation dataset but an MT test suite's files; use them with "
                        "`python -m analysis testsuite` or analysis.testsuite.suite.suite_paths")
    folder = data_dir() / name
    hashes = verify(name, folder)
    table = spec.parse(folder)
    files = ", ".join(f"{file} sha256 {digest}" for file, digest in hashes.items())
    return from_table(table, batch=spec.batch, label_order=spec.label_order, duplicates=spec.duplicates, name=name,
                      provenance=f"{spec.description}; {spec.licence}; files: {files}")


CONNECT_SECONDS = 3.0  # how long online() waits for the datasets' host


def online(names: list[str], timeout: float = CONNECT_SECONDS) -> bool:
    """Whether the host of the first downloadable file of ``names`` answers a connection within ``timeout``
    seconds (a machine without network goes on at once, instead of waiting on every download)."""
    import socket
    from urllib.parse import urlparse

    urls = [f.url for name in names for f in entry(name).files if f.url and not f.local_only]
    if not urls:
        return False
    where = urlparse(urls[0])
    try:
        socket.create_connection((where.hostname, where.port or 443), timeout=timeout).close()
        return True
    except OSError:
        return False


def available(name: str) -> bool:
    """Whether ``name`` is a stand-in or a registered dataset whose files are all in the cache and intact.

    Parameters
    ----------
    name : str
        A stand-in or a registered dataset.

    Returns
    -------
    bool
        True where :func:`load` can read it without downloading; False for an unknown name too.
    """
    if name in STAND_INS:
        return True
    try:
        verify(name)
    except DataError:
        return False
    return True


def registered(name: str) -> dict:
    """What the registry says about ``name``, with no file needed.

    Parameters
    ----------
    name : str
        A registered dataset.

    Returns
    -------
    dict
        Its description, licence, files (with their sha256 and where they come from) and counts.
    """
    spec = entry(name)
    return {"name": name, "description": spec.description, "licence": spec.licence, "kind": spec.kind,
            "in_cache": available(name), "cache": str(data_dir() / name),
            "files": [{"file": f.name, "url": f.url or None, "sha256": f.sha256, "bytes": f.bytes,
                       **({"role": f.role} if f.role else {}), **({"local_only": True} if f.local_only else {})}
                      for f in spec.files],
            "counts": COUNTS.get(name, {})}


def info(name: str) -> dict:
    """Counts, design and file hashes of a dataset (what ``datasets info`` prints).

    A registered dataset that is not in the cache yet gets what the registry says (files, hashes, licence, the
    counts it will have) and the command that downloads it, or, for files that cannot be downloaded, where they
    come from; a stand-in or a file is loaded.

    Parameters
    ----------
    name : str
        A registered dataset, a stand-in or an annotation file's path.

    Returns
    -------
    dict
        The counts (items, raters, ratings, labels), the design and the files' sha256; for a registered dataset
        not in the cache, the registry's entry and the command that fetches it.
    """
    if name not in ENTRIES:
        return load(name).summary()
    summary = registered(name)
    if not summary["in_cache"]:
        converted = [f.name for f in ENTRIES[name].files if f.local_only]
        if converted:  # no command can fetch these: say where they come from instead
            summary["to_obtain"] = (f"{', '.join(converted)} is converted from R data and cannot be downloaded; "
                                    f"copy it from the project's shared data into {data_dir() / name}")
        else:
            summary["to_download"] = f"python -m analysis datasets fetch {name}"
        return summary
    summary["files"] = verify(name)
    if ENTRIES[name].parse is not None:
        summary = {**load(name).summary(), **{k: summary[k] for k in ("licence", "files", "description", "counts")}}
    return summary


PAPER_STAND_INS = {"dices350": "dices-synthetic", "d3code": "d3code-synthetic",
                   "toxicity_kumar2021": "toxicity-synthetic"}


def paper_or_stand_in(name: str) -> str:
    """The paper's dataset ``name`` (given by its registry name or its stand-in's) when its files are in the cache
    and intact, else its stand-in."""
    paper = next((p for p, stand_in in PAPER_STAND_INS.items() if name in (p, stand_in)), None)
    if paper is None:
        raise DataError(f"{name!r} is not one of the paper's datasets ({', '.join(PAPER_STAND_INS)}) or their "
                        "stand-ins")
    return paper if available(paper) else PAPER_STAND_INS[paper]


def load(name_or_path: str | Path, **file_options) -> AnnotationDataset:
    """A stand-in or registered dataset by name, or an annotation file by path.

    ``file_options`` (``item``, ``rater``, ``label``, ``batch``, ``label_order``, ``duplicates``,
    ``normalize_labels``) are passed to :func:`analysis.data.annotations.load_annotations` for a file and ignored
    for a name.

    Parameters
    ----------
    name_or_path : str or pathlib.Path
        A stand-in's or registered dataset's name (:func:`names`), or an annotation file.
    **file_options
        The columns and policies of a file, as :func:`analysis.data.annotations.load_annotations` takes them.

    Returns
    -------
    AnnotationDataset
        The dataset; a registered one missing from the cache raises :class:`analysis.DataError` naming the command
        that fetches it.
    """
    key = str(name_or_path)
    if key in STAND_INS:
        return make_stand_in(key)
    if key in ENTRIES:
        return load_entry(key)
    path = Path(key).expanduser()
    if path.exists() or path.suffix or len(path.parts) > 1:  # a path, not a name: read_table says what is wrong
        return load_annotations(path, **file_options)
    raise DataError(f"{key!r} is neither a file nor a dataset name{_did_you_mean(key, names())}; "
                    "`python -m analysis datasets list` lists the names")


def sizes_against_published() -> pd.DataFrame:
    """Each stand-in's items and raters beside those the registry records for the paper's dataset it imitates
    (missing where the registry records none)."""
    rows = []
    for real, name in PAPER_STAND_INS.items():
        spec, counts = STAND_INS[name], registered(real)["counts"]
        rows.append({"stand-in": name, "imitates": spec.imitates, "items": spec.n_items, "raters": spec.n_raters,
                     "items of the real set": counts.get("items"), "raters of the real set": counts.get("raters")})
    return pd.DataFrame(rows)


def sizes_sentence(sizes: pd.DataFrame) -> str:
    """:func:`sizes_against_published` in one sentence: each stand-in's size, and the real set's where it differs."""
    def one(row) -> str:
        same = (row["items"], row["raters"]) == (row["items of the real set"], row["raters of the real set"])
        return (f"{row['stand-in']} has {row['items']:,} items and {row['raters']:,} raters, " +
                (f"as {row['imitates']} has" if same else f"where {row['imitates']} has "
                 f"{row['items of the real set']:,.0f} items" + ("" if pd.isna(row["raters of the real set"]) else
                                                                  f" and {row['raters of the real set']:,.0f} raters")))
    return "; ".join(one(row) for _, row in sizes.iterrows()) + "."
