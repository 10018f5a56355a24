#!/usr/bin/env bash
# Installs the Debian packages ingot builds with, only those missing; safe to run again.
# The CUDA toolkit is not installed here: it is used from /usr/local/cuda (or CUDA_HOME) when present.
set -euo pipefail

packages=(
  cmake g++ make pkg-config ccache
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libsqlite3-dev sqlite3
  libxgboost-dev xgboost
  libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx python3-numpy
  libomp-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
