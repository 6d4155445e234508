"""Corrupt and hostile files raise the typed exception (ArrowSparseError, also
ValueError or OSError), never crash the interpreter: the io bad-input corpus
(tests/data/bad), the fuzz regression corpus (tests/data/bad/fuzz), and every truncation and single-byte change of a small
golden stream."""


import pytest

import arrow_sparse
from conftest import GOLDEN, REPO

BAD = sorted(p for p in (REPO / "tests" / "data" / "bad").iterdir() if p.suffix in (".mtx", ".tns", ".npz"))
FUZZ = sorted((REPO / "tests" / "data" / "bad" / "fuzz").glob("*.*"))


def exercise(path, validate=True):
    """Read, then use, every tensor: either works or raises ArrowSparseError."""
    for t in arrow_sparse.read(path, validate=validate):
        t.buffers()
        repr(t)
        if validate:
            t.to_scipy()


def test_corpora_are_here():
    assert len(BAD) >= 50 and len(FUZZ) >= 30


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.name)
def test_bad_io_file_raises_typed_error(path):
    with pytest.raises(arrow_sparse.ArrowSparseError) as e:
        arrow_sparse.read(path)
    assert isinstance(e.value, (ValueError, OSError))
    assert str(e.value)


# Files on which the Rust library (or arrow-ipc / parquet under it) panics: none since
# the reader hardening of issue #18. The binding would turn a panic into
# arrow_sparse.InternalError; the test fails when a file starts panicking (or one
# listed here stops).
KNOWN_PANICS: set[str] = set()


@pytest.mark.parametrize("path", FUZZ, ids=lambda p: p.name)
@pytest.mark.parametrize("validate", [True, False])
def test_fuzz_sample_raises_typed_errors(path, validate):
    try:
        exercise(path, validate)
    except arrow_sparse.InternalError:
        assert path.name in KNOWN_PANICS, f"{path.name}: the library panics"
        return
    except arrow_sparse.ArrowSparseError as e:
        assert isinstance(e, (ValueError, OSError)) and str(e)
    assert path.name not in KNOWN_PANICS, f"{path.name} no longer panics: remove it from KNOWN_PANICS"


def test_every_truncation_and_byte_change_of_a_stream(tmp_path):
    data = (GOLDEN / "csf_f32_i16_order201.arrow").read_bytes()
    path = tmp_path / "x.arrow"
    failures = 0
    variants = [data[:k] for k in range(len(data))]
    for k in range(len(data)):
        for flip in (0xFF, 0x01):
            variants.append(data[:k] + bytes([data[k] ^ flip]) + data[k + 1:])
    for v in variants:
        path.write_bytes(v)
        for validate in (True, False):
            try:
                exercise(path, validate)
            except arrow_sparse.ArrowSparseError:
                failures += 1
            try:
                list(arrow_sparse.open(path, validate=validate))
            except arrow_sparse.ArrowSparseError:
                pass
    assert failures > len(data)  # most variants are refused


def test_missing_file_is_an_oserror_naming_it(tmp_path):
    path = tmp_path / "nope.arrow"
    with pytest.raises(arrow_sparse.ArrowSparseIOError) as e:
        arrow_sparse.read(path)
    assert isinstance(e.value, OSError) and e.value.errno == 2 and str(path) in str(e.value)
    with pytest.raises(OSError):
        arrow_sparse.open(path)
