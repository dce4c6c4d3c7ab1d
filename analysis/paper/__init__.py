"""The comparison with the paper: regenerated tables beside the published ones (:mod:`~analysis.paper.tables`),
effect sizes at the paper's cells (:mod:`~analysis.paper.effect_sizes`), where p crosses 0.05 there and the spread
the paper's (Δ, p) imply (:mod:`~analysis.paper.crossings`), the identities its numbers reveal
(:mod:`~analysis.paper.identities`), the findings and their verdict rules (:mod:`~analysis.paper.findings`,
:mod:`~analysis.paper.verdicts`) and the why-chapter's alternatives (:mod:`~analysis.paper.why`).

Imports the data, the engine and the experiment; never the book.
"""
