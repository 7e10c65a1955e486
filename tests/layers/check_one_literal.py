#!/usr/bin/env python3
"""Every message is one literal, so that what a terminal shows can be found with grep: no string
literal in the program's sources is continued by another on the next line ("...; write "
"csv:TRAIN"), which C++ would join. A message made of values and text keeps each text whole.

usage: check_one_literal.py ROOT [--plant]
Reads the sources of the program and the package (tests' own literals are not messages). Prints
one line per split literal and exits 1; exits 0 when there is none. --plant adds one, to show that
it is caught.
"""
import pathlib
import re
import sys

SOURCES = ("*.h", "*.cpp", "*.cu")
FOLDERS = ("apps", "backends", "benchmarks", "data", "kernels", "labs", "nn", "python/src",
           "runtime", "study", "target")
LITERAL = r'"(?:[^"\\\n]|\\.)*"'
SPLIT = re.compile(LITERAL + r"[ \t]*\n[ \t]*" + LITERAL)
PLANT = 'const char* planted = "a message split "\n                      "in two";\n'


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    files = sorted(f for folder in FOLDERS for pattern in SOURCES for f in (root / folder).rglob(pattern))
    found = []
    for source in files:
        text = source.read_text(errors="replace")
        if "--plant" in sys.argv and source == files[0]:
            text += PLANT
        for m in SPLIT.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{source.relative_to(root)}:{line}: a literal split in two: "
                         f"{' '.join(m.group(0).split())[:80]}")
    for f in found:
        print(f)
    print(f"check_one_literal: {len(files)} files, {len(found)} literals split")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
