"""Lance datasets: versioned tables of Lance files (``lance.dataset`` / ``lance.write_dataset``).

See :mod:`lancefile.dataset.core` (reading), :mod:`lancefile.dataset.write` (writing and
committing), :mod:`lancefile.dataset.manifest` and :mod:`lancefile.dataset.deletion` (the
on-disk pieces).
"""

from .core import LanceDataset, dataset
from .fragment import LanceFragment
from .write import write_dataset

__all__ = ["LanceDataset", "LanceFragment", "dataset", "write_dataset"]
