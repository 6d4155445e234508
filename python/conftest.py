"""pytest set-up shared by the doctests (``python/arrow_sparse``) and the suite
(``python/tests``)."""

import tempfile

import pytest


@pytest.fixture(autouse=True)
def _temporary_files_in_tmp_path(tmp_path, monkeypatch):
    """The doctests make their files the way a user would, under
    ``tempfile.mkdtemp()``; during a test that folder is the test's own
    ``tmp_path``, which pytest cleans up, so no run leaves files in the system's
    temporary folder."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
