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
    ("next", "2.3"), ("2.3", "2.3"), ("legacy", "legacy"), ("0.1", "legacy"), ("3.7", "unknown"), ("banana", "unknown"),
])
def test_unwritable_versions_are_refused_clearly(name, text):
    with pytest.raises(UnsupportedVersionError, match=text):
        resolve_version(name)


@pytest.mark.parametrize("footer, text", [((0, 1), "legacy"), ((0, 2), "legacy"), ((2, 4), "unknown"), ((2, 3), "2.3")])
def test_unreadable_footers(footer, text):
    with pytest.raises(UnsupportedVersionError, match=text):
        version_from_footer(*footer)


@pytest.mark.parametrize("footer, name", [((2, 1), "2.1"), ((2, 2), "2.2")])
def test_2_1_and_2_2_footers_read(footer, name):
    info = version_from_footer(*footer)
    assert info.name == name and info.grammar is not None


def test_the_grammar_table_is_where_2_1_and_2_2_differ():
    g21, g22 = version_from_footer(2, 1).grammar, version_from_footer(2, 2).grammar
    assert (g21.chunk_word_bytes, g22.chunk_word_bytes) == (2, 4)
    assert not g21.constant_values and g22.constant_values
    assert version_from_footer(0, 3).grammar is None
