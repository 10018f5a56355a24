#!/usr/bin/env python3
"""Measures the paper models side by side on this machine: ONNX Runtime and OpenVINO (CPU, float32) on the ONNX files
of scripts/peers/export_onnx.py, and ingot's fixed `global` program of the same ONNX file and of its built-in model of
the same name, exported as standalone C++ (`ingot export`) and run as a subprocess. Python is used only here, to run
the peers; nothing of this is part of ingot's build, tests or CI.

    ~/.cache/ingot/peers-venv/bin/python scripts/peers/run_peers.py OUT \\
        [--models resnext efficientnet swin bert lstm mmoe] [--threads 2] [--rounds 3] [--min-ms 1000] \\
        [--tuned-db TUNED.db]

With --tuned-db, a fifth runner, ingot_tuned, runs each model's best program in that database: what
`ingot tune configs/paper/<model>.yaml --db TUNED.db` found for the built-in model at paper size (the config's
threads must be the runners'; a model not tuned there shows the error and the others run).

(Run with another python, it re-runs itself with the peers venv's when that exists.) It writes OUT/peers.json and
OUT/peers.md. Steps:

  1. Prepare, once per model, outside the timed rounds (cached in --work-dir; redone when the ingot binary, the
     ONNX file or the settings change):
     - ingot, twice (the ONNX file; the built-in model): a run config with `search.fusion: global`,
       `budget.trials: 1` and `search.batch: 1`, `ingot tune` (its first and only candidate is the fixed strategy
       schedule: compiled, checked against the interpreter, measured), `ingot export` of that program, and the g++
       command the export prints. With --tuned-db, also `ingot best --config configs/paper/<model>.yaml --db
       TUNED.db` and the export of that program. Progress: --work-dir/<model>-<onnx|builtin>-t<threads>/prepare.log*.
     - ONNX Runtime and OpenVINO: one worker process per peer and model loads the ONNX file, checks one inference
       on the export's test data against torch's outputs, and binds the random inputs (the same for both peers).
  2. Rounds: each round runs every runner once for every model, the runners' order rotating from round to round.
     A run is warm-up runs, then timed runs until at least --min-ms ms and --repeats runs; its figure is the median
     time of one inference. The reported figure is the median over the rounds.

One model's or one runner's failure is recorded in peers.json (and shown in peers.md) and the run goes on.
"""
import argparse
import hashlib
import json
import math
import multiprocessing as mp
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import time
import traceback

MODELS = ["resnext", "efficientnet", "swin", "bert", "lstm", "mmoe"]
RUNNERS = ["ort", "openvino", "ingot_onnx", "ingot_builtin", "ingot_tuned"]
RUNNER_TITLES = {
    "ort": "ORT ms",
    "openvino": "OpenVINO f32 ms",
    "ingot_onnx": "ingot (ONNX file, global) ms",
    "ingot_builtin": "ingot (built-in, global) ms",
    "ingot_tuned": "ingot (built-in, tuned) ms",
}
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "ingot")
DEFAULT_VENV = os.environ.get("INGOT_PEERS_VENV", os.path.join(CACHE, "peers-venv"))
# Integer graph inputs: the exclusive upper bound of their random values (BERT's vocabulary).
INT_INPUT_RANGES = {"input_ids": 30522}
# ingot tune's check of its program against the interpreter (measure.rtol, measure.atol). Its defaults (1e-4, 1e-5)
# reject the fixed program of ResNeXt-101's ONNX file: float32 sums of 101 layers in another order than the
# interpreter's differ by ~1e-4 on logits of ~2 (docs/peers.md, "Verify ingot against torch", needed 1e-3 too).
INGOT_RTOL = 1e-3
INGOT_ATOL = 1e-3
# --precision: fp32 (every runner), or bf16 (OpenVINO with INFERENCE_PRECISION_HINT bf16 against ingot's
# `precision: bf16`; ONNX Runtime's CPU provider has no bf16 path, so it does not run): bf16 is compared only with
# bf16.
PRECISION = "fp32"


class StepError(Exception):
    """A failed preparation or measurement step; its message is what peers.json and peers.md record."""


# ----------------------------------------------------------------------------------------------------------------
# The venv


def ensure_venv():
    """Re-runs this script with the peers venv's python when the current one lacks the peers; stops with a clear
    message when there is no venv."""
    try:
        import numpy  # noqa: F401
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
        import openvino  # noqa: F401
        return
    except ImportError as e:
        missing = str(e)
    venv_python = os.path.join(DEFAULT_VENV, "bin", "python")
    if os.path.exists(venv_python) and os.path.realpath(sys.executable) != os.path.realpath(venv_python) \
            and not os.environ.get("INGOT_PEERS_REEXEC"):
        os.environ["INGOT_PEERS_REEXEC"] = "1"
        os.execv(venv_python, [venv_python, os.path.abspath(__file__)] + sys.argv[1:])
    where = f"the peers venv {DEFAULT_VENV}" if os.path.exists(venv_python) else f"no venv at {DEFAULT_VENV}"
    sys.exit(f"run_peers: {missing} ({where}, python {sys.executable}).\n"
             f"Create or update the venv with scripts/peers/setup_venv.sh, then run\n"
             f"  {venv_python} {os.path.relpath(os.path.abspath(__file__))} OUT ...")


# ----------------------------------------------------------------------------------------------------------------
# Inputs and checks


