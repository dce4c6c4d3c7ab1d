"""The book: notebook structure, a small-parameter build, nbval re-execution and a headless-browser check.

The build runs every chapter through papermill with a small grid (the banner marks such verdicts as provisional),
then builds the HTML with warnings as errors. It lives under ``_build/test`` so it never touches the real book, and
it runs with an empty dataset cache, as a fresh clone does: no page may then show ``nan``, a raw ``'no data'``, an
empty DataFrame, a traceback, or a verdict drawn from zero datasets. One build serves every test (a session fixture;
``make test`` runs a test file on one worker, ``--dist loadfile``).
"""

import html as html_module
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jupytext
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
TEST_BUILD = ROOT / "_build" / "test"
# one process per chapter (n_jobs 1): make test's two workers already fill the two cores, and a chapter's own workers
# would compile the kernels again beside them on a fresh clone
SMALL = ('-p n_jobs 1 -p n_samples 20 -p effect_n_samples 10 -p n_boot 40 -p n_sets 4 -p pilots 10 '
         '-y "{budgets: [100, 1000], ks: [1, 5, 20], epsilons: [0.3], raters: [5, 20], seeds: [0]}"')
RQ_CHAPTERS = ["rq1", "rq2", "rq3", "rq4"]
EMPTY_DATA = TEST_BUILD / "empty-dataset-cache"
HIDDEN = {"remove-input", "remove-cell", "hide-input", "hide-cell"}
pytestmark = pytest.mark.slow  # the small book build: minutes; make test-fast leaves it out


def book_env(cache: str) -> dict:
    """The environment of the small build and of its nbval re-run: the same caches and an empty dataset folder."""
    EMPTY_DATA.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "ANALYSIS_CACHE_DIR": str(TEST_BUILD / cache), "BOOK_BUILD_DIR": str(TEST_BUILD),
            "ANNOTATION_DATA_DIR": str(EMPTY_DATA)}


def toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc["parts"]:
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


# the chapters, as the Makefile reads them: the notebooks of _toc.yml but the provenance page
CHAPTERS = [entry.split("/")[1] for entry in toc_files()
            if entry.startswith("notebooks/") and entry != "notebooks/provenance"]


def test_the_makefile_executes_the_chapters_of_the_toc():
    done = subprocess.run(["make", "-s", "--no-print-directory", "-f", "Makefile", "-f", "-", "print-chapters"],
                          cwd=ROOT, input="print-chapters:\n\t@echo $(CHAPTERS)\n", capture_output=True, text=True, check=True)
    assert done.stdout.split() == CHAPTERS


def test_every_toc_entry_exists():
    for entry in toc_files():
        assert (ROOT / f"{entry}.md").is_file(), f"{entry} is in _toc.yml but has no source file"


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.md")), ids=lambda p: p.stem)
def test_each_notebook_has_exactly_one_parameters_cell(path):
    notebook = jupytext.read(path)
    tagged = [cell for cell in notebook.cells if "parameters" in cell.metadata.get("tags", [])]
    assert len(tagged) == 1
    assert "seed" in tagged[0].source or path.stem == "provenance"
    assert f"notebooks/{path.stem}" in toc_files()


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.md")), ids=lambda p: p.stem)
def test_parameters_cell_is_behind_a_toggle(path):
    tagged = [c for c in jupytext.read(path).cells if "parameters" in c.metadata.get("tags", [])]
    assert {"hide-cell", "hide-input"} & set(tagged[0].metadata["tags"])


@pytest.mark.parametrize("name", RQ_CHAPTERS + ["realdata"])
def test_chapters_are_narrative_and_calls(name):
    """At most a third of a chapter's characters are hidden code; every RQ chapter opens with a finding box and
    closes with "What this shows"."""
    cells = jupytext.read(ROOT / "notebooks" / f"{name}.md").cells
    hidden = sum(len(c.source) for c in cells if c.cell_type == "code" and HIDDEN & set(c.metadata.get("tags", [])))
    assert hidden <= sum(len(c.source) for c in cells) / 3 + 50, f"{name}: too much hidden code"
    text = (ROOT / "notebooks" / f"{name}.md").read_text()
    assert "## What this shows" in text
    if name in RQ_CHAPTERS:
        assert f"{{glue:md}} {name}_finding" in text and "the book's choices by default" in text


