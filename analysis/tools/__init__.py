"""The user's tools on their own data: compare two systems (:mod:`~analysis.tools.compare`), plan a study
(:mod:`~analysis.tools.power`), the command line's shared options (:mod:`~analysis.tools.options`) and the
calibration of compare (:mod:`~analysis.tools.compare_calibration`).

Imports the data, the engine and the experiment; nothing about the paper or the book.
"""