def onnx_inputs(path):
    """[(name, shape, numpy dtype)] of the graph inputs that are not initializers."""
    import onnx
    from onnx import helper

    model = onnx.load(path, load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    specs = []
    for value in model.graph.input:
        if value.name in initializers:
            continue
        t = value.type.tensor_type
        shape = []
        for d in t.shape.dim:
            if not d.HasField("dim_value"):
                raise StepError(f"{path}: input {value.name} has a dynamic dimension ({d.dim_param or '?'}); "
                                f"export with static shapes")
            shape.append(d.dim_value)
        specs.append((value.name, shape, helper.tensor_dtype_to_np_dtype(t.elem_type)))
    return specs


def random_inputs(specs, seed):
    """Random values of each input's shape and dtype: floats standard normal, integers uniform in [0, range)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    inputs = {}
    for name, shape, dtype in specs:
        if np.issubdtype(dtype, np.floating):
            inputs[name] = rng.standard_normal(shape).astype(dtype)
        elif np.issubdtype(dtype, np.integer):
            inputs[name] = rng.integers(0, INT_INPUT_RANGES.get(name, 2), size=shape).astype(dtype)
        elif dtype == np.bool_:
            inputs[name] = rng.integers(0, 2, size=shape).astype(np.bool_)
        else:
            raise StepError(f"input {name}: no random values for dtype {dtype}")
    return inputs


def test_data(onnx_path, specs):
    """The export's test data set (torch's inputs and outputs), or None when it is not there."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model_name = os.path.splitext(os.path.basename(onnx_path))[0]
    directory = os.path.join(os.path.dirname(onnx_path), model_name, "test_data_set_0")
    if not os.path.isdir(directory):
        return None

    def read(path):
        t = onnx.TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        return np.array(numpy_helper.to_array(t))

    inputs = {}
    for i, (name, _, _) in enumerate(specs):
        path = os.path.join(directory, f"input_{i}.pb")
        if not os.path.exists(path):
            return None
        inputs[name] = read(path)
    outputs = []
    i = 0
    while os.path.exists(os.path.join(directory, f"output_{i}.pb")):
        outputs.append(read(os.path.join(directory, f"output_{i}.pb")))
        i += 1
    return inputs, outputs


def compare(actual, expected):
    """Max abs error over the outputs, and whether each element is within ingot's verification rule with
    atol = rtol = 1e-3 (loose: float32 in another summation order than torch's; the check catches wrong models,
    not rounding), or 5e-2 in bf16 (8 bits of mantissa, rounded again at every layer)."""
    import numpy as np

    worst, ok = 0.0, True
    for a, e in zip(actual, expected):
        a = np.asarray(a, dtype=np.float64).reshape(-1)
        e = np.asarray(e, dtype=np.float64).reshape(-1)
        if a.shape != e.shape:
            return {"max_abs_error": None, "ok": False, "note": f"shape {a.shape} vs torch's {e.shape}"}
        if a.size == 0:
            continue
        diff = np.abs(a - e)
        worst = max(worst, float(diff.max()))
        tolerance = 5e-2 if PRECISION == "bf16" else 1e-3
        allowed = tolerance * max(1.0, float(np.abs(e).max())) + tolerance * np.abs(e)
        ok = ok and bool((diff <= allowed).all())
    return {"max_abs_error": worst, "ok": ok}


# ----------------------------------------------------------------------------------------------------------------
# Python peers: one worker process per peer and model, so that one crash costs one cell and the peers' thread pools
# never share a process.


def time_calls(call, warmup, min_ms, repeats):
    """Warm-up calls, then timed calls until min_ms and repeats are both reached: (median ms, runs)."""
    for _ in range(warmup):
        call()
    times = []
    clock = time.perf_counter
    start = clock()
    min_s = min_ms / 1000.0
    while True:
        t0 = clock()
        call()
        t1 = clock()
        times.append(t1 - t0)
        if len(times) >= repeats and t1 - start >= min_s:
            break
    return statistics.median(times) * 1000.0, len(times)


def make_ort(path, threads):
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])
    output_names = [o.name for o in session.get_outputs()]
    info = {"providers": session.get_providers()}

    def run_once(inputs):
        return session.run(output_names, inputs)

    def bind(inputs):
        """Inputs and outputs bound once (io_binding), so a timed call is the inference alone."""
        binding = session.io_binding()
        keep = []
        for name, value in inputs.items():
            v = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(value))
            keep.append(v)
            binding.bind_ortvalue_input(name, v)
        for o in session.get_outputs():
            if all(isinstance(d, int) for d in o.shape):
                dtype = {"tensor(float)": np.float32, "tensor(int64)": np.int64}.get(o.type, None)
                if dtype is not None:
                    v = ort.OrtValue.ortvalue_from_numpy(np.empty(o.shape, dtype=dtype))
                    keep.append(v)
                    binding.bind_ortvalue_output(o.name, v)
                    continue
            binding.bind_output(o.name, "cpu")

        def call():
            session.run_with_iobinding(binding)
        call.keep = keep
        return call

    return info, run_once, bind