@pytest.fixture(scope="session")
def small_book():
    """Execute every chapter with small parameters and build the HTML (two to four minutes on two cores)."""
    shutil.rmtree(TEST_BUILD, ignore_errors=True)
    env = book_env("cache")
    command = ["make", "--no-print-directory", "book", f"BUILD={TEST_BUILD}", f"OUT={TEST_BUILD}", f"PARAMS={SMALL}",
               f"VENV={Path(sys.executable).parent.parent}"]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return TEST_BUILD


def test_book_builds_without_warnings_and_has_every_page(small_book):
    html = small_book / "_build" / "html"
    for entry in toc_files():
        assert (html / f"{entry}.html").is_file(), entry


def _article_text(page: Path) -> str:
    """The text a reader sees in a page's article: its tags, scripts and styles left out (the compare chapter's plan
    carries plotly's JavaScript)."""
    return html_module.unescape(re.sub(r"<[^>]+>", " ", _article_source(page)))


# a count in the plural after 1 ("1 metrics"), not a name such as "the K = 1 cells" or "Analysis 1 items"
ONE_PLURAL = re.compile(r"(?<!= )(?<!Analysis )(?<!Table )\b1 (metrics|items|raters|ratings|datasets|cells|seeds|"
                        r"systems|chapters|budgets|categories|phenomena|designs|pairs|replicates|comparisons)\b")


FORBIDDEN = {"nan": r"\bnan\b", "'no data'": r"'no data'", "Empty DataFrame": r"Empty DataFrame",
             "a traceback": r"Traceback \(most recent call last\)", "<NA>": r"<NA>",
             "a verdict on zero datasets": r"\b0 of (the )?0\b", "a Python object's repr": r"<IPython\.|object at 0x",
             # documents and files the book does not contain: it cites its own pages
             "the specification's sections, which readers do not have": r"METHOD section|METHOD\.md|[Tt]he specification",
             "a file of the repository outside the book": r"\bbenchmarks/|\bARCHITECTURE\.md",
             "the README, which the book does not contain": r"\b[Tt]he README|\bIts README|README's|see the README",
             "a path under the dataset cache": r"\$[A-Z_]+/\S+",
             "a placeholder where a result should be": r"\(not run\b",
             "a count of 1 with a plural noun": ONE_PLURAL.pattern,
             "ASCII notation beside the page's own (× and ρ)": r"\d x K = |\brho\b",
             # the paper's section 4.2 names its averaging ("macro-weighted"); the book overrides it, and says so
             "a claim that the paper is silent on its averaging": r"paper (does not|doesn't|never) says? (how|whether|"
                                                                  r"which)[^.]*averag|paper is silent[^.]*averag"}


def _prose(page: Path) -> str:
    """The article's text outside code and pre elements."""
    source = _article_source(page)
    return html_module.unescape(re.sub(r"<[^>]+>", " ", re.sub(r"<(code|pre)\b.*?</\1>", " ", source, flags=re.S)))


def _article_source(page: Path) -> str:
    """A page's article, its scripts and styles left out."""
    source = page.read_text()
    article = re.search(r"<article.*?</article>", source, re.S)
    return re.sub(r"<(script|style)\b.*?</\1>", " ", article.group(0) if article else source, flags=re.S)


