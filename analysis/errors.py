"""Errors a user can cause. Each is a ValueError whose message says what was found and what to do."""


class AnalysisError(ValueError):
    """Base class of every error the package raises on bad input."""


class DataError(AnalysisError):
    """An annotation table that cannot be used as it is (missing column, one label, duplicates...)."""


class TopologyError(AnalysisError):
    """A sampler asked for a design (fully crossed, batched) that the data do not have."""


class ParameterError(AnalysisError):
    """A bad run parameter: N or K below 1, an unknown metric or sampler, epsilon outside [0, 1]."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a grid run: ``cached`` is (cells finished, cells in the grid, cache directory or None)."""

    def __init__(self, finished: int, total: int, cache_dir: str | None):
        super().__init__(f"{finished} of {total} cells finished")
        self.cached = (finished, total, cache_dir)
