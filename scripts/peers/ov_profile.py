#!/usr/bin/env python3
"""Where OpenVINO spends its time on one ONNX file: its own per-node counters (PERF_COUNT), with the options
run_peers.py times it with (CPU, latency hint, the thread count, INFERENCE_PRECISION_HINT f32 or bf16), summed per
node type and kernel (the `exec_type`: `brgemm_avx512_amx_bf16` is an AMX GEMM), per group of nodes and per node. Set
beside `ingot run --workload FILE --profile --top 0` it shows which operators ingot loses on, in bf16 too (ONNX
Runtime's CPU provider has no bf16 path). Python is used only here, to run the peer; nothing of this is part of
ingot's build, tests or CI.

    ~/.cache/ingot/peers-venv/bin/python scripts/peers/ov_profile.py bert [--precision bf16] [--threads 2]
        [--runs 50] [--group 'layer\\.(\\d+)/(\\w+)'] [--top 20]

MODEL is an ONNX file or a name in export_onnx.py's OUT_DIR (~/.cache/ingot/peers-onnx/NAME.onnx). --group sums the
nodes whose name matches the regular expression by its captured groups. The counters cost time of their own: the
time per inference with them is printed beside the time without them, and the per-node figures are OpenVINO's
(compare shares, or scale by the ratio). Both times pass the inputs to each inference, so they run a little above
run_peers.py's, which binds them once.
"""
import collections
import os
import sys
import time

import profile_args



def compiled(core, path, threads, precision, counters):
    config = {
        "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_NUM_THREADS": str(threads),
        "INFERENCE_PRECISION_HINT": "bf16" if precision == "bf16" else "f32",
        "PERF_COUNT": "YES" if counters else "NO",
    }
    return core.compile_model(core.read_model(path), "CPU", config)


def random_feeds(model):
    import numpy as np

    rng = np.random.default_rng(1)
    feeds = {}
    for i in model.inputs:
        shape = [d.get_length() if d.is_static else 1 for d in i.get_partial_shape()]
        if i.get_element_type().is_real():
            feeds[i.get_any_name()] = rng.standard_normal(shape).astype(np.float32)
        else:
            feeds[i.get_any_name()] = rng.integers(0, 2, size=shape).astype(np.int64)
    return feeds


def ms_per_run(request, feeds, runs, on_run=None):
    for _ in range(min(20, runs)):
        request.infer(feeds)
    start = time.perf_counter()
    for _ in range(runs):
        request.infer(feeds)
        if on_run:
            on_run()
    return (time.perf_counter() - start) / runs * 1e3


def main():
    def precision(parser):
        parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32", help="as run_peers.py's")

    args, path, group = profile_args.parse("ov_profile", __doc__, runs=50, warm_up=20, extra=precision)
    try:
        import openvino as ov
    except ImportError as e:
        sys.exit(f"ov_profile: {e}; run it with the peers venv's python (scripts/peers/setup_venv.sh makes it)")

    core = ov.Core()
    plain = compiled(core, path, args.threads, args.precision, counters=False)
    feeds = random_feeds(plain)
    plain_ms = ms_per_run(plain.create_infer_request(), feeds, args.runs)
    counted = compiled(core, path, args.threads, args.precision, counters=True)
    request = counted.create_infer_request()
    by_kind, by_group, by_node, kind_of = collections.Counter(), collections.Counter(), collections.Counter(), {}

    def collect():
        for p in request.get_profiling_info():
            us = p.real_time.total_seconds() * 1e6
            kind = f"{p.node_type} ({p.exec_type})"
            by_kind[kind] += us
            by_node[p.node_name] += us
            kind_of[p.node_name] = kind
            if group:
                by_group[profile_args.group_of(group, p.node_name)] += us

    counted_ms = ms_per_run(request, feeds, args.runs, collect)
    total = sum(by_kind.values()) / args.runs / 1e3

    print(f"# OpenVINO {ov.get_version()} on {os.path.basename(path)}, {args.threads} threads, {args.precision}")
    print(f"\n{plain_ms:.3f} ms per inference without the counters, {counted_ms:.3f} with them; "
          f"the nodes' {total:.3f} ms\n")

    def table(title, counter, limit=None, kinds=False):
        kind_column = (" kind |", "---|") if kinds else ("", "")
        print(f"| {title} | ms | share |{kind_column[0]}\n|---|---|---|{kind_column[1]}")
        for key, us in counter.most_common(limit):
            ms = us / args.runs / 1e3
            print(f"| {key} | {ms:.4f} | {100 * ms / total:.1f}% |" + (f" {kind_of[key]} |" if kinds else ""))
        print()

    table("node type (kernel)", by_kind)
    if group:
        table("group", by_group)
    table("node", by_node, args.top, kinds=True)


if __name__ == "__main__":
    main()
