#!/usr/bin/env python3
"""Figures of the code's shape, for issue notes and reviews: lines per module, `public`/`package` declaration lines and
public types (and typealiases, apart) per module, the longest functions and how many pass 40 and 100 lines, and each CLI command's `run()`
length.

    scripts/code_stats.py [ROOT]          (ROOT defaults to the repository; Sources/ under it is read)

Function lengths count the lines from a `func`, `init` or `subscript` line to its closing brace (a brace counter
that skips strings and comments roughly: good for ranking, not a parser). Generated code (Sources/ONNX/Generated)
is left out.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
sources = os.path.join(root, "Sources")
DECL = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|private|fileprivate|internal|static|final|mutating|"
                  r"nonisolated|override|@inline\(__always\)|@discardableResult)\s+)*(func\s+([^\s(<]+)|init|subscript)\b")


def strip(line):
    line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
    return line.split("//", 1)[0]


modules, functions = {}, []
for dirpath, _, names in os.walk(sources):
    if "Generated" in dirpath:
        continue
    for name in sorted(names):
        if not name.endswith((".swift", ".c", ".h")):
            continue
        path = os.path.join(dirpath, name)
        module = os.path.relpath(path, sources).split(os.sep)[0]
        lines = open(path, encoding="utf-8").read().split("\n")
        stats = modules.setdefault(module, {"lines": 0, "public": 0, "package": 0, "files": 0, "types": 0, "aliases": 0})
        stats["lines"] += len(lines)
        stats["files"] += 1
        if not name.endswith(".swift"):
            continue
        for line in lines:
            code = line.lstrip()
            if re.match(r"(@\w+\s+)*public\s", code):
                stats["public"] += 1
                if re.match(r"(@\w+\s+)*public\s+(final\s+)?(struct|enum|class|protocol|actor)\s", code):
                    stats["types"] += 1
                elif re.match(r"(@\w+\s+)*public\s+typealias\s", code):
                    stats["aliases"] += 1
            elif re.match(r"(@\w+\s+)*package\s", code):
                stats["package"] += 1
        for i, line in enumerate(lines):
            m = DECL.match(line)
            if not m or "{" not in strip(line) and not any("{" in strip(l) for l in lines[i + 1:i + 8]):
                continue
            depth, started, j = 0, False, i
            while j < len(lines):
                code = strip(lines[j])
                depth += code.count("{") - code.count("}")
                started = started or "{" in code
                if started and depth <= 0:
                    break
                j += 1
            label = (m.group(2) or m.group(1)).strip()
            functions.append((j - i + 1, os.path.relpath(path, root), i + 1, label))

print("module        files   lines  public  package  public types  public typealiases")
for module in sorted(modules):
    s = modules[module]
    print(f"{module:12} {s['files']:6} {s['lines']:7} {s['public']:7} {s['package']:8} {s['types']:13} {s['aliases']:19}")
print(f"\nfunctions over 40 lines: {sum(1 for f in functions if f[0] > 40)}, over 100: {sum(1 for f in functions if f[0] > 100)}")
print("\nlongest functions:")
for length, path, line, label in sorted(functions, reverse=True)[:10]:
    print(f"  {length:4}  {label}  ({path}:{line})")
print("\nCLI run() lengths:")
for length, path, line, label in sorted(functions, reverse=True):
    if label == "run" and "/classify/" in path:
        print(f"  {length:4}  {path}:{line}")
