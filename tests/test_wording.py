from analysis.wording import counted


def test_a_count_is_singular_after_one_only():
    assert [counted(n, "seed") for n in (0, 1, 2)] == ["0 seeds", "1 seed", "2 seeds"]
    assert counted(1200, "item") == "1,200 items"


def test_numbers_in_a_sentence_are_listed_in_order_with_and():
    from analysis.wording import listed

    assert listed([20, 1, 5]) == "1, 5 and 20"
    assert listed([40, 10]) == "10 and 40"
    assert listed([3]) == "3"
