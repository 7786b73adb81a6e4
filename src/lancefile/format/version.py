"""The one version table, used by both the reader and the writer.

Lance v2 file versions and the numbers written in the footer:

============  ======================  ==========================
version       footer (major, minor)   footers accepted on read
============  ======================  ==========================
2.0           (0, 3)                  (0, 3), (2, 0)
2.1           (2, 1)                  (2, 1)
2.2           (2, 2)                  (2, 2)
2.3           (2, 3)                  (2, 3)
============  ======================  ==========================

Aliases mean what they mean to the reference: ``stable`` is 2.2, ``next`` is 2.3 and
``legacy`` is the v1 format (0.1/0.2), which lancefile does not handle.

What the 2.1+ page grammar allows differs between versions; :class:`Grammar` holds every
difference, and this table is the only place in lancefile where 2.1 and 2.2 differ:

=============================================  =====  =====
feature                                        2.1    2.2
=============================================  =====  =====
mini-block chunk words / value sizes           u16    u32 (``has_large_chunk`` required)
ConstantLayout with a value or packed levels   no     yes (only the all-null form in 2.1)
RLE frame for rep/def levels                   no     yes
VariablePackedStruct (packed struct, var kids) no     yes
map, fixed_size_list<struct>                   no     yes
General (LZ4/ZSTD) around dictionary blocks    no     yes
=============================================  =====  =====

Example::

    >>> resolve_version("0.3").name
    '2.0'
    >>> resolve_version("stable").name, resolve_version(None).name
    ('2.2', '2.2')
    >>> resolve_version("next")
    Traceback (most recent call last):
    ...
    lancefile.errors.UnsupportedVersionError: Lance file version 2.3 is not implemented yet for writing in lancefile
    >>> version_from_footer(0, 3).name
    '2.0'
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ..errors import UnsupportedVersionError

__all__ = ["FileVersion", "Grammar", "VersionInfo", "VERSIONS", "resolve_version", "version_from_footer",
           "DEFAULT_VERSION"]


class FileVersion(enum.Enum):
    V2_0 = "2.0"
    V2_1 = "2.1"
    V2_2 = "2.2"
    V2_3 = "2.3"


@dataclass(frozen=True)
class Grammar:
    """What the structural (2.1+) page grammar of one version allows."""

    large_chunks: bool  # mini-block chunk words and value-buffer sizes are u32, has_large_chunk set
    constant_values: bool  # ConstantLayout may hold a value (inline or in a buffer) and packed levels
    rle_levels: bool  # rep/def levels may use the RLE block frame
    variable_packed_struct: bool  # full-zip packed structs with variable-width children
    maps: bool
    fsl_of_struct: bool
    general_blocks: bool  # General (LZ4/ZSTD) around block buffers: dictionaries

    @property
    def chunk_word_bytes(self) -> int:
        """Bytes of a chunk-metadata word and of a value-buffer size in a chunk header."""
        return 4 if self.large_chunks else 2


GRAMMAR_2_1 = Grammar(large_chunks=False, constant_values=False, rle_levels=False,
                      variable_packed_struct=False, maps=False, fsl_of_struct=False, general_blocks=False)
GRAMMAR_2_2 = Grammar(large_chunks=True, constant_values=True, rle_levels=True,
                      variable_packed_struct=True, maps=True, fsl_of_struct=True, general_blocks=True)


@dataclass(frozen=True)
class VersionInfo:
    version: FileVersion
    footer: tuple[int, int]  # what the writer puts in the footer
    read_footers: tuple[tuple[int, int], ...]
    readable: bool  # lancefile can read it
    writable: bool  # lancefile can write it
    grammar: Grammar | None = None  # the structural page grammar (None: 2.0's array encodings)

    @property
    def name(self) -> str:
        return self.version.value


# The single source of truth. Flip readable/writable as versions are implemented.
VERSIONS: dict[FileVersion, VersionInfo] = {
    FileVersion.V2_0: VersionInfo(FileVersion.V2_0, (0, 3), ((0, 3), (2, 0)), True, True),
    FileVersion.V2_1: VersionInfo(FileVersion.V2_1, (2, 1), ((2, 1),), True, True, GRAMMAR_2_1),
    FileVersion.V2_2: VersionInfo(FileVersion.V2_2, (2, 2), ((2, 2),), True, True, GRAMMAR_2_2),
    FileVersion.V2_3: VersionInfo(FileVersion.V2_3, (2, 3), ((2, 3),), False, False),
}

ALIASES = {"stable": FileVersion.V2_2, "next": FileVersion.V2_3}
LEGACY_NAMES = {"legacy", "0.1", "0.2", "v1", "1"}
LEGACY_FOOTERS = {(0, 0), (0, 1), (0, 2)}

# Our writer's default: the reference's "stable", 2.2.
DEFAULT_VERSION = FileVersion.V2_2


def resolve_version(name: str | FileVersion | None, *, for_write: bool = True) -> VersionInfo:
    """Map a user's version name (``"2.0"``, ``"stable"``, ``"0.3"``...) to its table row."""
    if name is None:
        return VERSIONS[DEFAULT_VERSION]
    if isinstance(name, FileVersion):
        info = VERSIONS[name]
    else:
        key = str(name).strip().lower()
        if key in LEGACY_NAMES:
            raise UnsupportedVersionError(
                f"Lance file version {name!r} is the legacy v1 format, which lancefile does not support"
            )
        if key in ALIASES:
            info = VERSIONS[ALIASES[key]]
        else:
            key = key[1:] if key.startswith("v") else key
            match = [v for v in VERSIONS.values() if v.name == key or ".".join(map(str, v.footer)) == key]
            if not match:
                known = ", ".join([v.name for v in VERSIONS.values()] + sorted(ALIASES) + ["legacy"])
                raise UnsupportedVersionError(f"unknown Lance file version {name!r} (known: {known})")
            info = match[0]
    able = info.writable if for_write else info.readable
    if not able:
        verb = "writing" if for_write else "reading"
        raise UnsupportedVersionError(
            f"Lance file version {info.name} is not implemented yet for {verb} in lancefile"
        )
    return info


def version_from_footer(major: int, minor: int, *, path: str = "<file>") -> VersionInfo:
    """The version of a file from its footer numbers; unreadable versions raise."""
    if (major, minor) in LEGACY_FOOTERS:
        raise UnsupportedVersionError(
            f"{path}: footer version {major}.{minor} is the legacy v1 Lance format, which lancefile does not read"
        )
    for info in VERSIONS.values():
        if (major, minor) in info.read_footers:
            if not info.readable:
                raise UnsupportedVersionError(
                    f"{path}: Lance file version {info.name} (footer {major}.{minor}) is not implemented yet in lancefile"
                )
            return info
    raise UnsupportedVersionError(f"{path}: unknown Lance storage version {major}.{minor}")
