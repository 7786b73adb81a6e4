"""Lance datasets: versioned tables of Lance files (``lance.dataset`` / ``lance.write_dataset``).

See :mod:`lancefile.datasets.core` (reading), :mod:`lancefile.datasets.write` (writing and
committing), :mod:`lancefile.datasets.manifest` and :mod:`lancefile.datasets.deletion` (the
on-disk pieces).
"""

from .core import LanceDataset, dataset
from .fragment import LanceFragment
from .write import write_dataset

__all__ = ["LanceDataset", "LanceFragment", "dataset", "write_dataset"]
