#!/usr/bin/env python3
"""The layers' order, enforced: a file of a layer includes only files of its own layer or of a
layer below it.

The order is the one docs/ARCHITECTURE.md declares, in its block between the markers
<!-- layers --> and <!-- /layers -->: one folder a line, the top layer first.

usage: check_includes.py ROOT [--plant FILE:INCLUDE]
  --plant adds one include to FILE's as if it were written there (the test that the check can fail).
Prints one line per include against the order and exits 1; exits 0 when there is none.
"""
import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = {".h", ".cpp", ".cu"}


def layers(root):
    doc = (root / "docs" / "ARCHITECTURE.md").read_text()
    block = re.search(r"<!-- layers -->(.*?)<!-- /layers -->", doc, re.S)
    if not block:
        sys.exit("check_includes: docs/ARCHITECTURE.md has no <!-- layers --> block")
    folders = [line.split()[0].strip("/") for line in block.group(1).splitlines()
               if line.strip() and not line.strip().startswith("```")]
    return list(reversed(folders))  # bottom first


def layer_of(path, order):
    """The index of the layer that holds `path` (relative, with /), or None outside every layer."""
    best = None
    for i, folder in enumerate(order):
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(order[best]):
                best = i
    return best


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=pathlib.Path)
    parser.add_argument("--plant", help="FILE:INCLUDE")
    args = parser.parse_args()
    root = args.root.resolve()
    order = layers(root)
    planted = tuple(args.plant.split(":", 1)) if args.plant else None

    problems = []
    checked = 0
    for folder in order:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SOURCES or not path.is_file():
                continue
            name = path.relative_to(root).as_posix()
            own = layer_of(name, order)
            includes = INCLUDE.findall(path.read_text())
            if planted and planted[0] == name:
                includes.append(planted[1])
            checked += 1
            for included in includes:
                if "/" not in included:
                    continue  # a system-style or generated name, not one of the layers' files
                target = layer_of(included, order)
                if target is None:
                    continue
                if not (root / included).is_file():
                    problems.append(f"{name}: includes {included}, which does not exist")
                elif target > own:
                    problems.append(f"{name}: includes {included}: {order[own]}/ is below {order[target]}/ "
                                    f"(docs/ARCHITECTURE.md, Layers)")
    for p in problems:
        print(p)
    print(f"check_includes: {checked} files of {len(order)} layers, {len(problems)} includes against the order")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