def test_no_page_shows_nan_empty_tables_tracebacks_or_verdicts_without_data(small_book):
    html = small_book / "_build" / "html"
    for entry in toc_files():
        text = _article_text(html / f"{entry}.html")
        for what, pattern in FORBIDDEN.items():
            found = re.search(pattern, text)
            assert not found, f"{entry} shows {what}: ...{text[max(0, found.start() - 100):found.end() + 50]}..."
        prose = _prose(html / f"{entry}.html")
        tick = prose.find("`")
        assert tick < 0, f"{entry} shows a raw backtick outside code: ...{prose[max(0, tick - 100):tick + 60]}..."
    real = _article_text(html / "notebooks" / "realdata.html")
    assert "make data" in real and "not in the dataset cache" in real
    assert not re.search(r"\b(agrees|disagrees)\b", real), "a verdict on the real-data page without data"
    # without data it says so once, and its closing promises no claim
    assert real.count("nothing to show") == 1 and "Each line below repeats a claim" not in real
    for page in sorted(html.rglob("*.html")):  # the footer and the sidebars too, outside the article
        if page.parent.name not in ("_static", "_sources"):
            assert "By The " not in html_module.unescape(re.sub(r"<[^>]+>", " ", page.read_text())), page.name


def test_the_front_page_lists_what_ran_without_its_data_and_the_command_that_fills_it(small_book):
    """The test build has no dataset cache: the front page names each chapter that ran without its data, linked, with
    the datasets it lacked, and the one command that fetches them; the speed page's count of chapters is the
    provenance page's less itself."""
    html = small_book / "_build" / "html"
    intro = (html / "book" / "intro.html").read_text()
    note = re.search(r'<div class="admonition warning"><p class="admonition-title">This build ran without some of its '
                     r'data</p>(.*?)</div>', intro, re.S)
    assert note, "the front page does not say that the build ran without data"
    for name, needs in (("realdata", "lewidi25_csc"), ("compare", "lewidi23_hs_brexit"),
                        ("testsuite", "dfki_mt_testsuite"), ("rq1", "dices350")):
        item = re.search(rf'<li><a href="../notebooks/{name}.html">.*?</li>', note.group(1), re.S)
        assert item and needs in item.group(0), f"the front page's list lacks {name} or {needs}"
    assert "<code>make data</code>" in note.group(1)
    speed = _article_text(html / "notebooks" / "speed.html")
    counted = re.search(r"Executing the other (\d+) chapters? of this build", speed)
    assert counted and int(counted.group(1)) == len(CHAPTERS) - 1, "the speed page counts the chapters otherwise"
    compare = _article_text(html / "notebooks" / "compare.html")
    assert "(not run" not in compare and compare.count("is not in the dataset cache") == 1


# a path of the machine that built the book: its checkout, home or caches, or any absolute path under the usual roots
MACHINE_PATH = r"(?<![\w.:/-])/(?:home|root|tmp|Users|work|var|opt|mnt|srv)/\S+|\.cache/annotator|[A-Z]:\\\\\w"


def test_no_page_prints_a_path_of_the_machine_that_built_it(small_book):
    html = small_book / "_build" / "html"
    literal = {str(p) for p in (ROOT, Path.home(), TEST_BUILD, EMPTY_DATA) if len(str(p)) > 1}
    for page in sorted(html.rglob("*.html")):
        if page.parent.name in ("_static", "_sources") or page.name in ("genindex.html", "search.html"):
            continue
        text = _article_text(page)
        found = re.search(MACHINE_PATH, text) or next((re.search(re.escape(p), text) for p in literal
                                                      if p in text), None)
        assert not found, f"{page.relative_to(html)} prints a path: ...{text[max(0, found.start() - 80):found.end()]}"


def test_machine_path_pattern_finds_paths_and_spares_urls():
    for text in ("the file /root/.cache/annotator-bootstrap/data/x.csv is missing", "see /home/ann/book", "/tmp/x"):
        assert re.search(MACHINE_PATH, text), text
    for text in ("github.com/Le-Wi-Di/le-wi-di.github.io", "https://example.org/work/tmp/x", "1/2 and 3/4",
                 "$ANNOTATION_DATA_DIR/dices350"):
        assert not re.search(MACHINE_PATH, text), text


