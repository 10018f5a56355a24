#!/usr/bin/python3
"""Generates ONNX's backend node tests (model.onnx + test_data_set_N/{input,output}_*.pb) into a directory.

Run with the system interpreter that has onnx 1.12: /usr/bin/python3 scripts/onnx_conformance.py -o DIR.
onnx 1.12's test generators still use numpy aliases that numpy 1.24 removed, so they are restored first.
"""
import sys

import numpy as np

# Removed in numpy 1.24 but referenced by onnx 1.12's test case modules.
for alias, value in (("float", float), ("int", int), ("bool", bool), ("object", object), ("str", str)):
    if alias not in np.__dict__:
        setattr(np, alias, value)

from onnx.backend.test import cmd_tools  # noqa: E402  (must follow the aliases)


def main() -> None:
    if len(sys.argv) == 1 or sys.argv[1] != "generate-data":
        sys.argv.insert(1, "generate-data")
    cmd_tools.main()


if __name__ == "__main__":
    main()