def make_openvino(path, threads):
    import openvino as ov
    import openvino.properties as props
    import openvino.properties.hint as hints

    core = ov.Core()
    model = core.read_model(path)
    config = {
        hints.performance_mode: hints.PerformanceMode.LATENCY,
        props.inference_num_threads: threads,
        hints.inference_precision: ov.Type.bf16 if PRECISION == "bf16" else ov.Type.f32,
    }
    compiled = core.compile_model(model, "CPU", config)
    info = {"device": core.get_property("CPU", props.device.full_name)}
    for key, prop in [("inference_num_threads", props.inference_num_threads),
                      ("inference_precision", hints.inference_precision),
                      ("num_streams", props.num_streams),
                      ("performance_mode", hints.performance_mode)]:
        try:
            info[key] = str(compiled.get_property(prop))
        except Exception as e:  # noqa: BLE001 - a property this version does not report
            info[key] = f"? ({type(e).__name__})"
    names = [o.get_any_name() for o in compiled.outputs]

    def run_once(inputs):
        request = compiled.create_infer_request()
        result = request.infer(inputs)
        return [result[compiled.output(n)] for n in names]

    def bind(inputs):
        """Input tensors set once on one infer request, so a timed call is the inference alone."""
        request = compiled.create_infer_request()
        keep = []
        for name, value in inputs.items():
            t = ov.Tensor(value)
            keep.append(value)
            request.set_tensor(name, t)

        def call():
            request.infer()
        call.keep = keep
        return call

    return info, run_once, bind


def peer_worker(connection, runner, path, threads, inputs, check, precision):
    """Loads the model, checks it, binds the inputs; then answers ("time", warmup, min_ms, repeats) requests."""
    # A spawned process imports this module afresh: the precision the parent parsed comes as an argument (without it
    # OpenVINO's bf16 runs were f32).
    global PRECISION
    PRECISION = precision
    try:
        start = time.time()
        info, run_once, bind = (make_ort if runner == "ort" else make_openvino)(path, threads)
        info["load_s"] = round(time.time() - start, 2)
        if check is not None:
            info["check_vs_torch"] = compare(run_once(check[0]), check[1])
        call = bind(inputs)
        call()
        connection.send(("ok", info))
    except Exception as e:  # noqa: BLE001 - reported to the parent
        connection.send(("error", f"{type(e).__name__}: {e}", traceback.format_exc()))
        return
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        if request[0] == "quit":
            return
        try:
            connection.send(("ok", time_calls(call, *request[1:])))
        except Exception as e:  # noqa: BLE001
            connection.send(("error", f"{type(e).__name__}: {e}", traceback.format_exc()))


class PeerRunner:
    def __init__(self, runner, path, threads, inputs, check, timeout_s):
        self.runner = runner
        self.timeout_s = timeout_s
        self.estimate_ms = None
        context = mp.get_context("spawn")
        self.connection, child = context.Pipe()
        self.process = context.Process(target=peer_worker, args=(child, runner, path, threads, inputs, check, PRECISION),
                                       daemon=True)
        self.process.start()
        child.close()
        self.info = self._answer(timeout_s)

    def _answer(self, timeout_s):
        if not self.connection.poll(timeout_s):
            self.close()
            raise StepError(f"no answer in {timeout_s:.0f} s (worker killed)")
        try:
            answer = self.connection.recv()
        except EOFError:
            self.process.join(5)
            raise StepError(f"worker died (exit code {self.process.exitcode})")
        if answer[0] != "ok":
            raise StepError(answer[1] + "\n" + "\n".join(answer[2].splitlines()[-6:]))
        return answer[1]

    def measure(self, warmup, min_ms, repeats):
        self.connection.send(("time", warmup, min_ms, repeats))
        budget = self.timeout_s + 4 * (min_ms / 1000.0) + (repeats + warmup) * (self.estimate_ms or 1000) / 500.0
        ms, runs = self._answer(budget)
        self.estimate_ms = ms
        return ms, runs

    def close(self):
        if self.process.is_alive():
            try:
                self.connection.send(("quit",))
            except (BrokenPipeError, OSError):
                pass
            self.process.join(10)
            if self.process.is_alive():
                self.process.kill()
                self.process.join()


# ----------------------------------------------------------------------------------------------------------------
# ingot: tune (the fixed `global` schedule), export, build, then run the exported program.


def tail(text, lines=15):
    return "\n".join(text.strip().splitlines()[-lines:])


