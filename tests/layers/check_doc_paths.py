#!/usr/bin/env python3
"""Every file and folder that docs/ARCHITECTURE.md names exists: the design document speaks of the
code as it is.

usage: check_doc_paths.py ROOT
Prints one line per path named in `backquotes` that is not in the tree and exits 1; exits 0 when
there is none. A path is a word with a slash or a source file's suffix (`nn/model.cpp`, `study/`).
"""
import pathlib
import re
import sys

NAMED = re.compile(r"`([A-Za-z0-9_./-]+)`")
SUFFIXES = (".h", ".cpp", ".cu", ".py", ".sh", ".txt", ".md", ".cmake", ".json", ".in")


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    doc = root / "docs" / "ARCHITECTURE.md"
    missing, named = [], set()
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        for word in NAMED.findall(line):
            if ("/" in word or word.endswith(SUFFIXES)) and not word.startswith(("-", "/", ".")) and "://" not in word:
                named.add(word)
                if not (root / word).exists():
                    missing.append(f"docs/ARCHITECTURE.md:{number}: `{word}` does not exist")
    for m in missing:
        print(m)
    print(f"check_doc_paths: {len(named)} paths named, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
