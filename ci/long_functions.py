#!/usr/bin/env python3
"""Lists the project's functions longer than N lines (default 50), longest first.

Reads the C++ files that git tracks (*.cpp, *.hpp), except tests/, bench/ and fuzz/, and prints
one line per long function: `lines file:line signature`. A function's lines run from the line of
its name to its closing brace, so a signature over several lines counts whole; member functions
defined inside a class (in a header too) count, lambdas and local classes count as part of the
function around them.

--max-count K: exit 1 when more than K functions are over the limit, so CI can hold the number
from growing. Run from anywhere inside the repository.

It reads braces, not C++: comments, string, character and raw string literals are skipped, and
preprocessor lines are ignored. Brace initialisers in a constructor's member list and at class
or namespace scope are told apart from bodies; a macro that opens a brace can still mislead it.
"""

import argparse
import re
import subprocess
import sys

SKIPPED = ("tests/", "bench/", "fuzz/")
CONTAINERS = ("namespace", "class", "struct", "union", "enum", "extern")
CONTROL = {"if", "for", "while", "switch", "catch", "do", "else", "try", "return"}


def strip(text):
    """Text with comments and literals blanked and preprocessor lines emptied; newlines kept."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start:
            j = i
            while j < n and text[j] in " \t":
                j += 1
            if j < n and text[j] == "#":
                # A directive, continued by a trailing backslash.
                while j < n:
                    if text[j] == "\n" and text[j - 1] != "\\":
                        break
                    if text[j] == "\n":
                        out.append("\n")
                    j += 1
                i = j
                continue
            line_start = False
        if c == "\n":
            out.append(c)
            line_start = True
            i += 1
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end) or " ")
            i = end
        elif c == "R" and i + 1 < n and text[i + 1] == '"' and not (
            i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")
            and text[i - 1] not in "u8LU"
        ):
            open_paren = text.find("(", i + 2)
            delim = text[i + 2 : open_paren]
            end = text.find(")" + delim + '"', open_paren)
            end = n if end < 0 else end + len(delim) + 2
            out.append('""' + "\n" * text.count("\n", i, end))
            i = end
        elif c == '"' or (c == "'" and not number_before(text, i)):
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def number_before(text, i):
    """Whether the quote at i is a digit separator (1'000'000), not a character literal."""
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] == "_"):
        j -= 1
    return j < i and text[j].isdigit()


def top_level(head, chars):
    """Whether any of chars occurs in head outside (), [] and <>."""
    depth = 0
    for c in head:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0 and c in chars:
            return True
    return False


def kind_of(head):
    """'container', 'function' or 'other' for the text before a brace at class/namespace scope."""
    words = re.sub(r"\[\[.*?\]\]", " ", head)
    words = re.sub(r"^\s*template\s*<.*?>\s*(?=[A-Za-z])", "", words, flags=re.S).split()
    if not words:
        return "other"
    if words[0] in CONTAINERS or words[0] in ("inline", "export") and words[1:2] == ["namespace"]:
        return "container"
    if "(" not in head or words[0] in CONTROL:
        return "other"
    no_operators = re.sub(r"operator\s*(\(\)|[^\s(]+)", "operator", head)
    if top_level(no_operators, "="):
        return "other"
    return "function"


def in_init_list(head):
    """Whether head is a constructor's signature followed by its member initialiser list."""
    depth = 0
    for i, c in enumerate(head):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == ":" and depth == 0 and head[i - 1 : i + 2].count(":") == 1:
            return re.search(r"(\)|noexcept)\s*$", head[:i]) is not None
    return False


def functions(text):
    """(first line, last line, signature) of each function body outside any other function."""
    found = []
    scopes = []  # kinds of the open braces
    head, head_line = [], None
    line = 1
    for c in text:
        if c == "\n":
            line += 1
        inside_function = any(k == "function" for k in scopes)
        if c == "{":
            h = "".join(head)
            if inside_function:
                scopes.append("nested")
            elif scopes[-1:] == ["init"] or (
                in_init_list(h) and re.search(r"[A-Za-z0-9_>]\s*$", h)
            ):
                scopes.append("init")  # a member's brace initialiser, the body still ahead
                head.append(c)
                continue
            else:
                kind = kind_of(h) if h.strip() else "other"
                scopes.append(kind)
                if kind == "function":
                    found.append([name_line(h, head_line), None, " ".join(h.split())])
            head, head_line = [], None
        elif c == "}":
            kind = scopes.pop() if scopes else "other"
            if kind == "init":
                head.append(c)
                continue
            if kind == "function":
                found[-1][1] = line
            head, head_line = [], None
        elif c == ";" and not inside_function:
            head, head_line = [], None
        elif not inside_function:
            if head_line is None and not c.isspace():
                head_line = line
            if head_line is not None:
                head.append(c)
    return [f for f in found if f[1] is not None]


def name_line(head, first_line):
    """The line of the function's name: the identifier before the parameters' parenthesis."""
    no_operators = re.sub(r"operator\s*(\(\)|[^\s(]+)", "operator", head)
    m = re.search(r"[A-Za-z_~][A-Za-z0-9_:<>,~ ]*\s*\(", no_operators)
    offset = m.start() if m else 0
    return first_line + head.count("\n", 0, offset)


def signature(head):
    """The head up to its parameters' closing parenthesis, on one line."""
    depth = 0
    for i, c in enumerate(head):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return head[: i + 1]
    return head


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=50, help="the limit (default 50)")
    parser.add_argument(
        "--max-count", type=int, help="exit 1 when more than this many functions are over"
    )
    args = parser.parse_args()
    root = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True
    ).stdout.strip()
    files = subprocess.run(
        ["git", "ls-files", "*.cpp", "*.hpp"], capture_output=True, text=True, check=True, cwd=root
    ).stdout.split()
    long = []
    for path in files:
        if path.startswith(SKIPPED):
            continue
        with open(f"{root}/{path}", encoding="utf-8") as f:
            text = strip(f.read())
        for first, last, head in functions(text):
            lines = last - first + 1
            if lines > args.lines:
                long.append((lines, path, first, signature(head)))
    long.sort(key=lambda f: (-f[0], f[1], f[2]))
    for lines, path, first, sig in long:
        print(f"{lines} {path}:{first} {sig}")
    print(f"{len(long)} functions over {args.lines} lines")
    if args.max_count is not None and len(long) > args.max_count:
        print(
            f"ci/long_functions.py: {len(long)} functions are over {args.lines} lines, more than "
            f"the {args.max_count} allowed: split one where a name explains a part",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
