#!/usr/bin/env python3
"""No function in apps/ or study/ is longer than a reader can hold: at most MAX_LINES lines from its
signature's line to its closing brace (docs/ARCHITECTURE.md, "Invariants"). A function that must be
longer says why in a comment containing "longer than" on the line before it.

Usage: check_function_length.py ROOT [--plant]. --plant checks that a planted long function is caught.
Exit status 1 when one is found, with FILE:LINE: NAME is N lines."""
import pathlib
import re
import sys

MAX_LINES = 80
FOLDERS = ("apps", "study")
SCOPE = re.compile(r"^\s*(template\s*<.*>\s*)?(namespace\b|class\b|struct\b|union\b|enum\b|extern\s+\"C\")", re.S)


def blank_out(text):
    """The text with comments, string and character literals replaced by spaces (newlines kept)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|R"(\w*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def long_functions(path, text):
    """(line, name, lines) of each function in `text` over MAX_LINES lines."""
    code = blank_out(text)
    found, stack, header_start = [], [], 0  # stack: (kind, start line, name)
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c in ";{}":
            if c == "{":
                header = code[header_start:i]
                in_function = any(kind == "function" for kind, _, _ in stack)
                if in_function or not header.strip() or header.rstrip().endswith(("=", ",", "(")) or SCOPE.match(header):
                    stack.append(("block", line, ""))
                elif ")" in header:
                    name = re.findall(r"([\w:~<>]+)\s*\(", header)
                    start = line - header.strip("\n ").count("\n") - header[len(header.rstrip()):].count("\n")
                    stack.append(("function", start, name[0] if name else "?"))
                else:
                    stack.append(("block", line, ""))
            elif c == "}" and stack:
                kind, start, name = stack.pop()
                if kind == "function" and not any(k == "function" for k, _, _ in stack):
                    length = line - start + 1
                    reason = text.split("\n")[max(0, start - 2)]
                    if length > MAX_LINES and "longer than" not in reason:
                        found.append((start, name, length))
            header_start = i + 1
    return found


def main():
    root = pathlib.Path(sys.argv[1])
    files = [p for folder in FOLDERS for p in sorted((root / folder).rglob("*")) if p.suffix in (".cpp", ".h")]
    if "--plant" in sys.argv:
        planted = "namespace mf {\nint planted(int x) {\n" + "  x += 1;\n" * (MAX_LINES + 1) + "  return x;\n}\n}\n"
        caught = long_functions("planted.cpp", planted)
        print(f"check_function_length: a planted function of {MAX_LINES + 4} lines is {'caught' if caught else 'MISSED'}")
        return 0 if caught else 1
    bad = 0
    for path in files:
        for start, name, length in long_functions(path, path.read_text()):
            print(f"{path.relative_to(root)}:{start}: {name} is {length} lines (at most {MAX_LINES}, or a comment "
                  f"on the line before saying why it is longer than that)")
            bad += 1
    print(f"check_function_length: {len(files)} files, {bad} functions over {MAX_LINES} lines")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
