#!/usr/bin/env python3
"""Where ONNX Runtime spends its time on one ONNX file: its own profiler (SessionOptions.enable_profiling), with the
session options run_peers.py times it with, summed per operator type, per group of nodes and per node. Set beside
`ingot run --workload FILE --profile --top 0` (ingot's time per stage interval) it shows which operators ingot loses
on. Python is used only here, to run the peer; nothing of this is part of ingot's build, tests or CI.

    ~/.cache/ingot/peers-venv/bin/python scripts/peers/ort_profile.py efficientnet [--threads 2] [--runs 300]
        [--group 'features\\.(\\d+)\\.(\\d+)/block/block\\.(\\d)'] [--top 20]

MODEL is an ONNX file or a name in export_onnx.py's OUT_DIR (~/.cache/ingot/peers-onnx/NAME.onnx). --group sums the
nodes whose name matches the regular expression by its captured groups (EfficientNet's block and layer above).
Profiling costs time of its own: the run's time per inference with it is printed beside the time without it, and
the per-node figures are the profiler's (compare shares, or scale by the ratio).
"""
import collections
import json
import os
import sys
import time

import profile_args



def session(path, threads, profile):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.enable_profiling = profile
    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


def random_feeds(s):
    import numpy as np

    rng = np.random.default_rng(1)
    feeds = {}
    for i in s.get_inputs():
        shape = [d if isinstance(d, int) else 1 for d in i.shape]
        if "float" in i.type:
            feeds[i.name] = rng.standard_normal(shape).astype(np.float32)
        else:
            feeds[i.name] = rng.integers(0, 2, size=shape).astype(np.int64)
    return feeds


def ms_per_run(s, feeds, runs):
    for _ in range(min(50, runs)):
        s.run(None, feeds)
    start = time.perf_counter()
    for _ in range(runs):
        s.run(None, feeds)
    return (time.perf_counter() - start) / runs * 1e3


def main():
    args, path, group = profile_args.parse("ort_profile", __doc__, runs=300, warm_up=50)
    try:
        import onnxruntime  # noqa: F401
    except ImportError as e:
        sys.exit(f"ort_profile: {e}; run it with the peers venv's python (scripts/peers/setup_venv.sh makes it)")

    plain = session(path, args.threads, profile=False)
    feeds = random_feeds(plain)
    plain_ms = ms_per_run(plain, feeds, args.runs)
    profiled = session(path, args.threads, profile=True)
    profiled_ms = ms_per_run(profiled, feeds, args.runs)
    trace = profiled.end_profiling()
    with open(trace) as f:
        events = json.load(f)
    os.remove(trace)

    by_op, by_group, by_node = collections.Counter(), collections.Counter(), collections.Counter()
    calls = 0
    for e in events:
        if e.get("cat") != "Node" or not e["name"].endswith("_kernel_time"):
            continue
        name, us = e["name"][: -len("_kernel_time")], e["dur"]
        by_op[e["args"].get("op_name", "?")] += us
        by_node[name] += us
        if group:
            by_group[profile_args.group_of(group, name)] += us
        calls += 1
    runs = args.runs + min(50, args.runs)  # the profiler records the warm-up runs too
    total = sum(by_op.values()) / runs / 1e3

    print(f"# ONNX Runtime on {os.path.basename(path)}, {args.threads} threads")
    print(f"\n{plain_ms:.3f} ms per inference without the profiler, {profiled_ms:.3f} with it; "
          f"the nodes' kernels {total:.3f} ms ({calls // runs} kernel calls per inference)\n")

    def table(title, counter, limit=None):
        print(f"| {title} | ms | share |\n|---|---|---|")
        for key, us in counter.most_common(limit):
            ms = us / runs / 1e3
            print(f"| {key} | {ms:.4f} | {100 * ms / total:.1f}% |")
        print()

    table("operator", by_op)
    if group:
        table("group", by_group)
    table("node", by_node, args.top)


if __name__ == "__main__":
    main()
