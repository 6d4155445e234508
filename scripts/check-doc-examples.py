#!/usr/bin/env python3
"""Check that every public item of the library has its own runnable doc example.

Issue #7 asks for "every public item documented with a runnable example". rustdoc's
own check for this (`rustdoc::missing_doc_code_examples`) is nightly-only, so this
script does it on the stable toolchain from the source:

* an item is a `pub` fn / struct / enum / union / trait / type / const / static
  outside `#[cfg(test)]` code, or a method declared in the body of a `pub trait`;
* `#![warn(unreachable_pub)]` in lib.rs (an error under `clippy -D warnings`) makes
  sure that every `pub` item is reachable from the crate root, so this set is the
  crate's public API;
* its `///` block must contain a code block (```) that is not `ignore`, `no_run`
  or `text`; doc tests then compile and run it.

The private `Sealed` supertrait, `#[cfg(doctest)]` items and `#[deprecated]` aliases
of old names (src/compat.rs) are not API. Struct
fields, enum variants and modules are documented (`missing_docs`) but need
no example of their own. Prints the items without one and exits 1 if there are any.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
ITEM = re.compile(
    r"^\s*pub\s+(?:const\s+|unsafe\s+|async\s+|extern\s+\"C\"\s+)*"
    r"(fn|struct|enum|union|trait|type|const|static)\s+(\w+)"
)
TRAIT = re.compile(r"^\s*pub\s+(?:unsafe\s+)?trait\s+\w+")
TRAIT_FN = re.compile(r"^\s*(?:unsafe\s+)?fn\s+(\w+)")
FENCE = re.compile(r"^\s*///\s?```(.*)$")


def runnable_example(doc):
    """True if the doc lines hold an opening fence of a Rust block that runs."""
    inside = False
    for line in doc:
        m = FENCE.match(line)
        if not m:
            continue
        if inside:
            inside = False
            continue
        inside = True
        attrs = {a.strip() for a in m.group(1).split(",") if a.strip()}
        if not attrs & {"ignore", "no_run", "text", "compile_fail", "should_panic"} and (
            not attrs or attrs <= {"rust", "edition2024"}
        ):
            return True
    return False


def depth_change(line):
    code = re.sub(r"//.*", "", line)
    code = re.sub(r'"(?:\\.|[^"\\])*"', '""', code)
    code = re.sub(r"'(?:\\.|[^'\\])'", "''", code)
    return code.count("{") - code.count("}")


def scan(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    missing = []
    depth = 0
    skip_until = None  # depth at which a #[cfg(test)] item ends
    pending_test = False
    traits = []  # depths of open `pub trait` bodies
    for i, line in enumerate(lines):
        stripped = line.strip()
        if skip_until is None and not stripped.startswith("//"):
            if re.match(r"#\[cfg\(test\)\]", stripped):
                pending_test = True
            elif pending_test and stripped and not stripped.startswith("#"):
                pending_test = False
                skip_until = depth
            if skip_until is None:
                name = None
                m = ITEM.match(line)
                if m:
                    name = m.group(2)
                elif traits and depth == traits[-1] + 1:
                    t = TRAIT_FN.match(line)
                    if t:
                        name = t.group(1)
                if name:
                    j = i - 1
                    doc = []
                    while j >= 0:
                        s = lines[j].strip()
                        if s.startswith(("///", "#[", "#![")):
                            doc.append(lines[j])
                            j -= 1
                        elif s == ")]":  # the end of an attribute written over several lines
                            while j >= 0 and not lines[j].strip().startswith("#["):
                                doc.append(lines[j])
                                j -= 1
                        else:
                            break
                    doctest_only = any("cfg(doctest)" in d for d in doc)
                    sealed = name == "Sealed"  # the private supertrait of a sealed trait
                    # a deprecated alias of an old name (src/compat.rs) is not API
                    deprecated = any(d.strip().startswith("#[deprecated") for d in doc)
                    if not (doctest_only or sealed or deprecated or runnable_example(reversed(doc))):
                        missing.append((i + 1, name))
                if TRAIT.match(line):
                    traits.append(depth)
        depth += depth_change(line)
        if skip_until is not None and depth <= skip_until and "}" in line or (
            skip_until is not None and depth == skip_until and line.rstrip().endswith(";")
        ):
            skip_until = None
        while traits and depth <= traits[-1] and "}" in line:
            traits.pop()
    return missing


def main():
    total = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d != "bin")
        for f in sorted(filenames):
            if f.endswith(".rs"):
                path = os.path.join(dirpath, f)
                for line, name in scan(path):
                    total.append(f"{os.path.relpath(path, os.path.join(ROOT, '..'))}:{line}: `{name}`")
    if total:
        print(f"{len(total)} public items have no runnable doc example:")
        print("\n".join(total))
        sys.exit(1)
    print("every public item has a runnable doc example")


if __name__ == "__main__":
    main()
