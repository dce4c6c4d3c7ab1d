"""Words for counts in the package's sentences: a number and its noun, singular after 1."""


def counted(n: int, noun: str) -> str:
    """``counted(1, "seed")`` is ``"1 seed"``, ``counted(1200, "item")`` is ``"1,200 items"``."""
    return f"{int(n):,} {noun if n == 1 else noun + 's'}"