VERDICT = r"(agrees|partly agrees|disagrees|cannot be checked)"
# the intro's rows, in order, and the finding box each copies: (chapter, index of the box on the chapter's page)
INTRO_ROWS = [("rq1", 0), ("rq1", 1), ("rq2", 0), ("rq2", 1), ("rq3", 0), ("rq4", 0)]


def test_intro_results_table_matches_every_chapter(small_book):
    html = small_book / "_build" / "html"
    intro = (html / "book" / "intro.html").read_text()
    table = re.search(r"<table.*?</table>", intro, re.S).group(0)
    rows = re.findall(r"<tr.*?</tr>", table, re.S)[1:]
    assert len(rows) == len(INTRO_ROWS)
    for row, (chapter, index) in zip(rows, INTRO_ROWS):
        cells = [html_module.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td.*?</td>", row, re.S)]
        assert f"notebooks/{chapter}.html" in row, f"intro row {cells[0]!r} does not link {chapter}"
        page = _article_text(html / "notebooks" / f"{chapter}.html")
        boxes = re.findall(rf"Finding(?: \d)?(?: on synthetic stand-ins(?: in part)?)?: {VERDICT}", page)
        verdict, _, seed_note = cells[4].partition(" on seed")  # "agrees on seeds 0 and 1; partly agrees on seed 2"
        assert verdict == boxes[index], f"intro says {cells[4]!r} for {cells[0]!r}, {chapter} says {boxes[index]!r}"
        assert verdict in ("agrees", "partly agrees", "disagrees", "cannot be checked")
        assert not seed_note or (re.fullmatch(rf"s? [\d, and]+(; {VERDICT} on seeds? [\d, and]+)+", seed_note)
                                 and "flips between seeds" in page)
        assert cells[3].startswith("synthetic stand-ins ("), cells[3]  # the test build has no real data


def test_rq_chapters_open_with_a_finding_and_reference_every_figure(small_book):
    html = small_book / "_build" / "html" / "notebooks"
    for name in RQ_CHAPTERS:
        page = (html / f"{name}.html").read_text()
        assert re.search(r"Finding( \d)?( on synthetic stand-ins( in part)?)?: "
                         r"(agrees|partly agrees|disagrees|cannot be checked)", page), name
        assert "What this shows" in page and "Pandita" in page  # the {cite} rendered
        for figure in re.findall(r'<figure[^>]*id="([^"]+)"', page):
            assert f'href="#{figure}"' in page, f"{name}: figure {figure} is never referenced"


def test_downloadable_notebooks_hold_no_progress_bars(small_book):
    for name in CHAPTERS:
        notebook = json.loads((small_book / "src" / "notebooks" / f"{name}.ipynb").read_text())
        for cell in notebook["cells"]:
            for output in cell.get("outputs", []):
                text = "".join(output.get("text", ""))
                assert "%|" not in text and "it/s]" not in text and "\r" not in text, f"{name}: progress output"


def test_provenance_covers_every_chapter_and_ends_with_a_watermark(small_book):
    text = _article_text(small_book / "_build" / "html" / "notebooks" / "provenance.html")
    for name in CHAPTERS:
        assert re.search(rf"\b{name}\b", text), f"provenance page lacks {name}"
    assert "Watermark" in text and all(p in text for p in ("python", "numpy", "numba", "pandas", "scipy"))


def test_nbval_reproduces_the_checked_tables(small_book):
    # two chapters whose tables are seeded (NBVAL_CHECK_OUTPUT), re-executed from scratch: an RQ chapter (its grids,
    # findings and tables) and the test suite's; the build above has executed every chapter once, and the engine's
    # seeding is tested cell by cell (tests/test_grid.py)
    checked = ["rq4", "testsuite"]
    notebooks = [str(small_book / "src" / "notebooks" / f"{name}.ipynb") for name in checked]
    for name in checked:
        assert "NBVAL_CHECK_OUTPUT" in (small_book / "src" / "notebooks" / f"{name}.ipynb").read_text(), name
    env = book_env("cache-nbval")  # a fresh cache: nbval re-simulates rather than reading results back
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nbval-lax",
                           "--rootdir", str(small_book), *notebooks],
                          cwd=small_book, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-4000:]
    assert re.search(r"\d+ passed", done.stdout)


