"""`datasets fetch wmt_dfki_testsuite_outputs`: the per-item outputs file is built from WMT's line-aligned txt-ts
files and the DFKI items, and every hash is checked. Small local files only; nothing is downloaded here."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from analysis.data import datasets, parsers
from analysis.errors import DataError
from conftest import cached


def write_items(path: Path, sources: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    items = [{"id": i, "langpair": "deen", "category": "C", "phenomenon": "P", "source_sentence": s,
              "positive_regex": "", "negative_regex": "", "positive_tokens": [], "negative_tokens": []}
             for i, s in sources.items()]
    path.write_text(json.dumps({"items": items}, ensure_ascii=False, indent=1), encoding="utf-8")


def test_items_take_their_line_and_the_kth_item_the_kth_occurrence(tmp_path):
    write_items(tmp_path / "items.json", {"00000003": "Er geht. ", "00000001": "Sie kommt.", "00000002": "Er geht.",
                                          "00000004": "Nicht da.", "00000005": "Er geht."})
    (tmp_path / "src").write_text("Vorher.\nEr geht.\nSie kommt. \nEr geht.\n", encoding="utf-8")
    (tmp_path / "A").write_text("Before.\nHe goes.\nShe comes.\nHe leaves.\n", encoding="utf-8")
    (tmp_path / "B").write_text("b1\nb2\nb3\nb4\n", encoding="utf-8")
    text = parsers.build_wmt_items(tmp_path / "items.json", tmp_path / "src",
                                    {"B": tmp_path / "B", "A": tmp_path / "A"}, "wmt23", "de-en")
    records = [json.loads(line) for line in text.splitlines()]
    assert [r["item_id"] for r in records] == ["00000001", "00000002", "00000003", "00000005"]  # 4 is not a line
    assert [(r["src_line"], r["occurrence_used"], r["n_src_occurrences"]) for r in records] == [
        (3, 1, 1), (2, 1, 2), (4, 2, 2), (4, 2, 2)]  # the third "Er geht." item takes the last occurrence
    assert records[0]["source"] == "Sie kommt. " and list(records[0]["outputs"]) == ["A", "B"]
    assert records[1]["outputs"] == {"A": "He goes.", "B": "b2"}
    assert text.endswith("\n") and text.count("\n") == 4
    (tmp_path / "B").write_text("b1\nb2\n", encoding="utf-8")
    with pytest.raises(DataError, match="not line-aligned"):
        parsers.build_wmt_items(tmp_path / "items.json", tmp_path / "src", {"B": tmp_path / "B"}, "wmt23", "de-en")


def sha(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


def fake_entry(tmp_path: Path, monkeypatch, damage: bool = False):
    """A registered copy of the WMT entry over three small upstream files served from ``tmp_path / 'web'``."""
    web = tmp_path / "web"
    web.mkdir()
    upstream = {"generaltest2023.de-en.src.de": "Er geht.\nSie kommt.\n",
                "generaltest2023.de-en.hyp.A.en": "He goes.\nShe comes.\n",
                "generaltest2023.de-en.hyp.B.en": "He walks.\n\n"}
    for name, text in upstream.items():
        (web / name).write_text(text, encoding="utf-8")
    write_items(tmp_path / "cache" / "dfki_mt_testsuite" / "testset" / "de-en" / "items.json",
                {"00000001": "Er geht.", "00000002": "Sie kommt.", "00000003": "Fehlt."})
    expected = parsers.build_wmt_items(tmp_path / "cache" / "dfki_mt_testsuite" / "testset" / "de-en" / "items.json",
                                        web / "generaltest2023.de-en.src.de",
                                        {"A": web / "generaltest2023.de-en.hyp.A.en",
                                         "B": web / "generaltest2023.de-en.hyp.B.en"}, "wmt23", "de-en")
    files = tuple(datasets.RemoteFile(f"upstream/wmt23/{name}", f"https://example.org/{name}",
                                      sha(text.encode()), role="upstream") for name, text in upstream.items())
    files += (datasets.RemoteFile("wmt23.de-en.dfki_items.jsonl", "", sha(expected.encode()), role="derived"),)
    real = datasets.ENTRIES["wmt_dfki_testsuite_outputs"]
    monkeypatch.setitem(datasets.ENTRIES, real.name, datasets.Entry(real.name, real.description, real.licence, None,
                                                                    files, kind="testsuite"))
    monkeypatch.setitem(datasets.ENTRIES, "dfki_mt_testsuite", datasets.Entry(
        "dfki_mt_testsuite", "", "", None, (datasets.RemoteFile("testset/de-en/items.json", "", None),)))
    monkeypatch.setenv(datasets.DATA_ENV, str(tmp_path / "cache"))
    if damage:
        (web / "generaltest2023.de-en.hyp.B.en").write_text("He runs.\n\n", encoding="utf-8")
    import pooch

    def retrieve(url, known_hash, fname, path, progressbar):  # pooch's download, from the local folder
        Path(path).mkdir(parents=True, exist_ok=True)
        shutil.copy(web / url.rsplit("/", 1)[1], Path(path) / fname)
        if known_hash and sha((Path(path) / fname).read_bytes()) != known_hash.split(":")[1]:
            (Path(path) / fname).unlink()
            raise ValueError(f"SHA256 hash of downloaded file ({fname}) does not match the known hash")
        return str(Path(path) / fname)

    monkeypatch.setattr(pooch, "retrieve", retrieve)
    return expected


def test_fetch_builds_the_outputs_file_and_checks_every_hash(tmp_path, monkeypatch):
    expected = fake_entry(tmp_path, monkeypatch)
    folder = datasets.fetch("wmt_dfki_testsuite_outputs", progress=False)
    built = (folder / "wmt23.de-en.dfki_items.jsonl").read_text(encoding="utf-8")
    assert built == expected and len(built.splitlines()) == 2  # item 3's sentence is not in the source
    assert json.loads(built.splitlines()[1])["outputs"] == {"A": "She comes.", "B": ""}
    assert datasets.available("wmt_dfki_testsuite_outputs")
    assert datasets.verify("wmt_dfki_testsuite_outputs") == {"wmt23.de-en.dfki_items.jsonl": sha(expected.encode())}


def test_an_altered_upstream_file_is_refused_and_leaves_no_folder(tmp_path, monkeypatch):
    fake_entry(tmp_path, monkeypatch, damage=True)
    with pytest.raises(ValueError, match="does not match the known hash"):
        datasets.fetch("wmt_dfki_testsuite_outputs", progress=False)
    assert not (tmp_path / "cache" / "wmt_dfki_testsuite_outputs").exists()


def upstream_from(records: list[dict], folder: Path, campaign: str, pair: str) -> None:
    """Line-aligned files with every record's source and outputs at its src_line, other lines unique filler, and
    the extra occurrences of a repeated sentence after the last used one (as the records imply)."""
    n_lines = max(r["src_line"] for r in records)
    source = [f"filler {n} ยง" for n in range(n_lines)]
    systems = sorted(records[0]["outputs"])
    hyps = {s: [""] * n_lines for s in systems}
    used: dict[str, tuple[int, int]] = {}  # sentence -> (occurrences, last occurrence used)
    for r in records:
        source[r["src_line"] - 1] = r["source"]
        for s in systems:
            hyps[s][r["src_line"] - 1] = r["outputs"][s]
        key = r["source"].strip()
        used[key] = (r["n_src_occurrences"], max(used.get(key, (0, 0))[1], r["occurrence_used"]))
    for key, (total, last) in used.items():
        n = total - last
        source += [key] * n
        for s in systems:
            hyps[s] += [""] * n
    year = "20" + campaign[-2:]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"generaltest{year}.{pair}.src.{pair[:2]}").write_text("\n".join(source) + "\n", encoding="utf-8")
    for s in systems:
        (folder / f"generaltest{year}.{pair}.hyp.{s}.{pair[3:]}").write_text("\n".join(hyps[s]) + "\n",
                                                                            encoding="utf-8")


@pytest.mark.parametrize("campaign, pair", [(c, p) for c in ("wmt22", "wmt23") for p in ("de-en", "en-de")])
def test_the_builder_reproduces_the_registered_file_byte_for_byte(campaign, pair, tmp_path):
    """From line-aligned files that hold the registered file's lines, the build has the registered sha256."""
    folder = cached("wmt_dfki_testsuite_outputs")
    cached("dfki_mt_testsuite")
    name = f"{campaign}.{pair}.dfki_items.jsonl"
    records = [json.loads(line) for line in (folder / name).read_text(encoding="utf-8").splitlines()]
    upstream_from(records, tmp_path, campaign, pair)
    year = "20" + campaign[-2:]
    hyps = {p.name.split(".hyp.")[1].rsplit(".", 1)[0]: p for p in tmp_path.glob(f"generaltest{year}.{pair}.hyp.*")}
    built = parsers.build_wmt_items(datasets.data_dir() / "dfki_mt_testsuite" / "testset" / pair / "items.json",
                                     tmp_path / f"generaltest{year}.{pair}.src.{pair[:2]}", hyps, campaign, pair)
    registered = {f.name: f.sha256 for f in datasets.ENTRIES["wmt_dfki_testsuite_outputs"].files}
    assert sha(built.encode()) == registered[name]
