"""Manifests: one file per dataset version under ``_versions/``, found, read and committed.

A manifest file is a sequence of length-prefixed protobuf sections (optional index section,
optional inline transaction, then the :class:`Manifest` itself) followed by a 16-byte trailer:
the manifest section's offset (i64), the legacy version numbers 0 and 2 (i16 each) and the
magic ``LANC``. Versions are named either ``{version}.manifest`` (V1) or, by default for new
datasets, ``{2**64 - 1 - version:020d}.manifest`` (V2, newest first when sorted).

Example::

    >>> manifest_file_name(1, "v2"), manifest_file_name(1, "v1")
    ('18446744073709551614.manifest', '1.manifest')
    >>> parse_manifest_name('18446744073709551614.manifest'), parse_manifest_name('7.manifest')
    ((1, 'v2'), (7, 'v1'))
"""

from __future__ import annotations

import json
import os
import struct
import uuid
from dataclasses import dataclass

from google.protobuf.message import DecodeError

from .._proto import table_pb2
from ..errors import CorruptFileError, LanceIOError, NotALanceFileError, UnsupportedVersionError
from .storage import create_if_absent, exists, is_remote, join, make_dirs
from .storage import name as location_name

__all__ = [
    "VERSIONS_DIR",
    "ManifestFile",
    "manifest_file_name",
    "parse_manifest_name",
    "list_manifests",
    "read_manifest",
    "encode_manifest",
    "commit_manifest_file",
    "write_hint",
    "check_reader_flags",
    "check_writer_flags",
    "FLAG_DELETION_FILES",
    "FLAG_STABLE_ROW_IDS",
    "FLAG_TABLE_CONFIG",
    "FLAG_MIXED_FILE_VERSIONS",
]

VERSIONS_DIR = "_versions"
HINT_FILE = "latest_version_hint.json"
MAGIC = b"LANC"
TRAILER = struct.Struct("<qhh4s")
_U64_MAX = (1 << 64) - 1
_V2_NAME_LENGTH = 20 + len(".manifest")
MAX_MANIFEST_BYTES = 1 << 30  # refuse to load a "manifest" larger than this

FLAG_DELETION_FILES = 1
FLAG_STABLE_ROW_IDS = 2
FLAG_V2_FORMAT_DEPRECATED = 4
FLAG_TABLE_CONFIG = 8
FLAG_BASE_PATHS = 16
FLAG_INLINE_TRANSACTION_ONLY = 32
FLAG_MIXED_FILE_VERSIONS = 256
_FLAG_NAMES = {1: "deletion files", 2: "stable row ids", 4: "v2 format (deprecated)", 8: "table config",
               16: "base paths", 32: "inline transactions only", 256: "mixed data-file versions",
               1024: "tagged fragment-reuse index", 16384: "managed blobs", 32768: "non-reusable field ids",
               65536: "zone write seed"}
# What lancefile understands when reading: row ids are ignored (rows are addressed by position),
# and every data file is decoded by its own footer, so mixed file versions are fine.
READER_FLAGS = FLAG_DELETION_FILES | FLAG_STABLE_ROW_IDS | FLAG_V2_FORMAT_DEPRECATED | FLAG_TABLE_CONFIG \
    | FLAG_INLINE_TRANSACTION_ONLY | FLAG_MIXED_FILE_VERSIONS
# What lancefile can keep true when it commits a new version (no row-id sequences, no base paths).
WRITER_FLAGS = FLAG_DELETION_FILES | FLAG_V2_FORMAT_DEPRECATED | FLAG_TABLE_CONFIG | FLAG_INLINE_TRANSACTION_ONLY \
    | FLAG_MIXED_FILE_VERSIONS


def manifest_file_name(version: int, scheme: str = "v2") -> str:
    """The file name of ``version`` under ``_versions/`` in naming scheme ``"v1"`` or ``"v2"``."""
    if scheme == "v2":
        return f"{_U64_MAX - version:020d}.manifest"
    return f"{version}.manifest"


