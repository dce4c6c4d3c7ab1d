"""plan --html: one self-contained page per plan, on a crossed, a batched and a sparse pilot, opened offline in a
headless browser; and the bad inputs of --html, each refused with one line before any work."""

import html
import json

import pandas as pd
import pytest

from analysis.__main__ import main
from analysis.engine.metrics import METRIC_LABELS
from analysis.tools.power import WHOSE_TEST
from analysis.data.annotations import from_table
from conftest import batched_table, crossed_table, sparse_table
from test_book import _browser

PILOTS = {"crossed": (crossed_table(n_items=30, n_raters=8), []),
          "batched": (batched_table(), ["--batch", "batch"]),
          "sparse": (sparse_table(n_items=40, n_raters=30, per_item=6), [])}
METRICS = ["accuracy", "mae", "jsd"]


def external_sources(text: str) -> list[str]:
    """The src and href attributes of the page's own tags (an HTML parser: a tag written inside a script is
    script text, not a tag)."""
    from html.parser import HTMLParser

    found = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.extend(value for name, value in attrs if name in ("src", "href") and value)

    Tags().feed(text)
    return found


def plan_page(tmp_path, design: str, options=("--n-samples", "40", "--metrics", ",".join(METRICS))) -> tuple:
    table, extra = PILOTS[design]
    data = tmp_path / f"{design}.csv"
    table.to_csv(data, index=False)
    page = tmp_path / f"{design}.html"
    code = main(["plan", "--data", str(data), *extra, "--epsilon", "0.5", "--ns", "20,40", "--ks", "2,3", *options,
                 "--quiet", "--html", str(page)])
    return code, page


def test_a_page_of_compares_test_says_whose_power_and_counts_studies(tmp_path, capsys):
    code, page = plan_page(tmp_path, "crossed", ("--test", "compare", "--n-samples", "10", "--metrics", "accuracy"))
    assert code == 0, capsys.readouterr().err
    text = page.read_text()
    assert html.escape(WHOSE_TEST["compare"]) in text and "<th>studies per design</th><td>10</td>" in text
    assert "--test compare" in text


@pytest.mark.parametrize("design", sorted(PILOTS))
def test_the_page_holds_every_metric_and_the_command_and_fetches_nothing(tmp_path, design, capsys):
    code, page = plan_page(tmp_path, design)
    assert code == 0, capsys.readouterr().err
    text = page.read_text()
    assert "--html" in text and f"{design}.csv" in text  # the command that reproduces it
    assert not external_sources(text)  # plotly's JavaScript is in the page
    assert html.escape(WHOSE_TEST["paper"]) in text  # whose test the power is, as the report says it
    for metric in METRICS:
        assert json.dumps(METRIC_LABELS[metric]) in text


def test_the_pages_open_offline_in_a_browser_with_every_panel_and_no_console_error(tmp_path, capsys):
    pages = {}
    for design in PILOTS:
        code, page = plan_page(tmp_path, design)
        assert code == 0, capsys.readouterr().err
        pages[design] = page
    browser = _browser()
    try:
        for design, page in pages.items():
            browser.get(page.as_uri())
            titles = browser.execute_script(
                "return Array.from(document.querySelectorAll('.gtitle, .annotation-text')).map(e => e.textContent)")
            assert {METRIC_LABELS[m] for m in METRICS} <= set(titles), (design, titles)
            panels = browser.execute_script("return document.querySelectorAll('.cartesianlayer .subplot').length")
            assert panels == len(METRICS), (design, panels)
            errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
            assert not errors, (design, errors)
    finally:
        browser.quit()


@pytest.mark.parametrize("options, message", [
    (["--html", "{data}"], "name a .html or .htm file"),
    (["--html", "{link}"], "input"),
    (["--html", "{tmp}/plan.png"], "name a .html or .htm file"),
    (["--html", "/proc/plan.html"], "a folder of the system"),
    (["--html", "{tmp}/folder.html"], "folder"),
    (["--html", "{tmp}/plan.html", "--power", "1.2"], "power (--power) must lie in (0, 1), got 1.2"),
    (["--html", "{tmp}/plan.html", "--cost-item", "-1"], "cost_item (--cost-item) must be >= 0, got -1"),
])
def test_bad_html_inputs_get_one_line_and_nothing_is_written(tmp_path, capsys, options, message):
    data = tmp_path / "pilot.csv"
    PILOTS["crossed"][0].to_csv(data, index=False)
    link = tmp_path / "pilot-link.html"  # the input under another name
    link.symlink_to(data)
    (tmp_path / "folder.html").mkdir()
    before = set(tmp_path.rglob("*"))
    argv = [o.format(data=data, tmp=tmp_path, link=link) for o in options]
    code = main(["plan", "--data", str(data), "--epsilon", "0.5", "--n-samples", "20", "--quiet", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and message in err, err
    assert set(tmp_path.rglob("*")) == before
    assert pd.read_csv(data).shape == PILOTS["crossed"][0].shape  # the input is untouched


def test_the_star_is_hollow_where_the_cheapest_design_extrapolates():
    """The page's star reads the cheapest design's mark from the designs (a modelled R above the pilot's is an
    extrapolation even where every cheapest design is modelled)."""
    from dataclasses import replace

    from analysis.tools import plan_page, power

    pilot = from_table(crossed_table(n_items=30, n_raters=6))
    planned = power.plan(pilot, sampler="S1", epsilon=0.6, ns=[20, 40], ks=[2, 6], n_samples=40,
                         metrics=["mae"], raters=[12])
    for chosen, symbol in ((planned.designs[planned.designs["R"] > 6], "star-open"),
                           (planned.designs[~power.beyond_pilot(planned.designs)], "star")):
        fig = plan_page.figure(replace(planned, cheapest=power.cheapest(chosen, 0.0)))
        stars = [t for t in fig.data if t.name == "cheapest reaching the target"]
        assert len(stars) == 1 and stars[0].marker.symbol == symbol
