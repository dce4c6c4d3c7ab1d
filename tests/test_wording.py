from analysis.wording import counted


def test_a_count_is_singular_after_one_only():
    assert [counted(n, "seed") for n in (0, 1, 2)] == ["0 seeds", "1 seed", "2 seeds"]
    assert counted(1200, "item") == "1,200 items"
