"""Settings for every test pytest collects, the package's doctests included (``tests/conftest.py``
only reaches ``tests/``)."""

from __future__ import annotations

import tempfile

import pytest


@pytest.fixture(autouse=True)
def _doctest_temporary_directory(request):
    """The docstring examples make their files with ``tempfile.mkdtemp()``, as a user would; under
    pytest those directories go in the test's own ``tmp_path``, so a test run leaves nothing in
    the system temporary directory."""
    if not isinstance(request.node, pytest.DoctestItem):
        yield
        return
    monkeypatch = request.getfixturevalue("monkeypatch")
    monkeypatch.setattr(tempfile, "tempdir", str(request.getfixturevalue("tmp_path")))
    yield
