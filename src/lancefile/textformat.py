"""Small text formatting helpers shared by the CLI and the Spark job (below both, so neither imports the other).

Example::

    >>> format_size(1536), format_size(10)
    ('1.5 KiB', '10 B')
"""

from __future__ import annotations

__all__ = ["format_size", "ProgressBar"]


def format_size(n: float) -> str:
    """``1536`` -> ``1.5 KiB``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover


class ProgressBar:
    """``name  stage [#####.....]  42%`` rewritten in place on ``stream`` (a terminal); call it
    with ``(stage, done, total)``; ``total`` 0 or None shows the count done instead."""

    def __init__(self, stream, name: str, width: int = 30) -> None:
        self.stream, self.name, self.width = stream, name, width
        self._last = None
        self._shown = 0

    def __call__(self, what: str, done: int, total: int | None) -> None:
        if not total:
            line = f"\r{self.name}  {what:9s} {done:,}"
        else:
            pct = int(100 * done / total)
            if (what, pct) == self._last:
                return
            self._last = (what, pct)
            fill = self.width * min(pct, 100) // 100
            line = f"\r{self.name}  {what:9s} [{'#' * fill}{'.' * (self.width - fill)}] {pct:3d}%"
        self._shown = max(self._shown, len(line))
        self.stream.write(line)
        self.stream.flush()

    def clear(self) -> None:
        self.stream.write("\r" + " " * max(self._shown, len(self.name) + self.width + 20) + "\r")
        self.stream.flush()
