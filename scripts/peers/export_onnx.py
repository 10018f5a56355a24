#!/usr/bin/env python3
"""Exports the six paper models from PyTorch to ONNX, with random weights (fixed seed, nothing downloaded;
BatchNorm statistics calibrated on random images), batch 1, fp32, static shapes, opset 17, plus an ONNX test data
set holding torch's outputs, so that

    ingot verify OUT_DIR/<model>.onnx --data OUT_DIR/<model>/test_data_set_0

checks ingot's importer and interpreter against torch, and bench/onnx_import_bench.cc times the import.
Run it with the peers venv (scripts/peers/setup_venv.sh), never from CI:

    ~/.cache/ingot/peers-venv/bin/python scripts/peers/export_onnx.py OUT_DIR [--models lstm mmoe ...]

Models and what they output:
  resnext       torchvision resnext101_64x4d, image [1,3,224,224] -> logits [1,1000]
  efficientnet  torchvision efficientnet_b0, image [1,3,224,224] -> logits [1,1000]
  swin          torchvision swin_b (patch 4, window 7), image [1,3,224,224] -> logits [1,1000]
  bert          transformers BertModel(BertConfig()) (bert-base: 12 layers, hidden 768, 12 heads),
                input_ids [1,128] int64 -> last_hidden_state [1,128,768] (the encoder's output; no pooler)
  lstm          torch.nn.LSTM(256, 256, 10 layers), x [100 steps,1,256], zero initial state -> the top layer's
                hidden state at the last step [1,256] (what workloads/lstm.cc computes)
  mmoe          workloads/mmoe.cc's model: x [1,100] -> 8 ReLU experts of 16 units, per task a softmax gate
                over the experts, a ReLU tower of 8 units and a sigmoid output -> task0 [1,1], task1 [1,1]
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np
import onnx
import torch
from onnx import numpy_helper

OPSET = 17
SEED = 0
MODELS = ["resnext", "efficientnet", "swin", "bert", "lstm", "mmoe"]


class LastStepLstm(torch.nn.Module):
    """A stacked LSTM over the whole sequence; returns the top layer's hidden state at the last step."""

    def __init__(self, input_size=256, hidden=256, layers=10):
        super().__init__()
        self.lstm = torch.nn.LSTM(input_size, hidden, layers)

    def forward(self, x):
        output, _ = self.lstm(x)
        return output[-1]


class Mmoe(torch.nn.Module):
    """Multi-gate mixture of experts as workloads/mmoe.cc builds it: the experts are one dense layer of
    experts * units outputs (expert e owns units [e*units, (e+1)*units)), each task mixes them with its gate."""

    def __init__(self, inputs=100, experts=8, units=16, tasks=2, tower=8):
        super().__init__()
        self.experts, self.units = experts, units
        self.expert_dense = torch.nn.Linear(inputs, experts * units)
        self.gates = torch.nn.ModuleList(torch.nn.Linear(inputs, experts) for _ in range(tasks))
        self.tower_hidden = torch.nn.ModuleList(torch.nn.Linear(units, tower) for _ in range(tasks))
        self.tower_out = torch.nn.ModuleList(torch.nn.Linear(tower, 1) for _ in range(tasks))

    def forward(self, x):
        experts = torch.relu(self.expert_dense(x)).reshape(x.shape[0], self.experts, self.units)
        outputs = []
        for gate, hidden, out in zip(self.gates, self.tower_hidden, self.tower_out):
            weights = torch.softmax(gate(x), dim=-1)
            mix = torch.matmul(weights.unsqueeze(1), experts).squeeze(1)
            outputs.append(torch.sigmoid(out(torch.relu(hidden(mix)))))
        return tuple(outputs)


class BertEncoder(torch.nn.Module):
    """BertModel without the pooler; returns last_hidden_state (every token's final hidden state)."""

    def __init__(self):
        super().__init__()
        from transformers import BertConfig, BertModel

        # Eager attention: plain MatMul/Softmax in the graph rather than an SDPA kernel call.
        config = BertConfig(attn_implementation="eager")
        self.bert = BertModel(config, add_pooling_layer=False)

    def forward(self, input_ids):
        return self.bert(input_ids=input_ids, return_dict=True).last_hidden_state


