"""The book: notebook structure, a small-parameter build, nbval re-execution and a headless-browser check.

The build runs every chapter through papermill with a small grid (the banner marks such numbers as not results),
then builds the HTML with warnings as errors. It lives under ``_build/test`` so it never touches the real book.
"""

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
SMALL = '-p n_samples 40 -p n_boot 100 -y "{budgets: [100, 1000], ks: [1, 5, 20], epsilons: [0.3]}"'
CHAPTERS = ["calibration", "rq1", "rq2", "rq3", "rq4", "realdata", "testsuite", "speed"]


def book_env(cache: str) -> dict:
    """The environment of the small build and of its nbval re-run: the same caches and dataset folder."""
    env = {**os.environ, "ANALYSIS_CACHE_DIR": str(TEST_BUILD / cache), "BOOK_BUILD_DIR": str(TEST_BUILD)}
    shared = ROOT.parent / "shared" / "data"
    if "ANNOTATION_DATA_DIR" not in env and shared.is_dir():
        env["ANNOTATION_DATA_DIR"] = str(shared)  # as the Makefile does
    return env


def toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc["parts"]:
        files += [chapter["file"] for chapter in part["chapters"]]
    return files


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


@pytest.fixture(scope="session")
def small_book():
    """Execute every chapter with small parameters and build the HTML (about a minute)."""
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


def test_nbval_reproduces_the_checked_tables(small_book):
    notebooks = [str(small_book / "src" / "notebooks" / f"{name}.ipynb") for name in CHAPTERS]
    for notebook in notebooks:
        assert "NBVAL_CHECK_OUTPUT" in Path(notebook).read_text()
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


def test_chapters_show_tables_and_figures_in_a_browser(small_book):
    html = small_book / "_build" / "html"
    browser = _browser()
    try:
        for name in CHAPTERS:
            browser.get((html / "notebooks" / f"{name}.html").as_uri())
            assert browser.find_elements("css selector", "article table"), f"{name}: no table"
            images = browser.find_elements("css selector", "article img")
            assert images, f"{name}: no figure"
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
            if name == "rq1":
                browser.save_screenshot(str(small_book / "screenshot-rq1.png"))
    finally:
        browser.quit()
    assert (small_book / "screenshot-rq1.png").stat().st_size > 10_000