def _browser():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.skip("Debian's chromium and chromium-driver are not installed (make test installs them where apt works)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1400,2000"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=options)


COLUMN_JS = """
const column = document.querySelector('article.bd-article') || document.querySelector('main');
const width = column.getBoundingClientRect().width;
return [width, Array.from(document.querySelectorAll('article img')).map(
    i => [i.src.split('/').pop(), i.naturalWidth, i.getBoundingClientRect().width])];
"""


def test_chapters_show_tables_and_figures_in_a_browser(small_book):
    """Every chapter renders its tables and figures (the real-data chapter has none without data); each RQ page is
    kept as a full-page screenshot at 1400 px, and every figure fits the content column at its natural size, so
    that its 9 pt tick labels are not scaled down."""
    html = small_book / "_build" / "html"
    browser = _browser()
    try:
        for name in CHAPTERS:
            browser.set_window_size(1400, 2000)
            browser.get((html / "notebooks" / f"{name}.html").as_uri())
            if name != "realdata":
                assert browser.find_elements("css selector", "article table"), f"{name}: no table"
                assert browser.find_elements("css selector", "article img"), f"{name}: no figure"
            broken = browser.execute_script(
                "return Array.from(document.querySelectorAll('article img'))"
                ".filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
            assert broken == [], f"{name}: broken images {broken}"
            links = browser.execute_script(
                "return Array.from(document.querySelectorAll('nav.bd-docs-nav a, .bd-sidebar-primary a'))"
                ".map(a => a.href).filter(h => h.startsWith('file:'))")
            assert links, f"{name}: no navigation links"
            for link in links:
                target = Path(link.split("#")[0].removeprefix("file://"))
                assert target.is_file(), f"{name}: navigation link to missing {target}"
            if name in RQ_CHAPTERS:
                column, figures = browser.execute_script(COLUMN_JS)
                for src, natural, rendered in figures:
                    assert rendered <= column + 0.5, f"{name}: {src} is wider than the content column"
                    assert natural <= rendered * 1.02, f"{name}: {src} is scaled down ({natural} px at {rendered})"
                height = browser.execute_script("return document.body.scrollHeight")
                browser.set_window_size(1400, min(height, 16000))
                browser.save_screenshot(str(small_book / f"screenshot-{name}.png"))
    finally:
        browser.quit()
    for name in RQ_CHAPTERS:
        assert (small_book / f"screenshot-{name}.png").stat().st_size > 10_000


def test_the_compare_chapter_embeds_its_plan_to_explore(small_book):
    """The compare chapter's plan as plotly panels in the page (the small build has no data, so the planner shows
    the stand-in's Accuracy, MAE and JSD): one panel per metric, and no console error beyond those the book's theme
    logs on every page."""
    from analysis.engine.metrics import METRIC_LABELS

    browser = _browser()
    try:
        browser.get((small_book / "_build" / "html" / "notebooks" / "compare.html").as_uri())
        titles = browser.execute_script(
            "return Array.from(document.querySelectorAll('article .plotly-graph-div .annotation-text'))"
            ".map(e => e.textContent)")
        assert titles == [METRIC_LABELS[m] for m in ("accuracy", "mae", "jsd")], titles
        panels = browser.execute_script("return document.querySelectorAll('article .cartesianlayer .subplot').length")
        assert panels == 3
        def page_errors():  # raised in the page itself (the theme's scripts under _static log their own)
            return {e["message"].split(" ", 2)[-1] for e in browser.get_log("browser")
                    if e["level"] == "SEVERE" and "/_static/" not in e["message"].split(" ", 1)[0]}
        errors = page_errors()
        browser.get((small_book / "_build" / "html" / "notebooks" / "rq1.html").as_uri())  # a page without a plot
        assert errors <= page_errors(), errors
    finally:
        browser.quit()


TABLES_JS = """
const column = (document.querySelector('article.bd-article') || document.querySelector('main'))
    .getBoundingClientRect().width;
return Array.from(document.querySelectorAll('article table')).map((table, i) => {
  let scroller = table, scrolls = false;
  for (; scroller && scroller.tagName !== 'ARTICLE'; scroller = scroller.parentElement) {
    const style = getComputedStyle(scroller);
    if (['auto', 'scroll'].includes(style.overflowX)) { scrolls = true; break; }
  }
  const cells = Array.from(table.querySelectorAll('td, th')).map(c => getComputedStyle(c));
  return {index: i, width: table.getBoundingClientRect().width, column: column, content: table.scrollWidth,
          wide: table.scrollWidth > table.clientWidth + 1, scrolls: scrolls,
          breaks: cells.filter(s => s.overflowWrap === 'anywhere' || s.wordBreak === 'break-all'
                                    || s.hyphens === 'auto').length,
          rows: Array.from(table.querySelectorAll('tr')).map(
              r => Array.from(r.querySelectorAll('td, th')).map(c => c.innerText.trim()))};
});
"""
# a cell that shows a missing value or a leftover file name instead of a value
BAD_CELL = re.compile(r"^(None|nan|NaN|<NA>|NaT)$|\.part\b")
DECIMAL = re.compile(r"(?<![\w.])(\d[\d,]*)\.(\d+)(?![\w.])")


def padded_numbers(rows: list[list[str]]) -> list[str]:
    """The cells of a table that show a number with padded decimals: a percentage with two trailing zeros
    ("93.100 %"), or a column whose every non-zero number of two or more decimals ends in 0, three or more of them
    ("8.830", "2.700", "8.960"), or in "00" ("93.100", "72.900"; a lone ratio "2.500"). A column of fixed-precision
    p-values or effects ("0.050", "0.140", "0.038") is not padded, nor a lone "0.100", nor one decimal ("4.0 %",
    "100.0")."""
    found = [cell for row in rows for cell in row if re.search(r"\d\.\d*00\s?%", cell)]
    for column in range(max(map(len, rows), default=0)):
        cells = [row[column] for row in rows if column < len(row)]
        tokens = [(whole, decimals) for cell in cells for whole, decimals in DECIMAL.findall(cell)
                  if decimals.strip("0") or whole.strip("0,")]
        padded = tokens and all(len(d) > 1 and d.endswith("0") for _, d in tokens) and (len(tokens) >= 3 or all(
            d.endswith("00") for _, d in tokens) and (len(tokens) > 1 or tokens[0][0].strip("0,")))
        found += [cell for cell in cells if DECIMAL.search(cell)] if padded else []
    return found


def test_padded_number_check_finds_padding_and_spares_fixed_precision():
    assert padded_numbers([["share"], ["93.100"], ["72.900"], ["10.300"]])
    assert padded_numbers([["ratio"], ["4"], ["2.500"], ["2"], ["5"]])
    assert padded_numbers([["warnings"], ["10.300 %"]])
    assert padded_numbers([["published a0"], ["8.830"], ["8.960"], ["2.700"]])
    assert not padded_numbers([["p-value", "Δ"], ["0.050", "0.140"], ["0.038", "0.100"]])
    assert not padded_numbers([["p"], ["0.100"]]) and not padded_numbers([["ratio"], ["2.5"], ["0.000"]])
    assert not padded_numbers([["NK"], ["1,000"], ["25,000"]])
    assert not padded_numbers([["share"], ["4.0 %"], ["3.8 %"], ["100.0"], ["100.0"], ["100.0"]])


def test_one_plural_check_spares_names():
    assert ONE_PLURAL.search("S2: 1 metrics, e.g. Accuracy") and ONE_PLURAL.search("smaller in 1 categories")
    assert not ONE_PLURAL.search("the paper's K = 1 cells") and not ONE_PLURAL.search("Analysis 1 items")


def test_every_page_at_768_px_has_tables_that_fit_or_scroll_and_show_values(small_book):
    """At 768 px, on every page of the book: each table lies inside the content column or scrolls sideways (in
    itself or a scrolling container) instead of being clipped, no cell breaks a word mid-word, no cell shows
    ``None``, ``nan`` or a ``.part`` file, no number is padded with zeros, and no text counts "1 metrics"."""
    html = small_book / "_build" / "html"
    browser = _browser()
    widest = {}
    try:
        browser.set_window_size(768, 1600)
        for entry in toc_files():
            browser.get((html / f"{entry}.html").as_uri())
            for table in browser.execute_script(TABLES_JS):
                where = f"{entry}, table {table['index']}"
                widest[where] = (round(table["width"]), round(table["column"]))
                assert table["breaks"] == 0, f"{where}: cells that break words mid-word"
                assert table["width"] <= table["column"] + 0.5 or table["scrolls"], f"{where} is clipped"
                assert not table["wide"] or table["scrolls"], f"{where} is wider than its box and does not scroll"
                bad = [cell for row in table["rows"] for cell in row if BAD_CELL.search(cell)]
                assert not bad, f"{where} shows {bad[:5]}"
                padded = padded_numbers(table["rows"])
                assert not padded, f"{where} pads numbers with zeros: {padded[:5]}"
            text = _article_text(html / f"{entry}.html")
            found = ONE_PLURAL.search(text)
            assert not found, f"{entry} says {found.group(0)!r}: ...{text[max(0, found.start() - 80):found.end()]}"
    finally:
        browser.quit()
    if widest:
        width, where = max((w, where) for where, (w, _) in widest.items())
        print(f"widest table at 768 px: {where}, {width} px in a {widest[where][1]} px column")


# the public functions that README names, each with a parameter its signature must show
API = {"analysis.data.annotations.load_annotations": "normalize_labels", "analysis.data.datasets.registered": "name",
       "analysis.data.datasets.info": "name", "analysis.data.datasets.fetch": "progress", "analysis.data.datasets.load": "name_or_path",
       "analysis.experiment.grid.run": "n_samples", "analysis.tools.compare.compare": "outputs_b", "analysis.tools.power.plan": "target_delta"}


def test_api_page_lists_the_public_functions_with_their_signatures(small_book):
    """The API page is autodoc's, built strictly with the rest: each function with its signature and docstring."""
    page = (small_book / "_build" / "html" / "book" / "api.html").read_text()
    for name, parameter in API.items():
        entry = re.search(rf'<dt class="sig[^"]*" id="{re.escape(name)}">(.*?)</dt>\s*<dd>(.*?)</dd>', page, re.S)
        assert entry, f"the API page lacks {name}"
        signature, body = (html_module.unescape(re.sub(r"<[^>]+>", "", part)) for part in entry.groups())
        assert f"{parameter}" in signature and len(body.split()) >= 5, f"{name}: {signature!r}"


def test_the_reproduced_paper_and_its_predecessor_are_cited_apart(small_book):
    """The paper this book reproduces and the authors' earlier Forest vs Tree (which the paper cites as "Pandita
    et al., 2026") have distinct citations and entries."""
    html = small_book / "_build" / "html" / "book"
    intro = _article_text(html / "intro.html")
    assert re.search(r"Pandita\s+et al\.\s*,\s*2026b", intro) and re.search(r"Pandita\s+et al\.\s*,\s*2026a", intro)
    references = _article_text(html / "references.html").lower()
    assert "multi-level annotator modeling" in references and "forest vs tree" in references
    assert "pkwh26a" in references and "pkwh26b" in references  # the labels keep the year's letter