def run_step(what, command, log_path, cwd=None, env=None, timeout_s=None, shell=False):
    """Runs one preparation step, its output appended to log_path as it comes (`tail -f` shows progress); returns
    its stdout; raises StepError with the output's tail on failure."""
    start = time.time()
    shown = command if isinstance(command, str) else shlex.join(command)
    with open(log_path, "a") as log:
        log.write(f"$ {shown}\n")
        log.flush()
        begin = log.tell()
        try:
            with open(log_path + ".stdout", "w") as out:
                done = subprocess.run(command, cwd=cwd, env=env, stdout=out, stderr=log, text=True,
                                      timeout=timeout_s, shell=shell)
        except subprocess.TimeoutExpired:
            raise StepError(f"{what} timed out after {timeout_s} s: {shown}")
        except OSError as e:
            raise StepError(f"{what}: {e}")
        with open(log_path + ".stdout") as out:
            stdout = out.read()
        with open(log_path) as written:
            written.seek(begin)
            stderr = written.read()
        log.write(f"{stdout}(exit {done.returncode}, {time.time() - start:.1f} s)\n\n")
    if done.returncode != 0:
        raise StepError(f"{what} failed (exit {done.returncode}; log {log_path}):\n"
                        f"{tail(stderr) or tail(stdout) or '(no output)'}")
    return stdout


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class IngotRunner:
    """ingot's fixed global program of one model (variant onnx or builtin), or the best program a tuning run stored
    (variant tuned: `ingot best --config configs/paper/<model>.yaml --db TUNED_DB`), exported and built; measure()
    runs it as a subprocess."""

    def __init__(self, variant, model, args, ingot_digest, onnx_path):
        self.variant = variant
        self.threads = args.threads
        self.estimate_ms = None
        self.info = {}
        suffix = "-bf16" if PRECISION == "bf16" else ""
        work = os.path.join(args.work_dir, f"{model}-{variant}-t{args.threads}{suffix}")
        os.makedirs(work, exist_ok=True)
        if variant == "tuned":
            self._prepare_tuned(model, args, ingot_digest, work)
            return
        # One database per ingot binary: a shared one kept the fixed schedules of earlier builds, and `ingot best`
        # answered with one of those where it had once been measured faster than this build's.
        database = os.path.join(args.work_dir, f"peers-{ingot_digest[:12]}.db")
        workload = f"  onnx: {onnx_path}" if variant == "onnx" else f"  name: {model}"
        config_text = (
            "# Written by scripts/peers/run_peers.py: ingot's fixed `global` program of this model, measured once.\n"
            f"workload:\n{workload}\n"
            f"precision: {PRECISION}\n"
            f"target:\n  kind: cpu\n  threads: {args.threads}\n"
            "budget:\n  trials: 1\n"
            "seed: 1\n"
            f"database: {database}\n"
            f"measure:\n  build_workers: 1\n  build_timeout_s: 1800\n  run_timeout_s: 900\n"
            f"  rtol: {INGOT_RTOL:g}\n  atol: {INGOT_ATOL:g}\n"
            # batch 1: the search proposes the fixed schedule alone (no samples, no model), which is all we want.
            "search:\n  fusion: global\n  batch: 1\n  cost_model: none\n")
        config = os.path.join(work, "peers.yaml")
        log = os.path.join(work, "prepare.log")
        stamp_path = os.path.join(work, "prepared.json")
        stamp = {"config": config_text, "ingot_sha256": ingot_digest}
        if variant == "onnx":
            st = os.stat(onnx_path)
            stamp["onnx"] = {"path": onnx_path, "bytes": st.st_size, "mtime": st.st_mtime}
        env = dict(os.environ, INGOT_CACHE_DIR=args.cache_dir)
        prepared = self._cached(stamp_path, stamp, args)
        if prepared is None:
            with open(config, "w") as f:
                f.write(config_text)
            with open(log, "w") as f:
                f.write(f"preparing {model} ({variant}) {time.ctime()}\n")
            ingot = args.ingot
            tuned = run_step("ingot tune", [ingot, "tune", config], log, env=env)
            fixed = re.search(r"^best: .*?([0-9.]+)x the fixed schedule's", tuned, re.M)
            if fixed and abs(float(fixed.group(1)) - 1.0) > 1e-9:
                raise StepError(f"ingot tune's best is not the fixed schedule (log {log}):\n{tail(tuned, 4)}")
            best = json.loads(run_step("ingot best", [ingot, "best", "--config", config, "--json"], log, env=env))
            prepared = self._export(best, database, stamp, stamp_path, work, log, args, env)
        self._use(prepared, work)

    def _prepare_tuned(self, model, args, ingot_digest, work):
        """The best program of the paper model's config (configs/paper/<model>.yaml, its workload at paper size)
        in --tuned-db, for these threads; redone when the binary, the database's path or its best candidate
        changes."""
        config = os.path.join(REPO, "configs", "paper", f"{model}.yaml")
        log = os.path.join(work, "prepare.log")
        stamp_path = os.path.join(work, "prepared.json")
        env = dict(os.environ, INGOT_CACHE_DIR=args.cache_dir)
        with open(log, "a") as f:
            f.write(f"looking up {model}'s best in {args.tuned_db} {time.ctime()}\n")
        try:
            answer = run_step("ingot best", [args.ingot, "best", "--config", config, "--db", args.tuned_db,
                                             "--threads", str(args.threads), "--json"], log, env=env)
            best = json.loads(answer)
        except (StepError, ValueError) as e:
            raise StepError(f"no tuned program of {model} for {args.threads} threads in {args.tuned_db}, or ingot best "
                            f"failed (its error at the end; tune it "
                            f"with: ingot tune {os.path.relpath(config, REPO)} --db {args.tuned_db}, which tunes for "
                            f"all cores; for another thread count, a copy of the config with target.threads: "
                            f"{args.threads}): {e}")
        stamp = {"tuned_db": args.tuned_db, "candidate": best["candidate"], "ingot_sha256": ingot_digest}
        prepared = self._cached(stamp_path, stamp, args)
        if prepared is None:
            prepared = self._export(best, args.tuned_db, stamp, stamp_path, work, log, args, env)
        self._use(prepared, work)

    @staticmethod
    def _cached(stamp_path, stamp, args):
        """The preparation stored at stamp_path, where it was made with this stamp and its binary is still there."""
        if not os.path.exists(stamp_path) or args.reprepare:
            return None
        with open(stamp_path) as f:
            prepared = json.load(f)
        if prepared.get("stamp") != stamp or not os.access(prepared.get("binary", ""), os.X_OK):
            return None
        return prepared

    def _export(self, best, database, stamp, stamp_path, work, log, args, env):
        """Exports and builds `ingot best`'s answer, times its first calls, and stores the preparation (with its
        stamp) at stamp_path for _cached."""
        export_dir = os.path.join(work, "export")
        # Workload names repeat (the ONNX file's stem is the built-in model's name): export by hash.
        out = run_step("ingot export", [args.ingot, "export", "--db", database, "--workload", best["workload_hash"],
                                        "--out", export_dir, "--threads", str(args.threads)], log, env=env)
        build = re.search(r"^build: cd (.+?) && (.+)$", out, re.M)
        name = re.search(r"^run: +cd .+? && \./(\S+)", out, re.M)
        if not build or not name:
            raise StepError(f"ingot export printed no build command (log {log}):\n{tail(out)}")
        run_step("building the export", build.group(2), log, cwd=export_dir, shell=True)
        prepared = {"stamp": stamp, "binary": os.path.join(export_dir, name.group(1)), "data_dir": export_dir,
                    "workload": best["workload"], "workload_hash": best["workload_hash"],
                    "candidate": best["candidate"], "tuned_median_ms": best["median_s"] * 1000.0,
                    "partition": best.get("partition"), "build_command": build.group(2)}
        # First timed calls: the program checks itself, and gives the first estimate of its time (10, 100,
        # ... runs until they take 100 ms: the first runs of a process are slow, OpenMP's threads start).
        runs = 10
        while True:
            ms, _, check = self._run(prepared, runs, timeout_s=3600)
            if ms * runs >= 100 or runs >= 1000000:
                break
            runs *= 10
        prepared["first_ms"] = ms
        prepared["export_check"] = check
        with open(stamp_path, "w") as f:
            json.dump(prepared, f, indent=2)
        return prepared

    def _use(self, prepared, work):
        self.prepared = prepared
        self.estimate_ms = prepared["first_ms"]
        self.info = {k: prepared[k] for k in ("workload", "workload_hash", "candidate", "tuned_median_ms",
                                              "partition", "binary", "build_command", "export_check")}
        self.info["work_dir"] = work

    def _run(self, prepared, repeat, timeout_s):
        """(median ms, runs, the program's check of its outputs). The program prints its median before it checks;
        exit 1 (an output differs from the interpreter's beyond the export's fixed tolerance, rtol 1e-4 and atol
        1e-5, tighter than the tune's here) keeps the time, with the check's lines as the note."""
        env = dict(os.environ, OMP_NUM_THREADS=str(self.threads))
        command = [prepared["binary"], prepared["data_dir"], "--repeat", str(repeat)]
        try:
            done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise StepError(f"{shlex.join(command)} timed out after {timeout_s:.0f} s")
        m = re.search(r"^\S+: median ([0-9.eE+-]+) ms of (\d+) runs$", done.stdout, re.M)
        if done.returncode not in (0, 1) or not m:
            raise StepError(f"{shlex.join(command)} exited {done.returncode}:\n{tail(done.stdout + done.stderr)}")
        check = "every output matches the reference" if done.returncode == 0 else \
            "; ".join(line for line in done.stdout.splitlines()[1:] if line.strip())
        return float(m.group(1)), int(m.group(2)), check

    def measure(self, warmup, min_ms, repeats):
        """One call of the exported program with N = warm-up + max(repeats, min_ms / estimate) runs; its main has no
        separate warm-up, so the warm-up runs are among those it takes the median of. When the estimate (the last
        call's median) was too high for N runs to take min_ms, that call counts as warm-up and a second call with
        the N of its median is the measurement."""
        for _ in range(2):
            runs = warmup + max(repeats, math.ceil(min_ms / max(self.estimate_ms, 1e-4)))
            ms, n, _ = self._run(self.prepared, runs, timeout_s=120 + 20 * runs * self.estimate_ms / 1000.0)
            self.estimate_ms = ms
            if ms * (n - warmup) >= 0.9 * min_ms:
                break
        return ms, n

    def close(self):
        pass


