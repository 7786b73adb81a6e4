"""Small text formatting helpers shared by the CLI and the Spark job (below both, so neither imports the other).

Example::

    >>> format_size(1536), format_size(10)
    ('1.5 KiB', '10 B')
"""

from __future__ import annotations

__all__ = ["format_size"]


def format_size(n: float) -> str:
    """``1536`` -> ``1.5 KiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover
