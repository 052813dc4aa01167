#!/usr/bin/env python3
"""Checks Kiln's size rules (DESIGN.md, "House style"; COMMON house rules).

  1. files: no source file under src, include, tools, tests, bench, python or examples is longer
     than 500 lines (C++, Python, CMake, shell and lit sources; recorded data such as JSON results
     and the PTX golden hashes are not source);
  2. functions: no C++ function in src/schedule or src/transforms is longer than 120 lines, from the
     line its declaration starts to its closing brace (a lambda counts with the function it is in).

ALLOWED below names the functions that may stay over the limit for now, each with the issue that
splits it. The list only shrinks: an allowed function that is no longer over the limit (or no
longer exists) is reported too, so its entry is removed.

Usage: check_sizes.py SOURCE_DIR      exit 1 with one line per violation
       check_sizes.py --self-test     show that each rule can fail
"""
import os
import re
import sys

MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 120
FILE_ROOTS = ("src", "include", "tools", "tests", "bench", "python", "examples")
FUNCTION_ROOTS = ("src/schedule", "src/transforms")
SOURCE_SUFFIXES = (".cpp", ".cc", ".c", ".h", ".hpp", ".def", ".py", ".cmake", ".sh", ".kiln", ".test", ".in")
SOURCE_NAMES = ("CMakeLists.txt",)

# (file, function): why it may be longer for now. Issue 40 rewrites both (any shape and layout) and
# splits them; remove an entry as soon as its function is short enough (the check says when).
ALLOWED = {}


def is_source(path):
    name = os.path.basename(path)
    return name in SOURCE_NAMES or name.endswith(SOURCE_SUFFIXES)


def source_files(root, roots):
    for top in roots:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if not x.startswith("."))
            for f in sorted(files):
                path = os.path.join(d, f)
                if is_source(path):
                    yield path


def line_count(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for _ in f)


def strip_cpp(text):
    """The text with comments, string and character literals and preprocessor lines blanked (newlines
    kept, so offsets still give line numbers)."""
    out = []
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if at_line_start and c == "#":
            # A preprocessor line, with its continuations.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c == "\n":
            out.append(c)
            at_line_start = True
            i += 1
            continue
        if not c.isspace():
            at_line_start = False
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out.append(" ")
                i += 1
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


KEYWORD_SCOPE = re.compile(r"^(?:template\s*<.*>\s*)?(namespace|class|struct|union|enum|extern)\b", re.S)
NAME_BEFORE_PAREN = re.compile(r"(~?[A-Za-z_][\w:]*(?:\s*<[^()]*>)?|operator\s*[^\s(]+)\s*\($")


def drop_groups(header, open_ch, close_ch):
    """The header with the insides of (possibly nested) bracket groups removed."""
    out, depth = [], 0
    for c in header:
        if c == open_ch:
            if depth == 0:
                out.append(c)
            depth += 1
        elif c == close_ch and depth:
            depth -= 1
            if depth == 0:
                out.append(c)
        elif depth == 0:
            out.append(c)
    return "".join(out)


def function_name(header):
    """The name of the function whose definition `header` (the text before its body's brace) starts,
    or None when the brace opens something else (a class, a namespace, an initializer)."""
    h = " ".join(header.split())
    if not h or KEYWORD_SCOPE.match(h) or "(" not in h:
        return None
    flat = drop_groups(h, "(", ")")
    if "=" in flat.replace("operator=", "").replace("==", "") or flat.rstrip().endswith(("return", "else", "do")):
        return None
    first = h.index("(")
    m = NAME_BEFORE_PAREN.search(h[: first + 1])
    if not m:
        return None
    name = m.group(1).split("::")[-1].split("<")[0].strip()
    if name in ("if", "for", "while", "switch", "catch", "return", "sizeof", "decltype"):
        return None
    return name


def functions(text):
    """(name, first line, last line) of each function defined in C++ `text`, outermost only."""
    code = strip_cpp(text)
    found = []
    stack = []  # per open brace: "scope" (namespace, class), "function", "inner", "init"
    header_start = 0  # offset where the text before the next brace at scope level starts
    starts = []  # per function on the stack: (name, offset of its header)
    for i, c in enumerate(code):
        if c == "{":
            if stack and stack[-1] in ("function", "inner"):
                stack.append("inner")
                continue
            if stack and stack[-1] == "init":
                stack.append("init")
                continue
            header = code[header_start:i]
            name = function_name(header)
            if name:
                stack.append("function")
                lead = len(header) - len(header.lstrip())
                starts.append((name, header_start + lead))
            elif KEYWORD_SCOPE.match(" ".join(header.split())):
                stack.append("scope")
                header_start = i + 1
            else:
                stack.append("init")  # an initializer or member-init brace: still in the header
        elif c == "}":
            kind = stack.pop() if stack else "scope"
            if kind == "function":
                name, start = starts.pop()
                found.append((name, code.count("\n", 0, start) + 1, code.count("\n", 0, i) + 1))
                header_start = i + 1
            elif kind == "scope":
                header_start = i + 1
        elif c == ";" and (not stack or stack[-1] == "scope"):
            header_start = i + 1
        elif c == ":" and (not stack or stack[-1] == "scope"):
            # An access specifier (public:, private:) ends a header; a scope (::) or a constructor's
            # member-init list does not.
            before = code[header_start:i].strip()
            if before in ("public", "private", "protected") and not code.startswith("::", i):
                header_start = i + 1
    return found


def check_files(root):
    errors = []
    for path in source_files(root, FILE_ROOTS):
        n = line_count(path)
        if n > MAX_FILE_LINES:
            errors.append(f"{os.path.relpath(path, root)}: {n} lines, more than {MAX_FILE_LINES}; split it by concern")
    return errors


def check_functions(root, allowed):
    errors, seen = [], set()
    for path in source_files(root, FUNCTION_ROOTS):
        if not path.endswith((".cpp", ".h")):
            continue
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, first, last in functions(text):
            n = last - first + 1
            key = (rel, name)
            if key in allowed:
                seen.add(key)
                if n <= MAX_FUNCTION_LINES:
                    errors.append(f"{rel}:{first}: {name} is {n} lines now, within the limit: remove its entry from "
                                  f"ALLOWED in tests/layers/check_sizes.py")
                continue
            if n > MAX_FUNCTION_LINES:
                errors.append(f"{rel}:{first}: {name} is {n} lines, more than {MAX_FUNCTION_LINES}; split it into "
                              f"well-named pieces")
    for key in sorted(set(allowed) - seen):
        errors.append(f"{key[0]}: {key[1]} is allowed to be long but no longer exists there: remove its entry "
                      f"from ALLOWED in tests/layers/check_sizes.py")
    return errors


def self_test():
    """Each rule must catch its violation in a tree made for the purpose, and pass its absence."""
    import tempfile
    body = "".join(f"  x += {i};\n" for i in range(MAX_FUNCTION_LINES))
    long_function = "namespace k {\nint longOne(int x) {\n" + body + "  return x;\n}\n}  // namespace k\n"
    short_function = 'namespace k {\n// a comment with { and }\nint shortOne() { const char* s = "}"; return 1; }\n}\n'
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "src", "schedule"))
        os.makedirs(os.path.join(t, "tests"))
        open(os.path.join(t, "src", "schedule", "a.cpp"), "w").write(long_function + short_function)
        open(os.path.join(t, "src", "schedule", "b.cpp"), "w").write(short_function)
        open(os.path.join(t, "tests", "big.py"), "w").write("x = 1\n" * (MAX_FILE_LINES + 1))
        open(os.path.join(t, "tests", "data.json"), "w").write("1\n" * (MAX_FILE_LINES + 1))
        file_errors = check_files(t)
        function_errors = check_functions(t, {})
        # An allowed function that is now short, and one that is gone, are reported too.
        stale = check_functions(t, {("src/schedule/b.cpp", "shortOne"): "", ("src/schedule/b.cpp", "gone"): "",
                                    ("src/schedule/a.cpp", "longOne"): ""})
    checks = [
        (len(file_errors) == 1 and "tests/big.py: 501 lines" in file_errors[0], f"files: {file_errors}"),
        (len(function_errors) == 1 and f"longOne is {MAX_FUNCTION_LINES + 3} lines" in function_errors[0],
         f"functions: {function_errors}"),
        (len(stale) == 2 and "shortOne is 1 lines now" in stale[0] and "gone is allowed" in stale[1],
         f"allow-list: {stale}"),
    ]
    failed = [why for ok, why in checks if not ok]
    print("sizes: self-test " + ("passed" if not failed else "failed: " + "; ".join(failed)))
    return not failed


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--self-test":
        return 0 if self_test() else 1
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = sys.argv[1]
    errors = check_files(root) + check_functions(root, ALLOWED)
    for e in errors:
        print("sizes: " + e)
    print(f"sizes: {len(errors)} violations (files at most {MAX_FILE_LINES} lines, functions in "
          f"{', '.join(FUNCTION_ROOTS)} at most {MAX_FUNCTION_LINES}; {len(ALLOWED)} allowed for now)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