def build(name):
    """(module, example inputs, input names, output names)."""
    import torchvision

    generator = torch.Generator().manual_seed(SEED + 1)
    image = torch.randn(1, 3, 224, 224, generator=generator)
    if name == "resnext":
        return torchvision.models.resnext101_64x4d(weights=None), (image,), ["image"], ["logits"]
    if name == "efficientnet":
        return torchvision.models.efficientnet_b0(weights=None), (image,), ["image"], ["logits"]
    if name == "swin":
        return torchvision.models.swin_b(weights=None), (image,), ["image"], ["logits"]
    if name == "bert":
        ids = torch.randint(0, 30522, (1, 128), generator=generator, dtype=torch.int64)
        return BertEncoder(), (ids,), ["input_ids"], ["last_hidden_state"]
    if name == "lstm":
        return LastStepLstm(), (torch.randn(100, 1, 256, generator=generator),), ["x"], ["h_last"]
    if name == "mmoe":
        return Mmoe(), (torch.randn(1, 100, generator=generator),), ["x"], ["task0", "task1"]
    raise ValueError(f"unknown model {name}; choose from {', '.join(MODELS)}")


def calibrate_batch_norm(module, example):
    """Sets every BatchNorm's running statistics to those of random inputs like `example`. Freshly initialised
    statistics (mean 0, variance 1) leave activations unnormalised: EfficientNet-B0's logits shrink to ~1e-14,
    which ONNX's atol of 1e-7 would pass whatever ingot computed. Only the BatchNorms run in training mode."""
    norms = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    generator = torch.Generator().manual_seed(SEED + 2)
    module.eval()
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # a plain average over the calibration batches
        m.train()
    with torch.no_grad():
        for _ in range(2):
            module(torch.randn((4,) + tuple(example.shape[1:]), generator=generator))
    module.eval()


def export(module, inputs, path, input_names, output_names):
    """The TorchScript-based exporter (dynamo=False) where torch still has it: it constant-folds the shape
    arithmetic and emits opset 17 directly. Otherwise the dynamo exporter. Returns the exporter's name."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, inputs, path, opset_version=OPSET, dynamo=False, do_constant_folding=True,
                              input_names=input_names, output_names=output_names)
        return "torchscript"
    except Exception as e:  # noqa: BLE001 - any failure of the legacy path falls back to dynamo
        print(f"  legacy exporter failed ({type(e).__name__}: {str(e).splitlines()[0][:200]}); trying dynamo",
              file=sys.stderr)
    program = torch.onnx.export(module, inputs, opset_version=OPSET, dynamo=True, input_names=input_names,
                                output_names=output_names, external_data=False, optimize=True)
    program.save(path)
    return "dynamo"


def write_test_data(directory, inputs, outputs):
    os.makedirs(directory, exist_ok=True)
    for i, t in enumerate(inputs):
        with open(os.path.join(directory, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t.detach().numpy()).SerializeToString())
    for i, t in enumerate(outputs):
        with open(os.path.join(directory, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(t.detach().numpy()).SerializeToString())


def export_model(name, out_dir):
    torch.manual_seed(SEED)
    module, inputs, input_names, output_names = build(name)
    calibrate_batch_norm(module, inputs[0])
    module.eval()
    with torch.no_grad():
        outputs = module(*inputs)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    path = os.path.join(out_dir, f"{name}.onnx")
    start = time.time()
    with torch.no_grad():
        exporter = export(module, inputs, path, input_names, output_names)
    model = onnx.load(path)
    onnx.checker.check_model(model)
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    ops = sorted({n.op_type for n in model.graph.node})
    write_test_data(os.path.join(out_dir, name, "test_data_set_0"), inputs, outputs)
    print(f"{name}: {path} ({os.path.getsize(path) / 1e6:.1f} MB, {exporter} exporter, opset {opset}, "
          f"{len(model.graph.node)} nodes, {time.time() - start:.1f} s)\n  ops: {' '.join(ops)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=MODELS)
    args = parser.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    print(f"torch {torch.__version__}, onnx {onnx.__version__}, numpy {np.__version__}")
    for name in args.models:
        export_model(name, args.out_dir)


if __name__ == "__main__":
    main()
