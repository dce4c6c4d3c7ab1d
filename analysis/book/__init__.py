"""The book: what the chapters call to set up, show and glue their results (:mod:`~analysis.book.chapter`,
:mod:`~analysis.book.plots`, :mod:`~analysis.book.glue`) and the compare chapter's worked example
(:mod:`~analysis.book.compare_example`).

The top layer: it may import every other; none imports it.
"""
