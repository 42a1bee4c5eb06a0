#!/usr/bin/env bash
# GEMM tuning session on the GPU machine: the mma.sync ceiling, the GEMM correctness tests, then
# configuration sweeps beside cuBLAS (mma.sync, SIMT, and wgmma candidates in every layout). Kernels come from .cache-gpu when it was filled beforehand with
#   PRECOMPILE=1 tools/gpu_sweep_session.sh     (on the development machine)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export TILEJIT_CACHE_DIR="$root/.cache-gpu"
BF="mma:128x256x32:64x64:4 mma:128x256x32:64x64:5 mma:128x256x64:64x64:3 mma:128x256x64:64x64:4 mma:256x128x32:64x64:4 mma:256x128x64:64x64:3"
TF="mma:128x256x32:64x64:3 mma:128x256x16:64x64:4 mma:128x256x32:64x64:2 mma:128x128x32:64x64:3 mma:256x128x32:64x64:3 mma:256x128x16:64x64:4"
TF1K="mma:64x128x32:32x64:4 mma:64x128x32:32x64:3 mma:64x128x16:32x64:4"
SG="simt:256x128x16:64x64:2 simt:128x256x16:64x64:2 simt:256x128x32:64x64:2 simt:128x128x16:64x64:2"
WG="wgmma:128x256x64:64x256:4 wgmma:256x128x64:128x128:3 wgmma:128x128x64:64x128:4 wgmma:64x128x64:64x128:8"
if [ "${PRECOMPILE:-0}" = 1 ]; then
  export PRECOMPILE
  tools/gemm_sweep.sh bf16 exact 4096x4096x4096 NN,NT $BF
  tools/gemm_sweep.sh f32 tf32 4096x4096x4096 NN,NT $TF
  tools/gemm_sweep.sh f32 tf32 1024x1024x1024 NN $TF1K
  tools/gemm_sweep.sh f32 exact 4096x4096x4096 NN,NT $SG
  tools/gemm_sweep.sh bf16 exact 4096x4096x4096,12288x4096x4096 NN,NT,TN,TT $WG
  exit 0
fi
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
[ -x build/mma_peak ] && build/mma_peak
if [ -n "${SASS_CONFIGS:-}" ]; then
  # Opcode histogram of each kernel's SASS (cuobjdump exists on the GPU machine only).
  for spec in $SASS_CONFIGS; do  # DTYPE/MATH/LAYOUT/CONFIG
    IFS=/ read -r dt math lay cfg <<<"$spec"
    d="${OUT:-/tmp}/sass/$dt-$math-$lay-${cfg//:/_}"
    mkdir -p "$d"
    TILEJIT_CACHE=off TILEJIT_DUMP_DIR="$d" build/bin/tilejit compile gemm --dtype "$dt" --math "$math" --layout "$lay" \
      --config "$cfg" --m 4096 --n 4096 --k 4096 --arch sm_90 >/dev/null
    cuobjdump --dump-sass "$d"/*.cubin > "$d/kernel.sass"
    echo "== SASS $spec: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' "$d/kernel.sass") instructions"
    grep -oE '^\s+/\*[0-9a-f]{4}\*/\s+(@!?U?P[0-9T] )?[A-Z0-9_.]+' "$d/kernel.sass" | awk '{print $NF}' | sed 's/\..*//' |
      sort | uniq -c | sort -rn | head -14 | tr '\n' ' '; echo
  done
fi
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  ctest --test-dir build -R GemmGpu -j 16 --output-on-failure > "${OUT:-/tmp}/gemm_tests.log" 2>&1
  echo "gemm tests rc=$?"; grep -E "tests passed|Failed|FAILED" "${OUT:-/tmp}/gemm_tests.log" | head -20
fi
echo "== bf16 4096^3"; tools/gemm_sweep.sh bf16 exact 4096x4096x4096 NN,NT $BF
echo "== tf32 4096^3"; tools/gemm_sweep.sh f32 tf32 4096x4096x4096 NN,NT $TF
echo "== tf32 1024^3"; tools/gemm_sweep.sh f32 tf32 1024x1024x1024 NN $TF1K
echo "== f32 4096^3"; tools/gemm_sweep.sh f32 exact 4096x4096x4096 NN,NT $SG
echo "== bf16 wgmma"; tools/gemm_sweep.sh bf16 exact 4096x4096x4096,12288x4096x4096 NN,NT,TN,TT $WG
if [ "${PUZZLE:-0}" = 1 ]; then echo "== puzzle33"; build/bin/tilejit bench puzzle33 --runs 20; fi
