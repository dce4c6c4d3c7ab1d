"""Data: annotation tables read into datasets, the registry of public datasets, and the seeded stand-ins.

- :mod:`~analysis.data.reading`: a table file read (its format, columns, ids as text);
- :mod:`~analysis.data.annotations`: one row per rating -> :class:`AnnotationDataset` (ids, label codes, topology);
- :mod:`~analysis.data.datasets`: the registry, the dataset cache and ``load(name)``; :mod:`~analysis.data.parsers`: each
  registered format read into a long table;
- :mod:`~analysis.data.synthetic`: the stand-ins' generator; :mod:`~analysis.data.dispersion`: per-item laws.
- :mod:`~analysis.data.population`: the stand-ins' model fitted to a pilot, and studies drawn from it.

The lowest layer above :mod:`analysis.errors` and :mod:`analysis.io`: it imports no other part of the package.
"""

from analysis.data.annotations import AnnotationDataset, load_annotations

__all__ = ["AnnotationDataset", "load_annotations"]
