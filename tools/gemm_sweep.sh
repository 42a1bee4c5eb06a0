#!/usr/bin/env bash
# GEMM configuration sweep beside cuBLAS on the GPU machine, one line per (config, layout):
#   tools/gemm_sweep.sh DTYPE MATH SHAPES LAYOUTS CONFIG...
# With PRECOMPILE=1 (on the development machine) it only compiles the kernels into TILEJIT_CACHE_DIR.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/build/bin/tilejit"
dtype=$1 math=$2 shapes=$3 layouts=$4
shift 4
for cfg in "$@"; do
  if [ "${PRECOMPILE:-0}" = 1 ]; then
    for lay in ${layouts//,/ }; do
      for s in ${shapes//,/ }; do
        IFS=x read -r m n k <<<"$s"
        # The GPU machine compiles mma/simt kernels for sm_90 and wgmma kernels for sm_90a: same keys here.
        arch=sm_90; [ "${cfg%%:*}" = wgmma ] && arch=sm_90a
        "$bin" compile gemm --dtype "$dtype" --math "$math" --layout "$lay" --config "$cfg" --m "$m" --n "$n" --k "$k" --arch $arch >/dev/null &
      done
    done
    wait
  else
    "$bin" bench gemm --dtype "$dtype" --math "$math" --shapes "$shapes" --layout "$layouts" --config "$cfg" --runs 10 | tail -n +3
  fi
done
