"""The one version table."""

import pytest

from lancefile import UnsupportedVersionError
from lancefile.format.version import FileVersion, resolve_version, version_from_footer


@pytest.mark.parametrize("name", ["2.0", "0.3", "v2.0", " 2.0 "])
def test_names_of_2_0(name):
    info = resolve_version(name)
    assert info.version is FileVersion.V2_0 and info.footer == (0, 3)


@pytest.mark.parametrize("footer", [(0, 3), (2, 0)])
def test_2_0_footers_read(footer):
    assert version_from_footer(*footer).version is FileVersion.V2_0


@pytest.mark.parametrize("name, text", [
    ("stable", "2.2"), ("next", "2.3"), ("2.1", "2.1"), ("2.2", "2.2"),
    ("legacy", "legacy"), ("0.1", "legacy"), ("3.7", "unknown"), ("banana", "unknown"),
])
def test_unwritable_versions_are_refused_clearly(name, text):
    with pytest.raises(UnsupportedVersionError, match=text):
        resolve_version(name)


@pytest.mark.parametrize("footer, text", [((0, 1), "legacy"), ((0, 2), "legacy"), ((2, 4), "unknown"), ((2, 1), "2.1")])
def test_unreadable_footers(footer, text):
    with pytest.raises(UnsupportedVersionError, match=text):
        version_from_footer(*footer)
