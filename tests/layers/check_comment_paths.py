#!/usr/bin/env python3
"""Every file that a source comment names after "Must equal:" or "Checked by:" exists: a kernel's
comment says which CPU code it must match and which test checks that, and a renamed file must not
leave it pointing at nothing.

usage: check_comment_paths.py ROOT [--plant]
A name with a slash is from ROOT, one without from the commenting file's folder. Prints one line per
missing file and exits 1; exits 0 when there is none. --plant adds a comment naming a file that does
not exist, to show that it is caught.
"""
import pathlib
import re
import sys

SOURCES = ("*.h", "*.cpp", "*.cu")
FOLDERS = ("apps", "backends", "kernels", "nn", "runtime", "study", "target", "tests", "python")
CLAIM = re.compile(r"(Must equal|Checked by):(.*?)(?=Must equal:|Checked by:|\.\s|\.$|$)")
FILE = re.compile(r"[A-Za-z0-9_./-]+\.(?:cpp|cu|h|py)\b")


def comment_blocks(text):
    """Each run of `//` lines, joined into one line, with the number of its first line."""
    block, first = [], 0
    for number, line in enumerate(text.splitlines() + [""], 1):
        stripped = line.strip()
        if stripped.startswith("//"):
            if not block:
                first = number
            block.append(stripped.lstrip("/").strip())
        elif block:
            yield first, " ".join(block)
            block = []


def names_in(source, text):
    """(line, claim, file name) for each file a claim in `text` names."""
    for number, block in comment_blocks(text):
        for claim in CLAIM.finditer(block):
            for name in FILE.findall(claim.group(2)):
                yield number, claim.group(1), name


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    files = sorted(f for folder in FOLDERS for pattern in SOURCES for f in (root / folder).rglob(pattern))
    missing, claims = [], 0
    for source in files:
        text = source.read_text(errors="replace")
        if "--plant" in sys.argv and source == files[0]:
            text += "\n// Planted. Must equal: no_such_file.cpp. Checked by: tests/no_such_test.cpp\n"
        for number, claim, name in names_in(source, text):
            claims += 1
            if not (root / name if "/" in name else source.parent / name).exists():
                missing.append(f"{source.relative_to(root)}:{number}: {claim}: {name} does not exist")
    for m in missing:
        print(m)
    print(f"check_comment_paths: {len(files)} files, {claims} files named, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
