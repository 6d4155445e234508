#!/usr/bin/env python3
"""Check that the library's module graph flows one way (ARCHITECTURE: types ->
buffers -> dims -> formats -> conversions / kernels -> ipc / column / archive / io ->
dump, CLI and Python binding).

Each layer lists the crate modules its code may name (`crate::x`, `$crate::x`,
`super::` inside its own tree is always allowed). Root re-exports (`crate::Convert`,
`crate::AnyTensor` ...) count as the module that defines them. Comments (doc links)
and the `#[cfg(test)] mod tests` at the end of a file are not checked: unit tests
may use the whole crate.

A method call needs no path: a layer may add inherent methods to a lower layer's
types (the conversion layer gives `AnyTensor` its `convert`, `to_gcs`, `to_dm`),
and a call to one of them from below would be a cycle no `crate::` path shows. So
the inherent methods each layer defines on types it does not own are collected
too, and a call `.name(` or `::name(` of one of them from a lower layer is
reported as well.

Prints every reference that points up and exits 1 if there is one.
"""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

# layer of each top-level module, lowest first
LAYERS = [
    {"error", "atomic", "guard", "limit", "cache"},
    {"types"},
    {"buffer", "alloc"},
    {"dims"},
    {"tensor"},
    {"convert"},
    {"kernels"},
    {"ipc", "column", "archive", "io", "compat"},
    {"dump"},
]
LAYER = {m: i for i, layer in enumerate(LAYERS) for m in layer}
# names re-exported at the crate root, by defining module
ROOT = {
    "IndexBuffer": "buffer", "IndexSlice": "buffer", "ValueBuffer": "buffer", "ValueSlice": "buffer",
    "Error": "error", "Result": "error",
    "Index": "types", "IndexType": "types", "Value": "types", "ValueType": "types",
    "with_value_type": "types", "with_index_type": "types",
    "Convert": "convert",
    "read_archive": "archive", "write_archive": "archive",
}
TENSOR = ["AnyCoo", "AnyCsf", "AnyCsx", "AnyDense", "AnyDm", "AnyGcs", "AnyTensor", "CompressedAxis",
          "CooTensor", "CoordLayout", "CsfTensor", "CsxMatrix", "DenseTensor", "DmTensor", "Format",
          "GcsTensor", "Validation"]
ROOT.update({n: "tensor" for n in TENSOR})
REF = re.compile(r"\$?crate::(\w+)")


def strip(text):
    cut = re.search(r"^#\[cfg\(test\)\]\s*\nmod tests", text, re.M)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"//.*", "", text)
    return text


IMPL = re.compile(r"^impl(?:<[^>]*>)?\s+(\w+)(?:<[^{]*>)?\s*\{", re.M)
FN = re.compile(r"^    pub(?:\(crate\))?\s+fn\s+(\w+)", re.M)


def sources():
    for dirpath, dirnames, filenames in os.walk(SRC):
        dirnames[:] = sorted(d for d in dirnames if d != "bin")
        for f in sorted(filenames):
            if f.endswith(".rs"):
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, SRC)
                yield path, rel, rel.split(os.sep)[0].removesuffix(".rs")


def foreign_methods():
    """{method name: (defining module, type)} for inherent methods a module defines
    on a type whose definition lives in another (lower) module."""
    defined = {}
    for path, rel, top in sources():
        text = strip(open(path, encoding="utf-8").read())
        for m in re.finditer(r"^pub (?:struct|enum) (\w+)", text, re.M):
            defined[m.group(1)] = top
    out = {}
    for path, rel, top in sources():
        text = strip(open(path, encoding="utf-8").read())
        impls = list(IMPL.finditer(text))
        for i, m in enumerate(impls):
            owner = defined.get(m.group(1))
            if owner is None or owner == top:
                continue
            body = text[m.end(): impls[i + 1].start() if i + 1 < len(impls) else len(text)]
            body = body[: re.search(r"^\}", body, re.M).start()] if re.search(r"^\}", body, re.M) else body
            for f in FN.finditer(body):
                out[f.group(1)] = (top, m.group(1))
    return out


def main():
    bad = []
    methods = foreign_methods()
    calls = re.compile(r"(?:\.|::)(" + "|".join(map(re.escape, sorted(methods))) + r")\s*(?:::<[^>]*>)?\(") if methods else None
    for dirpath, dirnames, filenames in os.walk(SRC):
        dirnames[:] = sorted(d for d in dirnames if d != "bin")
        for f in sorted(filenames):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, SRC)
            top = rel.split(os.sep)[0].removesuffix(".rs")
            if top == "lib":
                continue
            here = LAYER.get(top)
            if here is None:
                bad.append(f"{rel}: module `{top}` has no layer in scripts/check-module-graph.py")
                continue
            text = strip(open(path, encoding="utf-8").read())
            for n, line in enumerate(text.split("\n"), 1):
                for m in REF.finditer(line):
                    name = m.group(1)
                    target = ROOT.get(name, name)
                    if target not in LAYER:
                        continue
                    if target != top and LAYER[target] > here:
                        bad.append(f"src/{rel}:{n}: `{top}` (layer {here}) uses `crate::{name}` "
                                   f"(`{target}`, layer {LAYER[target]})")
                for m in calls.finditer(line) if calls else []:
                    owner, ty = methods[m.group(1)]
                    if owner != top and LAYER.get(owner, -1) > here:
                        bad.append(f"src/{rel}:{n}: `{top}` (layer {here}) calls `{ty}::{m.group(1)}`, "
                                   f"a method `{owner}` (layer {LAYER[owner]}) defines")
    if bad:
        print(f"{len(bad)} references point up the module graph:")
        print("\n".join(bad))
        sys.exit(1)
    print("the module graph flows one way")


if __name__ == "__main__":
    main()
