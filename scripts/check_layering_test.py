#!/usr/bin/env python3
"""Tests scripts/check_layering.py on a made-up tree: an include the table allows (directly or through a folder it
may use) passes, one it does not is reported with file and line and fails the check."""
import pathlib
import subprocess
import sys
import tempfile

SCRIPT = pathlib.Path(__file__).resolve().parent / "check_layering.py"
TABLE = """# arch

## Folders

| folder | what | may use |
|---|---|---|
| `ir/` | IR | nothing else of ingot |
| `codegen/` | printers | `ir/` |
| `runtime/` | running | `codegen/`, `results/error_class.h` |
| `results/` | database | SQLite only |
| `cli/` | binary | everything |

## Next
"""


def check(files):
    with tempfile.TemporaryDirectory() as root:
        root = pathlib.Path(root)
        (root / "docs").mkdir()
        (root / "docs" / "architecture.md").write_text(TABLE)
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        run = subprocess.run([sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True)
        return run.returncode, run.stdout


def main():
    ok = {
        "ir/a.h": '#include "ir/b.h"\n',
        "runtime/r.cc": '#include "ir/a.h"\n#include "codegen/c.h"\n#include "results/error_class.h"\n',
        "cli/main.cc": '#include "results/database.h"\n',
    }
    code, out = check(ok)
    assert code == 0, out
    code, out = check({**ok, "runtime/bad.cc": '// x\n#include "results/database.h"\n'})
    assert code == 1, out
    assert "runtime/bad.cc:2: includes results/database.h" in out, out
    code, out = check({"codegen/up.h": '#include "runtime/r.h"\n'})
    assert code == 1 and "codegen/up.h:1: includes runtime/r.h" in out, out
    print("check_layering_test: 3 passed, 0 failed")


if __name__ == "__main__":
    main()
