"""Old import path of :mod:`arrow_sparse.ext` (the pyarrow extension types of
sparse tensor columns), kept as an alias: ``import arrow_sparse_ext`` is
``import arrow_sparse.ext``. Without the built package (no ``arrow_sparse._native``)
the pure-Python module is loaded from ``arrow_sparse/ext.py`` beside this file.
"""

import importlib.util as _util
import os as _os
import sys as _sys

try:
    import arrow_sparse.ext as _ext
except ImportError:
    _spec = _util.spec_from_file_location(
        "arrow_sparse_ext", _os.path.join(_os.path.dirname(__file__), "arrow_sparse", "ext.py")
    )
    _ext = _util.module_from_spec(_spec)
    _spec.loader.exec_module(_ext)

_sys.modules[__name__] = _ext
