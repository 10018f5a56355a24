#!/usr/bin/env bash
# Creates the Python venv used only to export the paper models to ONNX with PyTorch (scripts/peers/export_onnx.py)
# and to run the peer frameworks ONNX Runtime and OpenVINO next to ingot (scripts/peers/run_peers.py). Never needed
# to build or test ingot; not part of CI or scripts/setup.sh.
# Usage: scripts/peers/setup_venv.sh   (venv at $INGOT_PEERS_VENV, default $HOME/.cache/ingot/peers-venv)
# Safe to run again: it only installs what is missing or at another version.
set -euo pipefail

venv="${INGOT_PEERS_VENV:-$HOME/.cache/ingot/peers-venv}"
python="${INGOT_PEERS_PYTHON:-python3}"

# Pinned so that exports (operator choice, opset) and peer timings stay reproducible. PyPI's torch wheel is the
# default (CUDA) build; download.pytorch.org's CPU wheels are not required. onnxruntime (not onnxruntime-gpu) and
# openvino are PyPI's CPU wheels.
pins=(
  torch==2.15.0
  torchvision==0.29.2
  transformers==5.23.0
  onnx==1.23.2
  onnxscript==0.7.2
  numpy==2.4.6
  onnxruntime==1.32.0
  openvino==2026.4.1
)

if [ ! -x "$venv/bin/python" ]; then
  echo "peers: creating venv $venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
fi

# pip's own check is slow for torch; compare installed versions first so a second run is instant.
missing=()
for pin in "${pins[@]}"; do
  name="${pin%%==*}"
  want="${pin##*==}"
  have="$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || true)"
  [ "$have" = "$want" ] || missing+=("$pin")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "peers: venv $venv is up to date"
  exit 0
fi

echo "peers: installing ${missing[*]}"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "${pins[@]}"
echo "peers: venv ready; use $venv/bin/python scripts/peers/export_onnx.py OUT_DIR, then scripts/peers/run_peers.py"
