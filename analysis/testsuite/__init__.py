"""A separate system: regex-checked machine-translation test suites (Macketanz et al. 2018).

- :mod:`~analysis.testsuite.suite`: judging outputs, accuracy tables, Z-test clusters, the paired bootstrap, reviews;
- :mod:`~analysis.testsuite.breakdowns`: the source's further tables (tense, verb type, well-filled phenomena,
  decisive categories).

Imports the data layer (the dataset registry) only.
"""
