#!/usr/bin/env bash
# GEMM tuning session on the GPU machine: an ncu profile of the large bf16 kernel, then sweeps.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export TILEJIT_CACHE_DIR="$root/.cache-gpu"
out="${OUT:-/tmp}"
BF="mma:128x256x32:64x64:4 mma:128x128x32:64x32:4 mma:128x128x32:64x32:3 mma:128x128x64:64x32:3 mma:256x128x32:64x64:3 mma:128x256x64:64x64:3 mma:128x128x32:64x64:4 mma:64x128x32:32x64:4"
TF="mma:128x128x16:64x32:4 mma:128x256x16:64x64:3 mma:128x128x32:64x32:3 mma:256x128x16:64x64:3 mma:128x64x32:64x32:4 mma:64x64x16:32x32:4"
SG="simt:128x128x8:64x32:2 simt:128x128x16:64x32:2 simt:128x256x8:64x64:2 simt:256x128x8:64x64:2 simt:128x64x8:64x32:2"
timeout 120 ncu --clock-control none --kernel-name regex:gemm_mma --launch-skip 1 --launch-count 1 \
  --section SpeedOfLight --section WarpStateStats --section Occupancy \
  build/bin/tilejit gemm --m 4096 --n 4096 --k 4096 --dtype bf16 --layout NN --config mma:128x256x32:64x64:4 --bench --runs 2 \
  > "$out/ncu_bf16.txt" 2>&1
grep -E "Throughput|Stall|Warp Cycles|Achieved Occupancy|Registers|Theoretical Occupancy|Issued|Eligible" "$out/ncu_bf16.txt" | head -40
echo "== bf16 4096^3"; tools/gemm_sweep.sh bf16 exact 4096x4096x4096 NN,NT $BF
echo "== tf32 4096^3"; tools/gemm_sweep.sh f32 tf32 4096x4096x4096 NN,NT $TF
echo "== tf32 1024^3"; tools/gemm_sweep.sh f32 tf32 1024x1024x1024 NN $TF
echo "== f32 4096^3"; tools/gemm_sweep.sh f32 exact 4096x4096x4096 NN,NT $SG
