"""The command line that ort_profile.py and ov_profile.py share: an ONNX file or a name in the peers' ONNX folder, the
threads, the timed runs, a regular expression grouping the nodes, and how many of the slowest nodes to list."""
import argparse
import os
import re
import sys

CACHE = os.path.join(os.path.expanduser("~"), ".cache", "ingot")


def parse(tool, doc, runs, warm_up, extra=None):
    """The parsed arguments, the ONNX file's path and the compiled --group (or None). `extra(parser)` adds a tool's
    own options. Exits with a message where the file is missing."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="an ONNX file, or a name in --onnx-dir")
    parser.add_argument("--onnx-dir", default=os.path.join(CACHE, "peers-onnx"))
    if extra:
        extra(parser)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=runs, help=f"timed inferences (after up to {warm_up} warm-up ones)")
    parser.add_argument("--group", default="", help="a regular expression whose captured groups name a node's group")
    parser.add_argument("--top", type=int, default=20, help="the slowest nodes listed")
    args = parser.parse_args()
    path = args.model if args.model.endswith(".onnx") else os.path.join(args.onnx_dir, args.model + ".onnx")
    if not os.path.exists(path):
        sys.exit(f"{tool}: no ONNX file {path} (scripts/peers/export_onnx.py writes them)")
    return args, path, re.compile(args.group) if args.group else None


def group_of(group, name):
    """The node's group: its name's captured groups joined by dots, or "(other)"."""
    m = group.search(name)
    return ".".join(g or "" for g in m.groups()) if m else "(other)"