def parse_manifest_name(name: str) -> tuple[int, str] | None:
    """(version, scheme) of a manifest file name, or None for names that are not manifests."""
    if not name.endswith(".manifest"):
        return None
    stem = name[: -len(".manifest")]
    if not stem.isdigit() or not stem.isascii():
        return None
    number = int(stem)
    if number > _U64_MAX:  # no version has such a name
        return None
    if len(name) == _V2_NAME_LENGTH:
        return _U64_MAX - number, "v2"
    return number, "v1"


@dataclass(frozen=True)
class ManifestFile:
    """One version's manifest as found in ``_versions/``."""

    version: int
    path: object  # a local path (str) or an ObjectStore (lancefile.datasets.storage)
    scheme: str


def list_manifests(root) -> list[ManifestFile]:
    """Every version's manifest in ``root``, oldest first.

    Raises :class:`CorruptFileError` when both naming schemes are present (the reference
    refuses such a directory too) and :class:`LanceIOError` when ``_versions`` cannot be listed.
    """
    from . import storage

    directory = storage.join(root, VERSIONS_DIR)
    names = storage.list_names(directory) or []
    found = []
    for name in names:
        parsed = parse_manifest_name(name)
        if parsed is not None:
            found.append(ManifestFile(parsed[0], storage.join(directory, name), parsed[1]))
    if len({m.scheme for m in found}) > 1:
        raise CorruptFileError(f"{storage.name(directory)}: holds manifests named by both the V1 and the V2 scheme")
    found.sort(key=lambda m: m.version)
    return found


@dataclass
class LoadedManifest:
    """A decoded manifest plus the raw sections a new version may carry over."""

    manifest: table_pb2.Manifest
    path: str
    size: int
    index_section: bytes | None  # the index section's bytes (length prefix excluded), if any

    def transaction(self, root) -> table_pb2.Transaction | None:
        """The transaction that made this version: inline, else from ``_transactions/``; None if neither."""
        m = self.manifest
        if self._inline is not None:
            return self._inline
        if m.transaction_file:
            from . import storage

            loc = storage.join(root, "_transactions", os.path.basename(m.transaction_file))
            try:
                return _decode(table_pb2.Transaction, storage.read_small(loc, "transaction", MAX_MANIFEST_BYTES),
                               storage.name(loc), "transaction")
            except LanceIOError:
                return None
        return None

    _inline: table_pb2.Transaction | None = None


