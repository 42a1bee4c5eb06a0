#!/usr/bin/env bash
# Installs the Debian packages tilejit builds with (when missing) and configures + builds into
# ./build. Sourced by tools/test.sh and tools/run.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${TILEJIT_BUILD_DIR:-$root/build}"

packages=(cmake ninja-build g++ libfmt-dev libspdlog-dev libgtest-dev libcli11-dev nlohmann-json3-dev libxxhash-dev pkgconf
          python3 python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "tilejit: installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    "${sudo_cmd[@]}" apt-get update
    "${sudo_cmd[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
  fi
fi

if [ ! -x /usr/local/cuda/bin/nvcc ] && [ ! -f /usr/local/cuda/include/nvrtc.h ]; then
  echo "tilejit: the CUDA 13 toolkit is expected in /usr/local/cuda (NVRTC and cuda.h)" >&2
  exit 1
fi

[ "${TILEJIT_SETUP_DEPS_ONLY:-0}" = 1 ] && exit 0  # tools/sanitize.sh configures its own build

cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUDAToolkit_ROOT=/usr/local/cuda
cmake --build "$build_dir" --parallel "$(nproc)"