# ----------------------------------------------------------------------------------------------------------------
# Machine and versions


def cpu_info():
    model, flags = None, set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "model name" and model is None:
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    isa = {"avx512f": "avx512f" in flags, "avx2": "avx2" in flags,
           "amx": sorted(f for f in flags if f.startswith("amx"))}
    return {"model": model or platform.processor() or "?", "logical_cpus": os.cpu_count(), "isa": isa}


def versions(args):
    import numpy
    import onnxruntime
    import openvino

    v = {"python": platform.python_version(), "numpy": numpy.__version__, "onnxruntime": onnxruntime.__version__,
         "openvino": openvino.get_version()}
    try:
        lines = subprocess.run([args.ingot, "--version"], capture_output=True, text=True,
                               timeout=30).stdout.strip().splitlines()
        v["ingot"] = lines[0] if lines else "?"
    except OSError as e:
        v["ingot"] = f"? ({e})"
    try:
        commit = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
        # Uncommitted changes that can change ingot (this script's folder and docs/ cannot).
        dirty = [line[3:] for line in subprocess.run(
            ["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
            text=True).stdout.splitlines() if not line[3:].startswith(("scripts/peers/", "docs/"))]
        v["ingot_commit"] = commit.strip() + (f" (with uncommitted changes to {len(dirty)} files)" if dirty else "")
        v["ingot_uncommitted"] = dirty
    except OSError:
        v["ingot_commit"] = "?"
    return v


# ----------------------------------------------------------------------------------------------------------------
# Report


def fmt_ms(ms):
    if ms is None:
        return "-"
    if ms >= 100:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.4f}"