def read_regular_file(path: str, what: str, limit: int) -> bytes:
    """The bytes of ``path``, refused (with a Lance error naming it) unless it is a regular file of at most ``limit`` bytes.

    Opened non-blocking and checked before reading, so a FIFO or device never hangs a reader.
    """
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise LanceIOError(f"{path}: the {what} does not exist") from None
    except IsADirectoryError:
        raise CorruptFileError(f"{path}: a directory where a {what} file was expected") from None
    except OSError as exc:
        raise LanceIOError(f"cannot open {path}: {exc.strerror}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CorruptFileError(f"{path}: the {what} is not a regular file")
        if st.st_size > limit:
            raise CorruptFileError(f"{path}: {st.st_size} bytes is too large for a {what}")
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            return f.read(min(limit, st.st_size) + 1)  # (+1: a file that grew since is still refused)
    except OSError as exc:
        raise LanceIOError(f"cannot read {path}: {exc.strerror}") from exc
    finally:
        if fd >= 0:
            os.close(fd)


def _decode(cls, data: bytes, path: str, what: str):
    msg = cls()
    try:
        msg.ParseFromString(data)
    except (DecodeError, RuntimeWarning, ValueError) as exc:
        raise CorruptFileError(f"{path}: the {what} does not parse: {exc}") from None
    _check_wire_types(msg, len(data), path, what)
    return msg


def _check_wire_types(msg, size: int, path: str, what: str) -> None:
    """Refuse a message where a known field came with the wrong wire type. Python's protobuf
    keeps such a field as an unknown one, so one flipped bit in a tag could drop a fragment or a
    schema field without a word (the reference refuses: "invalid wire type"). Fields this
    library does not know (a newer writer's) stay allowed. A message with no unknown fields at
    all re-encodes to as many bytes without them (~1 ms for 2,000 fragments); only otherwise
    is every message looked at."""
    bare = type(msg)()
    bare.CopyFrom(msg)
    bare.DiscardUnknownFields()
    if bare.ByteSize() == size:
        return
    found = _misplaced_field(msg)
    if found is not None:
        raise CorruptFileError(f"{path}: the {what} does not parse: field {found} has the wrong wire type")


def _misplaced_field(msg) -> str | None:
    """``Type.field`` of the first known field kept as an unknown one, or None."""
    from google.protobuf import unknown_fields
    from google.protobuf.descriptor import FieldDescriptor

    d = msg.DESCRIPTOR
    for f in unknown_fields.UnknownFieldSet(msg):
        if f.field_number in d.fields_by_number:
            return f"{d.name}.{d.fields_by_number[f.field_number].name}"
    for fd, value in msg.ListFields():
        if fd.type != FieldDescriptor.TYPE_MESSAGE:
            continue
        if fd.message_type.GetOptions().map_entry:
            children = [v for v in value.values()] if fd.message_type.fields_by_name["value"].message_type else []
        else:
            children = value if fd.is_repeated else [value]
        for child in children:
            found = _misplaced_field(child)
            if found is not None:
                return found
    return None


def read_manifest(loc) -> LoadedManifest:
    """Read and check one manifest file.

    Every offset and length is checked against the file before use; a file that is not a
    manifest raises :class:`NotALanceFileError`, a damaged one :class:`CorruptFileError`,
    both naming ``path``.
    """
    from . import storage

    data = storage.read_small(loc, "manifest", MAX_MANIFEST_BYTES)
    path = storage.name(loc)
    if len(data) < TRAILER.size:
        raise NotALanceFileError(f"{path}: {len(data)} bytes is too short for a manifest")
    offset, _major, _minor, magic = TRAILER.unpack_from(data, len(data) - TRAILER.size)
    if magic != MAGIC:
        raise NotALanceFileError(f"{path}: not a Lance manifest (magic {magic!r}, expected {MAGIC!r})")
    end = len(data) - TRAILER.size
    manifest_bytes = _section(data, offset, end, path, "manifest")
    manifest = _decode(table_pb2.Manifest, manifest_bytes, path, "manifest")
    _check_fragments(manifest, path)
    index = None
    if manifest.HasField("index_section"):
        index = _section(data, manifest.index_section, end, path, "index section")
    loaded = LoadedManifest(manifest, path, len(data), index)
    for field in ("transaction_section", "transaction_section_v21"):
        if manifest.HasField(field):
            raw = _section(data, getattr(manifest, field), end, path, "inline transaction")
            loaded._inline = _decode(table_pb2.Transaction, raw, path, "inline transaction")
            break
    return loaded


# A row address is (fragment id, row offset) in 32 bits each: a fragment holds at most 2**32 rows.
MAX_FRAGMENT_ROWS = 1 << 32


def _check_fragments(manifest: table_pb2.Manifest, path: str) -> None:
    """Row counts every read relies on: a fragment's rows, and its deletions within them."""
    for frag in manifest.fragments:
        rows = frag.physical_rows
        if rows > MAX_FRAGMENT_ROWS:
            raise CorruptFileError(f"{path}: fragment {frag.id} says {rows} rows, more than a fragment can hold "
                                   f"({MAX_FRAGMENT_ROWS}: row addresses are 32-bit offsets)")
        if frag.HasField("deletion_file") and frag.deletion_file.num_deleted_rows > rows:
            raise CorruptFileError(f"{path}: fragment {frag.id} says {frag.deletion_file.num_deleted_rows} deleted "
                                   f"rows, more than its {rows} rows")


def _section(data: bytes, offset: int, end: int, path: str, what: str) -> bytes:
    """The bytes of the length-prefixed section at ``offset``, checked to lie before ``end``."""
    if not 0 <= offset <= end - 4:
        raise CorruptFileError(f"{path}: the {what} offset {offset} is outside the file ({end} bytes before the trailer)")
    (length,) = struct.unpack_from("<I", data, offset)
    if offset + 4 + length > end:
        raise CorruptFileError(
            f"{path}: the {what} at offset {offset} claims {length} bytes, past the end of the file")
    return data[offset + 4 : offset + 4 + length]


def encode_manifest(manifest: table_pb2.Manifest, transaction: table_pb2.Transaction | None,
                    index_section: bytes | None) -> bytes:
    """The bytes of a manifest file: index section, inline transaction, manifest, trailer.

    Sets ``manifest.index_section`` and ``manifest.transaction_section`` to where those land.
    """
    parts = []
    pos = 0

    def add(raw: bytes) -> int:
        nonlocal pos
        start = pos
        parts.append(struct.pack("<I", len(raw)))
        parts.append(raw)
        pos += 4 + len(raw)
        return start

    manifest.ClearField("index_section")
    manifest.ClearField("transaction_section")
    manifest.ClearField("transaction_section_v21")
    if index_section is not None:
        manifest.index_section = add(index_section)
    if transaction is not None:
        manifest.transaction_section = add(transaction.SerializeToString())
    start = add(manifest.SerializeToString())
    parts.append(TRAILER.pack(start, 0, 2, MAGIC))
    return b"".join(parts)


def commit_manifest_file(root, version: int, scheme: str, data: bytes) -> bool:
    """Make ``data`` version ``version``'s manifest, only if no other writer did first.

    The manifest appears whole under its final name or not at all, through an atomic
    create-if-absent (:func:`~lancefile.datasets.storage.create_if_absent`: a hard link
    locally, ``If-None-Match: *`` on S3, as the reference), so two writers can never both
    make the same version and no reader sees a half-written manifest. Returns False when the
    version already exists (the caller rebases or gives up).
    """
    directory = join(root, VERSIONS_DIR)
    make_dirs(directory)
    final = join(directory, manifest_file_name(version, scheme))
    if exists(join(directory, manifest_file_name(version, "v1" if scheme == "v2" else "v2"))):
        return False
    try:
        return create_if_absent(final, data)
    except LanceIOError as exc:
        raise LanceIOError(f"cannot write the manifest of version {version} in {location_name(directory)}: {exc}") from exc


def write_hint(root, version: int) -> None:
    """Rewrite ``_versions/latest_version_hint.json`` (advisory) on a local dataset.

    The reference writes no hint on object stores; neither does lancefile (every reader lists).
    """
    if is_remote(root):
        return
    directory = os.path.join(root, VERSIONS_DIR)
    tmp = os.path.join(directory, f".{uuid.uuid4().hex}.hint-tmp")
    try:
        with open(tmp, "w") as f:
            f.write(json.dumps({"version": version}, separators=(",", ":")))
        os.replace(tmp, os.path.join(directory, HINT_FILE))
    except OSError:  # the hint is only a hint: never fail a commit that already landed
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _describe(bits: int) -> str:
    names = []
    bit = 1
    while bits:
        if bits & 1:
            names.append(f"{bit} ({_FLAG_NAMES.get(bit, 'unknown')})")
        bits >>= 1
        bit <<= 1
    return ", ".join(names)


def check_reader_flags(manifest: table_pb2.Manifest, path: str) -> None:
    """Refuse a version that needs a reader feature lancefile does not have."""
    _refuse(manifest.reader_feature_flags & ~READER_FLAGS, f"{path}: this dataset version needs reader")


def check_writer_flags(manifest: table_pb2.Manifest, path: str) -> None:
    """Refuse to commit on top of a version whose writer features lancefile cannot keep true."""
    _refuse(manifest.writer_feature_flags & ~WRITER_FLAGS, f"{path}: committing to this dataset needs writer")


def _refuse(unknown: int, needs: str) -> None:
    if unknown:
        raise UnsupportedVersionError(f"{needs} feature flag(s) {_describe(unknown)}, which lancefile does not support")
