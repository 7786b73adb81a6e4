"""The one error hierarchy of lancefile.

Every error raised for bad input is a :class:`LanceError`; messages name the file, the
column and the page where that applies.

Example::

    >>> import lancefile
    >>> try:
    ...     lancefile.read_table("/no/such/file.lance")
    ... except lancefile.LanceError as exc:
    ...     print(type(exc).__name__)
    LanceIOError
"""

from __future__ import annotations

__all__ = [
    "LanceError",
    "LanceIOError",
    "NotALanceFileError",
    "CorruptFileError",
    "UnsupportedVersionError",
    "UnsupportedEncodingError",
    "UnsupportedTypeError",
    "InvalidInputError",
    "SchemaMismatchError",
    "ColumnNotFoundError",
    "CommitConflictError",
    "ChecksumError",
    "StorageTypeWarning",
]


class LanceError(Exception):
    """Base class of every error lancefile raises on purpose."""


class LanceIOError(LanceError, OSError):
    """The file could not be opened, read or written."""


class NotALanceFileError(LanceError):
    """The bytes are not a Lance file (wrong magic, too short)."""


class CorruptFileError(LanceError):
    """A Lance file whose metadata or data does not hold together."""


class ChecksumError(CorruptFileError):
    """Bytes whose checksum (written by lancefile) does not match: the file was damaged after it was written.

    The message names the file and the column, page and buffer (or the metadata) that hold the bytes.
    """


class UnsupportedVersionError(LanceError):
    """A file format version that lancefile does not (yet) read or write."""


class UnsupportedEncodingError(LanceError):
    """A page or column encoding with no registered decoder."""


class UnsupportedTypeError(LanceError, TypeError):
    """An Arrow type the Lance format (at the chosen version) cannot hold."""


class InvalidInputError(LanceError, ValueError):
    """A bad argument: out-of-range indices, bad options, nulls in a non-null field..."""


class SchemaMismatchError(InvalidInputError):
    """A batch whose schema differs from the writer's schema."""


class ColumnNotFoundError(InvalidInputError, KeyError):
    """A projected column that the file does not have."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else ""


class CommitConflictError(LanceError):
    """A dataset commit that another writer's newer version makes impossible to apply.

    The dataset is left at the other writer's version; nothing of the failed commit is visible.
    """


class StorageTypeWarning(UserWarning):
    """A type written as another one, as the reference does (``string_view`` is stored as ``string``)."""
