#!/usr/bin/env python3
"""No statement is broken around a trailing comment: clang-format keeps a line within 100 columns,
so a comment at the end of a statement that would otherwise fit on one line splits the statement
instead (`restore_best(int(` / `z));  // why`). Such a comment goes on its own line above.

usage: check_trailing_comments.py ROOT [--plant]
A statement is the lines from one that follows a `;`, `{`, `}`, `:`, a comment or a blank line, to
one that ends in `;`, `{` or (an `if`'s condition) `)`; it is broken around its comment when its
last line carries one and its code joined would fit in 100 columns. Prints one line per such
statement and exits 1; exits 0 when there is none. --plant adds one, to show that it is caught.
"""
import pathlib
import re
import sys

SOURCES = ("*.h", "*.cpp", "*.cu")
FOLDERS = ("apps", "backends", "benchmarks", "data", "examples", "kernels", "labs", "nn", "python",
           "runtime", "study", "target", "tests")
COLUMNS = 100
TRAILING = re.compile(r"^(\s*)(.*?\S)\s+//.*$")
PLANT = "void planted() {\n  restore_best(int(\n      z));  // a comment that broke the call\n}\n"


def statement_start(lines, last):
    """The first line of the statement that ends on line `last` (0-based)."""
    first = last
    while first > 0:
        above = lines[first - 1].rstrip()
        if not above or above.endswith((";", "{", "}", ":")) or "//" in above or \
                above.lstrip().startswith("#"):
            break
        first -= 1
    return first


def broken(lines):
    """(line number, statement) for each statement broken around its trailing comment."""
    for last, line in enumerate(lines):
        m = TRAILING.match(line)
        if not m or m.group(2).startswith("//") or m.group(2).count('"') % 2:
            continue
        code = m.group(2)
        first = statement_start(lines, last)
        if first == last:
            continue
        start = lines[first].lstrip()
        if not (code.endswith((";", "{")) or (code.endswith(")") and start.startswith("if ("))):
            continue
        if start.startswith(("}", ")")) and not start.startswith("} catch"):
            continue  # the end of a call's argument, not a statement
        joined = " ".join(x.strip() for x in lines[first:last]) + " " + code
        if len(lines[first]) - len(start) + len(joined) <= COLUMNS:
            yield first + 1, joined


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    files = sorted(f for folder in FOLDERS for pattern in SOURCES for f in (root / folder).rglob(pattern))
    found = []
    for source in files:
        text = source.read_text(errors="replace")
        if "--plant" in sys.argv and source == files[0]:
            text += PLANT
        for number, statement in broken(text.splitlines()):
            found.append(f"{source.relative_to(root)}:{number}: broken around its trailing comment: "
                         f"{statement[:80]}")
    for f in found:
        print(f)
    print(f"check_trailing_comments: {len(files)} files, {len(found)} statements broken")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