def short(error):
    """An error in one line for peers.md: its first line and, when there are more, its last."""
    lines = [line.strip() for line in error.strip().splitlines() if line.strip()]
    return lines[0] if len(lines) < 2 else f"{lines[0]} ... {lines[-1]}"


def write_report(out_dir, report):
    with open(os.path.join(out_dir, "peers.json"), "w") as f:
        json.dump(report, f, indent=2)
    s = report["settings"]
    shown = [r for r in RUNNERS if (r != "ort" or s.get("precision", "fp32") == "fp32")
             and (r != "ingot_tuned" or r in s["runners"])]
    tuned = "ingot_tuned" in shown
    m = report["machine"]
    v = report["versions"]
    lines = [
        "# Peers side by side",
        "",
        f"Written by `scripts/peers/run_peers.py` on {report['started']} (took {report.get('elapsed_s', '?')} s).",
        "",
        f"- CPU: {m['cpu']['model']}, {m['cpu']['logical_cpus']} logical CPUs; avx512f {m['cpu']['isa']['avx512f']}, "
        f"avx2 {m['cpu']['isa']['avx2']}, amx {' '.join(m['cpu']['isa']['amx']) or 'none'}",
        f"- threads: {s['threads']} per runner; {s['rounds']} rounds, interleaved (runner order rotating); per round "
        f"{s['warmup']} warm-up runs, then at least {s['min_ms']} ms and {s['repeats']} runs; median per round, "
        f"median over rounds",
        f"- load average (1, 5, 15 min): before {' '.join(f'{x:.2f}' for x in report['load_before'])}, after "
        f"{' '.join(f'{x:.2f}' for x in report.get('load_after', []))}",
        f"- ONNX Runtime {v['onnxruntime']} (CPUExecutionProvider, ORT_ENABLE_ALL), OpenVINO {v['openvino']} (CPU, "
        f"LATENCY, {s.get('precision', 'fp32')}), {v['ingot']} at {v['ingot_commit']}; python {v['python']}",
    ]
    if report["load_before"][0] > 0.5 or max(report.get("load_after", [0])[:1]) > s["threads"] + 0.5:
        lines.append("- **the machine was not idle** (1-minute load above 0.5 before the run, or above the runners' "
                     "threads after it): other processes took CPU time from the runners, whose threads wait for "
                     "each other; these numbers are not comparable with an idle machine's")
    lines += [
        "",
        "| model | " + " | ".join(RUNNER_TITLES[r] for r in shown) + " | best peer / ingot |"
        + (" best peer / ingot tuned |" if tuned else ""),
        "|---|" + "---|" * (len(shown) + 1 + tuned),
    ]
    if report.get("prepare_only"):
        lines += ["", "Prepared only (--prepare-only): no timings; the table shows which cells failed.", ""]
    notes = []
    for model, r in report["models"].items():
        cells = []
        for runner in shown:
            cell = r["runners"].get(runner, {})
            if cell.get("error"):
                notes.append(f"- {model}, {runner}: {short(cell['error'])}")
                cells.append("error")
            elif cell.get("skipped"):
                cells.append("-")
            elif cell.get("not_bf16"):
                notes.append(f"- {model}, {runner}: {cell['not_bf16']}; not compared")
                cells.append(f"({fmt_ms(cell.get('median_ms'))}, f32)")
            else:
                cells.append(fmt_ms(cell.get("median_ms")))
        for key in ("best_peer_over_ingot", "best_peer_over_ingot_tuned")[:1 + tuned]:
            ratio = r.get(key)
            cells.append(f"{ratio:.2f}x" if ratio else "-")
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
        if r.get("error"):
            notes.append(f"- {model}: {short(r['error'])}")
        for runner in ("ingot_onnx", "ingot_builtin", "ingot_tuned"):
            check = r["runners"].get(runner, {}).get("info", {}).get("export_check")
            if check and check != "every output matches the reference":
                notes.append(f"- {model}, {runner}: the exported program's own check, with its fixed tolerance "
                             f"(rtol 1e-4, atol 1e-5; the tune checked with rtol {INGOT_RTOL:g}, atol "
                             f"{INGOT_ATOL:g}): {check}")
        for runner in ("ort", "openvino"):
            check = r["runners"].get(runner, {}).get("info", {}).get("check_vs_torch")
            if check and not check.get("ok"):
                notes.append(f"- {model}, {runner}: outputs differ from torch's (max abs error "
                             f"{check.get('max_abs_error')}; {check.get('note', '')})")
    lines += [
        "",
        "best peer / ingot: the faster of ORT and OpenVINO divided by ingot's program of the same ONNX file; above 1, "
        "ingot is faster. Each cell is the median over the rounds of each round's median time of one inference.",
    ]
    if tuned:
        lines += ["", f"ingot tuned: the best program of `ingot tune configs/paper/<model>.yaml` in {s['tuned_db']} "
                  "(the built-in model at paper size; its partition and candidate in peers.json); best peer / ingot "
                  "tuned divides the faster peer by it."]
    if notes:
        lines += ["", "Errors and notes (details in peers.json):", ""] + notes
    with open(os.path.join(out_dir, "peers.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", help="where peers.json and peers.md are written")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=MODELS)
    parser.add_argument("--runners", nargs="+", choices=RUNNERS,
                        default=[r for r in RUNNERS if r != "ingot_tuned"],
                        help="default: all but ingot_tuned, which --tuned-db adds")
    parser.add_argument("--tuned-db", help="a database of `ingot tune configs/paper/<model>.yaml` runs with these "
                        "threads: adds the runner ingot_tuned, each model's best program there (models not tuned "
                        "in it show the error)")
    parser.add_argument("--onnx-dir", default=os.path.join(CACHE, "peers-onnx"),
                        help="export_onnx.py's OUT_DIR (default ~/.cache/ingot/peers-onnx)")
    parser.add_argument("--work-dir", default=os.path.join(CACHE, "peers-work"),
                        help="ingot's configs, database and exports, kept between runs (default "
                             "~/.cache/ingot/peers-work)")
    parser.add_argument("--ingot", default=os.path.join(REPO, "build", "ingot"))
    parser.add_argument("--cache-dir", default=os.environ.get("INGOT_CACHE_DIR",
                                                              os.path.join(REPO, "build", "kernel_cache")),
                        help="INGOT_CACHE_DIR for ingot's compiles (default $INGOT_CACHE_DIR, else build/kernel_cache)")
    parser.add_argument("--threads", type=int, default=2, help="threads of every runner (default 2)")
    parser.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                        help="fp32 (default), or bf16: OpenVINO's bf16 against ingot's precision: bf16, no ORT")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--min-ms", type=float, default=1000.0, help="timed milliseconds per runner and round at least")
    parser.add_argument("--repeats", type=int, default=10, help="timed runs per runner and round at least")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs per runner and round")
    parser.add_argument("--seed", type=int, default=0, help="seeds the peers' random inputs")
    parser.add_argument("--load-timeout", type=float, default=1800.0,
                        help="seconds a peer may take to load, check and bind a model")
    parser.add_argument("--prepare-only", action="store_true",
                        help="prepare ingot's exports (and load the peers) and stop, e.g. under nice")
    parser.add_argument("--reprepare", action="store_true", help="redo ingot's preparation even when cached")
    args = parser.parse_args()
    global PRECISION
    PRECISION = args.precision
    if PRECISION == "bf16":
        if "ort" in args.runners and "--runners" in sys.argv:
            parser.error("--precision bf16: ONNX Runtime's CPU provider has no bf16 path; leave out ort")
        args.runners = [r for r in args.runners if r != "ort"]
        RUNNER_TITLES["openvino"] = "OpenVINO bf16 ms"
        RUNNER_TITLES["ingot_onnx"] = "ingot bf16 (ONNX file, global) ms"
        RUNNER_TITLES["ingot_builtin"] = "ingot bf16 (built-in, global) ms"
    if args.tuned_db:
        if PRECISION == "bf16":
            parser.error("--tuned-db: the paper configs tune fp32 programs; leave out --precision bf16")
        if not os.path.isfile(args.tuned_db):
            parser.error(f"--tuned-db: no database file at {args.tuned_db}")
        args.tuned_db = os.path.abspath(args.tuned_db)
        if "ingot_tuned" not in args.runners:
            args.runners.append("ingot_tuned")
    elif "ingot_tuned" in args.runners:
        parser.error("the runner ingot_tuned needs --tuned-db")
    ensure_venv()
    if args.threads < 1 or args.rounds < 1 or args.repeats < 1 or args.warmup < 0 or args.min_ms < 0:
        parser.error("--threads, --rounds and --repeats must be at least 1, --warmup and --min-ms at least 0")
    args.onnx_dir = os.path.abspath(os.path.expanduser(args.onnx_dir))
    args.work_dir = os.path.abspath(os.path.expanduser(args.work_dir))
    args.ingot = os.path.abspath(args.ingot)
    args.cache_dir = os.path.abspath(args.cache_dir)
    os.makedirs(args.out_dir, exist_ok=True)
    os.makedirs(args.work_dir, exist_ok=True)

    started = time.time()
    report = {
        "started": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "command": [sys.executable, os.path.abspath(__file__)] + sys.argv[1:],
        "settings": {k: getattr(args, k) for k in ("models", "runners", "threads", "precision", "rounds", "min_ms", "repeats",
                                                   "warmup", "seed", "onnx_dir", "work_dir", "ingot", "cache_dir",
                                                   "tuned_db")},
        "machine": {"cpu": cpu_info(), "hostname": platform.node(), "kernel": platform.release()},
        "versions": versions(args),
        "load_before": list(os.getloadavg()),
        "models": {},
    }
    print(f"run_peers: ORT {report['versions']['onnxruntime']}, OpenVINO {report['versions']['openvino']}, "
          f"{report['versions']['ingot']}; {args.threads} threads; load {report['load_before'][0]:.2f}", flush=True)

    ingot_digest = None
    ingot_error = None
    if any(r.startswith("ingot") for r in args.runners):
        if not os.access(args.ingot, os.X_OK):
            ingot_error = f"no ingot binary at {args.ingot}: build ingot first (scripts/main.sh builds it)"
        else:
            ingot_digest = file_digest(args.ingot)

    # Preparation, model by model.
    runners = {}  # (model, runner) -> PeerRunner | IngotRunner
    for model in args.models:
        entry = {"runners": {r: {} for r in args.runners}}
        report["models"][model] = entry
        onnx_path = os.path.join(args.onnx_dir, f"{model}.onnx")
        entry["onnx"] = onnx_path
        have_onnx = os.path.exists(onnx_path)
        if not have_onnx:
            entry["error"] = (f"{onnx_path} is missing: run {DEFAULT_VENV}/bin/python scripts/peers/export_onnx.py "
                              f"{args.onnx_dir} --models {model}")
            print(f"run_peers: {model}: {entry['error']}", flush=True)
        inputs = check = None
        if have_onnx and ("ort" in args.runners or "openvino" in args.runners):
            try:
                specs = onnx_inputs(onnx_path)
                entry["inputs"] = {n: {"shape": s, "dtype": str(d)} for n, s, d in specs}
                inputs = random_inputs(specs, args.seed)
                check = test_data(onnx_path, specs)
            except Exception as e:  # noqa: BLE001
                entry["error"] = f"reading {onnx_path}: {type(e).__name__}: {e}"
        for runner in args.runners:
            cell = entry["runners"][runner]
            needs_onnx = runner not in ("ingot_builtin", "ingot_tuned")
            if needs_onnx and not have_onnx:
                cell["error"] = f"{onnx_path} is missing"
                continue
            if runner.startswith("ingot") and ingot_error:
                cell["error"] = ingot_error
                continue
            if runner in ("ort", "openvino") and inputs is None:
                cell["error"] = entry.get("error", "no inputs")
                continue
            start = time.time()
            print(f"run_peers: preparing {model} / {runner} ...", flush=True)
            try:
                if runner in ("ort", "openvino"):
                    r = PeerRunner(runner, onnx_path, args.threads, inputs, check, args.load_timeout)
                else:
                    r = IngotRunner(runner.split("_")[1], model, args, ingot_digest, onnx_path)
                runners[(model, runner)] = r
                if args.prepare_only:
                    r.close()  # loaded and checked; not kept while the next models prepare
                cell["info"] = r.info
                cell["prepare_s"] = round(time.time() - start, 1)
            except StepError as e:
                cell["error"] = str(e)
            except Exception as e:  # noqa: BLE001 - one model's failure must not stop the others
                cell["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
            if cell.get("error"):
                print(f"run_peers: {model} / {runner} failed: {cell['error']}", flush=True)
            else:
                print(f"run_peers: {model} / {runner} ready ({cell['prepare_s']} s)", flush=True)

    if args.prepare_only:
        for r in runners.values():
            r.close()
        report["load_after"] = list(os.getloadavg())
        report["elapsed_s"] = round(time.time() - started, 1)
        report["prepare_only"] = True
        write_report(args.out_dir, report)
        print(f"run_peers: prepared; wrote {args.out_dir}/peers.json and peers.md (no timings)")
        return

    # Rounds: every model, every runner once, the runners' order rotating.
    report["load_per_round"] = []
    for round_index in range(args.rounds):
        report["load_per_round"].append(list(os.getloadavg()))
        for model in args.models:
            order = args.runners[round_index % len(args.runners):] + args.runners[:round_index % len(args.runners)]
            for runner in order:
                r = runners.get((model, runner))
                cell = report["models"][model]["runners"][runner]
                if r is None or cell.get("error"):
                    continue
                try:
                    ms, n = r.measure(args.warmup, args.min_ms, args.repeats)
                except StepError as e:
                    cell["error"] = f"round {round_index + 1}: {e}"
                    print(f"run_peers: {model} / {runner} failed: {cell['error']}", flush=True)
                    r.close()
                    continue
                cell.setdefault("rounds_ms", []).append(ms)
                cell.setdefault("runs_per_round", []).append(n)
                print(f"run_peers: round {round_index + 1}/{args.rounds} {model} / {runner}: {fmt_ms(ms)} ms "
                      f"({n} runs)", flush=True)
    for r in runners.values():
        r.close()

    for model, entry in report["models"].items():
        for runner, cell in entry["runners"].items():
            if cell.get("rounds_ms") and not cell.get("error"):
                cell["median_ms"] = statistics.median(cell["rounds_ms"])
                cell["spread_ms"] = [min(cell["rounds_ms"]), max(cell["rounds_ms"])]
        ov = entry["runners"].get("openvino", {})
        compiled_as = str(ov.get("info", {}).get("inference_precision", ""))
        # OpenVINO names the type bf16 in some versions and bfloat16 in others (2026.4).
        compiled_bf16 = "bf16" in compiled_as.lower() or "bfloat16" in compiled_as.lower()
        if PRECISION == "bf16" and ov.get("median_ms") and not compiled_bf16:
            # OpenVINO may compile in f32 despite the hint (a CPU without bf16; and every run before the precision
            # reached the spawned worker): an f32 time is no bf16 peer.
            ov["not_bf16"] = f"OpenVINO compiled it with inference_precision {compiled_as} despite the bf16 hint"
        get = lambda runner: (None if entry["runners"].get(runner, {}).get("not_bf16")  # noqa: E731
                              else entry["runners"].get(runner, {}).get("median_ms"))
        peers = [x for x in (get("ort"), get("openvino")) if x]
        if peers and get("ingot_onnx"):
            entry["best_peer_over_ingot"] = min(peers) / get("ingot_onnx")
        if peers and get("ingot_builtin"):
            entry["best_peer_over_ingot_builtin"] = min(peers) / get("ingot_builtin")
        if peers and get("ingot_tuned"):
            entry["best_peer_over_ingot_tuned"] = min(peers) / get("ingot_tuned")
    report["load_after"] = list(os.getloadavg())
    report["elapsed_s"] = round(time.time() - started, 1)
    write_report(args.out_dir, report)
    print(f"run_peers: wrote {os.path.join(args.out_dir, 'peers.json')} and peers.md\n")
    with open(os.path.join(args.out_dir, "peers.md")) as f:
        print(f.read())


if __name__ == "__main__":
    main()
