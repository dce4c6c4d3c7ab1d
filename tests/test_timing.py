"""The speed page's sentences: the build's total from the executed chapters, and VET against the median cell."""

import pandas as pd

from analysis.experiment import timing


def runs(seconds, changed=()):
    return pd.DataFrame({"chapter": list(seconds), "seconds": list(seconds.values()),
                         "parameters changed from the defaults": [
                             "n_samples = 40" if name in changed else "none (the chapter's own defaults)"
                             for name in seconds]})


def test_build_time_sums_the_executed_chapters_and_says_when_they_ran_small():
    full = timing.build_time(runs({"rq1": 250.0, "rq2": 130.4, "why": None}))
    assert "the other 2 chapters of this build (all but this page and the provenance page, which run after them) took "\
        "6 min 20 s" in full
    assert "the longest being rq1 at 4 min 10 s" in full
    assert "every chapter at its own defaults" in full
    small = timing.build_time(runs({"rq1": 25.0, "rq2": 5.0}, changed=("rq1",)))
    assert "took 30 s" in small and "1 of them ran with parameters changed" in small
    assert "no total" in timing.build_time(runs({}))
    assert "the other 1 chapter of" in timing.build_time(runs({"rq1": 25.0}))  # the count's noun agrees
    # the page's own record is the previous build's (it runs last): left out of the count, the total and the span
    assert "the other 2 chapters" in timing.build_time(runs({"rq1": 250.0, "rq2": 130.4, "speed": 30.0}))
    assert "took 6 min 20 s" in timing.build_time(runs({"rq1": 250.0, "rq2": 130.4, "speed": 30.0}))


def test_build_time_gives_the_span_of_chapters_that_ran_side_by_side():
    table = runs({"rq1": 250.0, "rq2": 130.0, "why": 120.0})
    table["executed"] = ["2026-01-01 10:04:10", "2026-01-01 10:02:10", "2026-01-01 10:06:10"]  # rq2 beside rq1
    assert "6 min 10 s from the first start to the last end" in timing.build_time(table)  # 10:00:00 to 10:06:10
    table["executed"] = ["2026-01-01 10:04:10", "2026-01-01 10:06:20", "2026-01-01 10:08:20"]  # one after another
    assert "side by side" not in timing.build_time(table)
    table.loc[0, "executed"] = "–"  # an end not known: no span
    assert "side by side" not in timing.build_time(table) and "took 8 min 20 s in all" in timing.build_time(table)


def test_vet_comparison_is_against_the_median_sampler_not_an_outlier():
    reference = pd.DataFrame({"sampler": ["S1", "S2", "S3"], "seconds": [0.04, 0.05, 0.9], "n_samples": 1000})
    sentence = timing.vet_comparison(reference)
    vet = sum(timing.VET_SECONDS.values())
    assert f"about {vet / 0.05:,.0f} times that median" in sentence and "0.050 s in the median" in sentence
    assert "no comparison" in timing.vet_comparison(reference.iloc[:0])
