#!/usr/bin/env python3
"""Check that the library's module graph flows one way (ARCHITECTURE: types ->
buffers -> dims -> formats -> conversions / kernels -> ipc / column / archive / io ->
dump, CLI and Python binding).

Each layer lists the crate modules its code may name (`crate::x`, `$crate::x`,
`super::` inside its own tree is always allowed). Root re-exports (`crate::Convert`,
`crate::AnyTensor` ...) count as the module that defines them. Comments (doc links)
and the `#[cfg(test)] mod tests` at the end of a file are not checked: unit tests
may use the whole crate. Prints every reference that points up and exits 1 if
there is one.
"""
import os
import re
import sys

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

# layer of each top-level module, lowest first
LAYERS = [
    {"error", "atomic"},
    {"types"},
    {"buffer"},
    {"dims"},
    {"tensor"},
    {"kernels"},
    {"convert"},
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


def main():
    bad = []
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
    if bad:
        print(f"{len(bad)} references point up the module graph:")
        print("\n".join(bad))
        sys.exit(1)
    print("the module graph flows one way")


if __name__ == "__main__":
    main()
