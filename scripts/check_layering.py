#!/usr/bin/env python3
"""Checks that every #include between ingot's folders follows the folder table of docs/architecture.md.

A folder may include its own headers, the folders (or single headers) its "may use" column names, and what those
may use in turn (data flows one way: a folder that may use runtime/ may use what runtime/ uses). Prints each
include that runs against the table, with file and line, and exits 1 if there is any; 0 otherwise.
Run from anywhere: python3 scripts/check_layering.py [ROOT]
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
TABLE = ROOT / "docs" / "architecture.md"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"')


def read_table():
    """folder -> (folders it may use, single headers it may use, uses everything)."""
    rows = {}
    in_folders = False
    for line in TABLE.read_text().splitlines():
        if line.startswith("## "):
            in_folders = line.strip() == "## Folders"
            continue
        if not in_folders or not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3:
            continue
        folder = re.fullmatch(r"`([a-z_]+)/`", cells[0])
        if not folder:
            continue  # the header and separator rows, and tests/<folder>/
        uses = re.findall(r"`([a-z_]+/[^`]*)`", cells[2])
        folders = {u.rstrip("/") for u in uses if u.endswith("/")}
        headers = {u for u in uses if not u.endswith("/")}
        rows[folder.group(1)] = (folders, headers, "everything" in cells[2])
    if not rows:
        sys.exit(f"check_layering: no folder table under '## Folders' in {TABLE}")
    return rows


def closure(rows, folder):
    """The folders and headers `folder` may include, following "may use" transitively."""
    folders, headers, seen = set(), set(), set()
    stack = [folder]
    while stack:
        f = stack.pop()
        if f in seen or f not in rows:
            continue
        seen.add(f)
        used, single, _ = rows[f]
        folders |= used
        headers |= single
        stack.extend(used)
    return folders, headers


def main():
    rows = read_table()
    problems = []
    for folder, (_, _, everything) in sorted(rows.items()):
        if everything:
            continue
        allowed_folders, allowed_headers = closure(rows, folder)
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".h", ".cc"):
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                m = INCLUDE.match(line)
                if not m or m.group(1) not in rows:
                    continue
                target, header = m.group(1), f"{m.group(1)}/{m.group(2)}"
                if target == folder or target in allowed_folders or header in allowed_headers:
                    continue
                problems.append(f"{path.relative_to(ROOT)}:{number}: includes {header}, but {folder}/ may use only "
                                f"{', '.join(sorted(allowed_folders | allowed_headers)) or 'itself'} "
                                f"(docs/architecture.md, Folders)")
    for p in problems:
        print(p)
    print(f"check_layering: {len(problems)} include(s) against the folder table")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
