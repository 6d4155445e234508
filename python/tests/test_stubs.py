"""The type stubs (arrow_sparse/__init__.pyi) name exactly the public API, with the
same parameters as the implementation."""

import ast
import inspect
import pathlib

import arrow_sparse

STUB = pathlib.Path(arrow_sparse.__file__).with_suffix(".pyi")


def stub_tree():
    return ast.parse(STUB.read_text())


def params(fn):
    a = fn.args
    return [x.arg for x in a.posonlyargs + a.args + a.kwonlyargs]


def test_stub_names_match_all():
    tree = stub_tree()
    names = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            names |= {a.asname or a.name for a in node.names if node.module == "errors"}
    assert names == set(arrow_sparse.__all__)


def test_stub_signatures_match_the_implementation():
    tree = stub_tree()
    checked = 0
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            impl = getattr(arrow_sparse, node.name)
            assert params(node) == list(inspect.signature(impl).parameters), node.name
            checked += 1
        elif isinstance(node, ast.ClassDef):
            cls = getattr(arrow_sparse, node.name)
            public = {m for m in vars(cls) if not m.startswith("_")} | {"__init__", "__len__", "__getitem__", "__iter__", "__eq__"} & set(vars(cls))
            stubbed = {f.name for f in node.body if isinstance(f, ast.FunctionDef)} | {
                t.target.id for t in node.body if isinstance(t, ast.AnnAssign)
            }
            assert public <= stubbed, f"{node.name}: not in the stub: {public - stubbed}"
            for f in node.body:
                if isinstance(f, ast.FunctionDef) and not isinstance(vars(cls).get(f.name), property) and f.name in vars(cls):
                    impl = getattr(cls, f.name)
                    want = list(inspect.signature(impl).parameters)
                    got = params(f)
                    if isinstance(vars(cls)[f.name], staticmethod):
                        assert got == want, f"{node.name}.{f.name}"
                    else:
                        assert got[1:] == want[1:] if want and want[0] == "self" else got == want, f"{node.name}.{f.name}"
                    checked += 1
    assert checked > 20
