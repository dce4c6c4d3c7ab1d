"""Words for the package's sentences: a count and its noun, singular after 1; numbers listed in a sentence; a noise
law's name in a sentence."""


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``counted(1, "seed")`` is ``"1 seed"``, ``counted(1200, "item")`` is ``"1,200 items"``; ``plural`` where the
    noun's is not its singular with an s (``counted(2, "category", "categories")``)."""
    return f"{int(n):,} {noun if n == 1 else plural or noun + 's'}"


def law_name(law: str) -> str:
    """A noise law's name as a sentence writes it: ``"dirichlet-shares"`` is ``"Dirichlet-shares"`` (a name),
    ``"one-label"`` stays as it is."""
    return law.replace("dirichlet", "Dirichlet")


def listed(values) -> str:
    """Numbers in a sentence, in increasing order: ``listed([20, 1, 5])`` is ``"1, 5 and 20"``, ``listed([3])``
    ``"3"``."""
    words = [f"{v:g}" for v in sorted(values)]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + f" and {words[-1]}"
