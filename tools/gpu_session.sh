#!/usr/bin/env bash
# Runs on the GPU machine over a build carried from the development machine (see ../shared/device.md):
#   tools/gpu_session.sh STEP...   (tests memcheck memcheck-gemm gemm-tests bench-elementwise bench-launch
#                                   bench-cache bench-compile32 puzzle33 bench-gemm bench-mma wgmma-compile
#                                   gemm-issues verify-sw-col-a sweep-shapes
#                                   ab-tf32-rounding sweep-1000 profile-decode-tn sweep-decode
#                                   sweep-decode-col-a ab-configs next-decode-kh next-large
#                                   profile-misses i12-check i12-large:DT:METHOD i12-small:DT:METHOD
#                                   i12-tf32 i12-pdl i12-pdl-variants i12-profile i12-synced i13 i14-check i14-bench i14-fast i14-order
#                                   i15-first i15-perf i15-second i15-more i15-blocks i15-blocks2 i15-final i15-out8
#                                   i16-one i16-cold i16-sweep i16-waves i16-m64
#                                   i16-m64-pick i14-inside i14-verify i14-ab
#                                   i12-small-tune i14-memcheck i16-heldout i16-c2 i18-runtimes
#                                   i14-ppc2 i15-stages i15-profile i12-wave-probe i12-align i12-lsu i12-lsu-bench i12-packb i12-offsectors i12-offsectors2 i12-partial-waves i14-epi i12-trigger
#                                   i12-tf32ra i12-suite i12-verify i12-decode-trigger i12-last i12-c4 i12-c4b i12-sweep i14-pp
#                                   i14-prefetch i15-regs i14-power i15-stall i15-desc i15-cursor i15-cursor2 i15-close i14-pp2 i14-pp3 i15-halves i15-turns i15-c2prof i15-ahead i14-pprule i15-mainloop2
#                                   i14-probe i15-split i12-small-sweep i24-final i15-three i24-memcheck i24-staging
#                                   i25-vectors i25-vectors-bench i25-fp8-narrow i27-checks i27-stream i27-one i28-checks i28-bench i28-stream i28-skew i29-first i29-lean i29-last i29-headline i31-f16 i32-bs-lean i32-bs-profile i32-epi-parts i33-bs-ab i33-rotate i33-bs-staged i33-bs-offset i34-first i34-ffma i34-go i34-last i34-final i34-c2
#                                   i35-tma i35-l2 i35-l2rule i35-go i35-second i36-box i36-cfg i36-pack i36-go i36-second i37-short
#                                   i38-gemv i38-gemv-prof i38-go)
# Each step's full log goes to $OUT/<step>.log; the console gets each step's tail.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-/tmp/tilejit-out}"
mkdir -p "$out"
bin="${TILEJIT_BIN_DIR:-$root/build/bin}"  # another build's binaries for a same-session A/B
export TILEJIT_CACHE_DIR="${TILEJIT_CACHE_DIR:-/tmp/tilejit-gpu-cache}"
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  pwd: $root"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader

# The carried binary embeds kernels_templates/ as it was when it was built: a tree changed since
# (an experiment applied, built, then reverted) would have every "main" run use other templates
# (2026-12-07 13:57Z: it did). Kernel keys hash the template closure, so the embedded templates and
# the tree's give one key only where they are the same.
template_key() { "$bin/tilejit" compile gemm --m 64 --n 64 --k 64 --dtype e4m3 --block-scales --arch sm_90a 2>/dev/null | awk '$1 == "key" {print $2}'; }
embedded_key=$(TILEJIT_TEMPLATE_DIR= template_key)
tree_key=$(TILEJIT_TEMPLATE_DIR="$root/kernels_templates" template_key)
if [ "$embedded_key" != "$tree_key" ]; then
  echo "STALE BUILD: the binary's embedded templates ($embedded_key) are not the tree's ($tree_key); rebuild before carrying"
  exit 3
fi

# Whether the lent card is an H200 (the card the issues' targets name); steps pick what to run by it.
on_h200() { nvidia-smi -L 2>/dev/null | grep -q H200; }

step() {
  local name="$1" lines="$2"
  shift 2
  echo "== $name: $*"
  local t0=$SECONDS
  "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "== $name: rc=$rc in $((SECONDS - t0)) s"
  tail -n "$lines" "$out/$name.log"
}

# ncu of one launch (after 3) of a gemm_wgmma kernel with warp-state samples per SASS instruction:
# $out/NAME.log (details page) and $out/NAME.sass.csv (source page).
src_prof() {
  local name="$1"
  shift
  echo "== $name: $*"
  ncu --clock-control none -k regex:gemm_wgmma -s 3 -c 1 --section SpeedOfLight --section WarpStateStats \
    --section SourceCounters -f -o "$out/$name" "$@" >"$out/$name.log" 2>&1
  ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/$name.sass.csv" 2>>"$out/$name.log" ||
    ncu -i "$out/$name.ncu-rep" --page source --csv >"$out/$name.sass.csv" 2>>"$out/$name.log"
  ncu -i "$out/$name.ncu-rep" --page details >>"$out/$name.log" 2>&1
  rm -f "$out/$name.ncu-rep"
  grep -E "Duration|Compute \(SM\) Throughput|Executed Ipc|Warp Cycles Per Issued" "$out/$name.log" | head -8
}

# Sets run to the tilejit command with templates VARIANT: the embedded ones for "new", else those in
# build/variants/VARIANT.
variant_cli() {
  case "$1" in
    new) run=("$bin/tilejit") ;;
    # docs/experiments/gemv_bulk.diff (templates only): kind gemv's K-major B through bulk copies.
    gvbulk) run=(env TILEJIT_TEMPLATE_DIR="$root/build/variants/gvbulk" "$bin/tilejit") ;;
    ffma*) run=(env TILEJIT_INTERLEAVE_FFMA="${1#ffma}" "$bin/tilejit") ;;  # docs/experiments/ffma_interleave.diff built
    # docs/experiments/tma_element_size.diff built: TMA's L2 promotion (l2none / l264 / l2128 / l2256), or
    # bf16 moved as 1-, 4- or 8-byte integers with the template variant i35-tma makes (tma_e1 / 4 / 8).
    l2*) run=(env TILEJIT_EXP_TMA_L2="${1#l2}" "$bin/tilejit") ;;
    tma_e*) run=(env TILEJIT_EXP_TMA_ELEM="${1#tma_e}" TILEJIT_TEMPLATE_DIR="$root/build/variants/$1" "$bin/tilejit") ;;
    # docs/experiments/tma_box_rows.diff built: K-major operands in TMA boxes of at most N rows (boxN).
    box*) run=(env TILEJIT_EXP_BOX_ROWS="${1#box}" "$bin/tilejit") ;;
    # docs/experiments/in_kernel_pack.diff built: operands packed by the GEMM kernel itself, pk<operands>
    # or pk<operands>_<K chunk> (pkab, pkb, pkab_256).
    # A trailing c (pkabc): launched cooperatively (TILEJIT_EXP_PACK_COOP=1).
    pk*) local pk="${1#pk}" coop=0
      [ "${pk%c}" != "$pk" ] && coop=1 && pk="${pk%c}"
      run=(env TILEJIT_EXP_PACK_IN_KERNEL="${pk%%_*}" TILEJIT_EXP_PACK_CHUNK="$([ "${pk#*_}" != "$pk" ] && echo "${pk#*_}")" \
        TILEJIT_EXP_PACK_COOP=$coop "$bin/tilejit") ;;
    *) run=(env TILEJIT_TEMPLATE_DIR="$root/build/variants/$1" "$bin/tilejit") ;;
  esac
}

# build/variants/NAME: the embedded templates with sed expressions applied to gemm_wgmma.cuh; prints
# how many of its lines differ from the embedded file (0: an expression that matched nothing).
mk_variant() {
  local name="$1"
  shift
  rm -rf "$root/build/variants/$name" && mkdir -p "$root/build/variants" && cp -r "$root/kernels_templates" "$root/build/variants/$name"
  for e in "$@"; do sed -i "$e" "$root/build/variants/$name/gemm_wgmma.cuh"; done
  echo "variant $name: $(diff "$root/kernels_templates/gemm_wgmma.cuh" "$root/build/variants/$name/gemm_wgmma.cuh" | grep -c '^>') lines changed"
}

# `bench gemm ARGS... --method METHOD` with each template or experiment VARIANT (see variant_cli; "new":
# the build as it is) in turn, once per METHOD in the order given: logs $out/PREFIX_NN_VARIANT_METHOD.log.
#   bench_ab PREFIX "METHOD..." "VARIANT..." TIMEOUT ARGS...
bench_ab() {
  local prefix="$1" methods="$2" variants="$3" limit="$4" m v i=0
  shift 4
  for m in $methods; do
    for v in $variants; do
      i=$((i + 1))
      variant_cli "$v"
      step "${prefix}_$(printf %02d $i)_${v}_$m" 0 timeout "$limit" "${run[@]}" bench gemm "$@" --method $m
    done
  done
}
# Block-scaled e4m3 NT at 4096^3, 6144^3 and 8192^3 with each VARIANT, once per METHOD, beside
# cuBLASLt's per-tensor GEMM: logs $out/PREFIX_bench_NN_VARIANT_METHOD.log.
#   block_scale_ab PREFIX "METHOD..." VARIANT...
block_scale_ab() {
  local prefix="$1" methods="$2"
  shift 2
  bench_ab "${prefix}_bench" "$methods" "$*" 40 --dtype e4m3 --block-scales --layout NT \
    --shapes 4096x4096x4096,6144x6144x6144,8192x8192x8192 --runs 3 --group-ms 20 --rounds 2
}
# One line of every bench row in $out/PREFIX*.log: log name after PREFIX and shape, layout, tilejit
# TFLOP/s, ratio, configuration; `;`-separated, at most LIMIT bytes (default 6000).
#   bench_rows PREFIX [LIMIT]
bench_rows() {
  grep -H -E "^[0-9]+x[0-9]+x[0-9]+ " "$out"/"$1"*.log | sed "s/.*$1//" | awk '{print $1, $2, $3, $5, $8}' | tr '\n' ';' | head -c "${2:-6000}"
}
block_scale_ab_summary() { bench_rows "$1_bench_"; }

# build/variants/NAME: the embedded templates with the experiment diff DIFF applied (its paths
# a/kernels_templates/...; a change to tools/ in it is left out), unless carried.
mk_diff_variant() {
  local name="$1" diff="$2"
  [ -d "$root/build/variants/$name" ] && return
  mkdir -p "$root/build/variants" && cp -r "$root/kernels_templates" "$root/build/variants/$name" &&
    awk '/^diff --git/{keep = ($3 ~ /^a\/kernels_templates\//)} keep' "$root/$diff" |
    patch -s -d "$root/build/variants/$name" -p2 || echo "$diff did not apply"
}

# build/variants/skew2 (the templates with docs/experiments/skewed_tail.diff applied), skew0 / skew4
# (the same with kSkewBlocksWanted 0 / 4) and halves (below), unless carried.
mk_skew_variants() {
  [ -d "$root/build/variants/skew2" ] && return
  mk_diff_variant skew2 docs/experiments/skewed_tail.diff
  local n
  for n in 0 4; do
    rm -rf "$root/build/variants/skew$n" && cp -r "$root/build/variants/skew2" "$root/build/variants/skew$n"
    sed -i "s/enum : int { kSkewBlocksWanted = 2 };/enum : int { kSkewBlocksWanted = $n };/" "$root/build/variants/skew$n/gemm_wgmma.cuh"
  done
  # halves: the main loop in column halves, no tile skewed (what the halves alone cost).
  rm -rf "$root/build/variants/halves" && cp -r "$root/build/variants/skew2" "$root/build/variants/halves"
  sed -i 's/const bool skew = kSkewBlocks > 0 \&\& /const bool skew = false \&\& kSkewBlocks > 0 \&\& /' "$root/build/variants/halves/gemm_wgmma.cuh"
}

# Issue 12's large grid, step NAME (at most SECONDS): DTYPE at 4096^3 to 12288x4096x4096 in the four
# A/B layouts with D row- and column-major, METHOD (graph or stream), beside cuBLAS.
large_grid() {
  step "$1" 0 timeout "$2" "$bin/tilejit" bench gemm --dtype "$3" --method "$4" --layout NN,NT,TN,TT,NN:c,NT:c,TN:c,TT:c \
    --shapes 4096x4096x4096,6144x6144x6144,8192x8192x8192,12288x4096x4096 --runs 3 --group-ms 30 --rounds 3
}

# The float64 checks of every path that stages epilogue operands (i25-vectors, i27-checks).
staging_specs=(
  "4096 4096 4096 NT bf16 default d=gelu(acc+bias[n])"
  "1001 777 515 NN bf16 default d=gelu(acc+bias[n])*scale[m]+residual"
  "1001 777 515 TN f16 wgmma:128x128x64:128x128:5:pp d=gelu(acc+bias[n])+residual"
  "777 1001 2048 NT bf16 wgmma:128x128x64:64x128:4:k2 d=acc+bias[n]"
  "520 700 4096 TT bf16 wgmma:128x256x64:64x256:4:t3 d=relu(acc+bias[n])*scale[m]"
  "1003 515 777 NT bf16 wgmma:192x128x64:64x128:4 d=gelu(acc+bias[n])"
  "1000 1000 1000 NT e4m3 default d=gelu(acc+bias[n])"
  "2048 2048 1024 NN:c bf16 default d=acc*scale[m]+bias[n]"
  "1024 768 515 NT bf16 default d=acc*scale[m]+residual"
  "1024 768 512 TN f16 wgmma:128x128x64:128x128:5:pp d=gelu(acc+bias[n])+residual"
  "1024 1024 512 NN:c bf16 default d=gelu(acc+bias[n])*scale[m]+residual"
  "1001 777 515 NT bf16 default d=acc+residual"
  "1024 768 512 TN bf16 default d=acc+beta*c"
  "1024 768 512 NN:c f16 wgmma:128x128x64:128x128:5:pp d=relu(acc+beta*c)"
)

# The skewed tail's float64 checks (each run with build/variants/skew2's templates).
skew_specs=(
  "4096 4096 4096 NT bf16 default d=gelu(acc+bias[n])"
  "4096 4096 4096 NN bf16 default none"
  "2048 4096 1024 TN f16 default d=gelu(acc+bias[n])*scale[m]+residual"
  "1001 777 515 TT bf16 wgmma:128x256x64:64x256:4 d=acc*scale[m]+residual"
  "4096 4096 192 NT bf16 wgmma:128x256x64:64x256:4 d=acc+residual"
  "520 700 4096 NT bf16 wgmma:128x256x64:64x256:4:t3 d=gelu(acc+bias[n])"
  "4096 4096 1024 NN:c bf16 wgmma:128x256x64:64x256:4:sw d=acc*s1[m]+s2[m]"
  "3000 4096 2048 TN bf16 default d=gelu(acc+bias[n])+residual"
  "4096 4096 1024 NT e4m3 default d=gelu(acc+bias[n])"
  "2048 2048 2048 NN f32 default none"
)

# The twenty-ninth session's call on the skewed tail (i29-first, i29-lean, i29-last), sized by its
# arguments: skew_call SUITE_SECONDS SUITE_REGEX BENCH_SECONDS SANITIZERS VARIANT...
#   the GPU suite (only the tests matching SUITE_REGEX if it is not empty) in the background, beside
#   the skewed tail's float64 checks (and, with SANITIZERS all, the staging paths' on main); then each
#   VARIANT in turn (new: main; see mk_skew_variants), graph, plain, GELU (erf), GELU (tanh form: how
#   much of the GELU's cost is its instructions) and scale + residual; then SANITIZERS (none,
#   memcheck, all: memcheck and racecheck) on skew2. Logs land in i29_checks.txt, i29_bench.txt (after
#   each run, so that a call cut short keeps them) and i29_sanitizers.txt.
skew_call() {
  local suite_s="$1" regex="$2" bench_s="$3" sanitizers="$4" filter=() v i=0
  shift 4
  mk_skew_variants
  [ -n "$regex" ] && filter=(-R "$regex")
  timeout "$suite_s" ctest --test-dir "$root/build" -L gpu "${filter[@]}" -j 16 --timeout $((suite_s - 20)) --output-on-failure \
    >"$out/s29_suite.log" 2>&1 &
  local suite_pid=$!
  (
    export TILEJIT_TEMPLATE_DIR="$root/build/variants/skew2"
    check_specs s29_skchecks "${skew_specs[@]}"
    timeout 30 "$bin/tilejit" gemm --m 2048 --n 4096 --k 512 --layout NT --dtype bf16 --out-dtype f32 -e 'd = acc + residual' --check 2>&1 |
      grep -E "config|check" | tr '\n' ' '
    echo " <- f32 D"
  )
  [ "$sanitizers" = all ] && check_specs s29_checks "${staging_specs[@]}"
  wait_for_step "$suite_pid" s29_suite
  grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/s29_suite.log" | head -20
  gather_logs s29_ i29_checks.txt
  local o="--dtype bf16 --method graph --layout NT,NN --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 20 --rounds 2"
  for v in "$@"; do
    variant_cli "$v"
    i=$((i + 1))
    step "s29_bench_${i}_$v" 0 timeout "$bench_s" "${run[@]}" bench gemm $o -e none -e 'd = gelu(acc + bias[n])' \
      -e 'd = gelu_tanh(acc + bias[n])' -e 'd = acc * scale[m] + residual'
    gather_logs s29_bench_ i29_bench.txt
  done
  [ "$sanitizers" = none ] && return
  step s29_memcheck 3 env TILEJIT_TEMPLATE_DIR="$root/build/variants/skew2" timeout 60 compute-sanitizer --tool memcheck \
    "$bin/tilejit" gemm --m 4096 --n 2048 --k 512 --layout NT --dtype bf16 -e 'd = gelu(acc + bias[n]) + residual' --check
  [ "$sanitizers" = all ] && step s29_racecheck 3 env TILEJIT_TEMPLATE_DIR="$root/build/variants/skew2" timeout 60 \
    compute-sanitizer --tool racecheck "$bin/tilejit" gemm --m 4096 --n 2048 --k 192 --layout NT --dtype bf16 -e 'd = acc * scale[m] + residual' --check
  gather_logs s29_ i29_sanitizers.txt
}

# Waits for a step started in the background (PID) and prints its exit status and its log's tail.
wait_for_step() {
  wait "$1"
  echo "== $2: rc=$?"
  tail -n 12 "$out/$2.log"
}

# Appends the logs $out/PREFIX*.log, each under a "#### name" line, to $out/FILE and removes them.
gather_logs() {
  local f
  for f in "$out/$1"*.log; do echo "#### $(basename "$f" .log)"; cat "$f"; done >>"$out/$2" && rm -f "$out/$1"*.log
}

# `tilejit gemm --check` (float64) of each spec "M N K LAYOUT DTYPE CONFIG BODY" (CONFIG `default`: the
# heuristic; BODY `none`: no epilogue), one line each into $out/NAME.log, which is then printed.
#   check_specs [--variant VARIANT] NAME SPEC...   (VARIANT as for variant_cli; default the build as it is)
check_specs() {
  local run=("$bin/tilejit")
  [ "$1" = --variant ] && { variant_cli "$2"; shift 2; }
  local name="$1" spec m n k lay dt cfg body
  shift
  for spec in "$@"; do
    read -r m n k lay dt cfg body <<<"$spec"
    local cf=() ep=()
    [ "$cfg" != default ] && cf=(-c "$cfg")
    [ "$body" != none ] && ep=(-e "$body")
    timeout 120 "${run[@]}" gemm --m "$m" --n "$n" --k "$k" --layout "$lay" --dtype "$dt" "${cf[@]}" "${ep[@]}" --check 2>&1 |
      grep -E "config|check|rror" | tr '\n' ' '
    echo " <- $spec"
  done >"$out/$name.log" 2>&1
  cat "$out/$name.log"
}

# Issue 16: `tilejit gemm --check` (float64) of each shape in each layout, bf16 and f16, one line
# each in $out/NAME.log; prints the count of PASS and FAIL and the lines matching SHOW.
check_shapes() {
  local name="$1" shapes="$2" layouts="$3" show="$4" shp lay dt wm wn wk
  for shp in $shapes; do
    IFS=x read -r wm wn wk <<<"$shp"
    for lay in $layouts; do
      for dt in bf16 f16; do
        "$bin/tilejit" gemm --m "$wm" --n "$wn" --k "$wk" --layout "$lay" --dtype "$dt" --check 2>&1 |
          grep -E "config|check" | tr '\n' ' ' | sed "s/^/$shp $lay $dt: /"
        echo
      done
    done
  done >"$out/$name.log" 2>&1
  echo "$name: $(grep -c PASS "$out/$name.log") PASS, $(grep -c FAIL "$out/$name.log") FAIL"
  grep -E "FAIL|rror" "$out/$name.log" | head -5
  grep -E "^($show)" "$out/$name.log"
}

# Issue 14: bias + GELU on small f16 shapes beside cuBLASLt's fused form, and the CLI's own check of a
# body with two outputs on odd sizes.
epilogue_small_shapes_and_check() {
  step epilogue_f16_small 12 "$bin/tilejit" bench gemm --dtype f16 --method stream --layout NT \
    --shapes 16x8192x8192,1000x1000x1000,4095x4095x4095 -e none -e 'd = gelu(acc + bias[n])' --runs 3 --group-ms 30 --rounds 3
  step epilogue_cli_check 3 "$bin/tilejit" gemm --m 1001 --n 777 --k 515 --layout TN --beta 0.5 \
    -e 'd = silu(acc + bias[n]) * scale[m] + residual + beta * c; pre = acc * s' --scalar s=0.25 --check
}

# Issue 14: what each part of an epilogue costs against tilejit's plain GEMM in the same rounds (bf16
# 4096^3 and 8192^3, D row- and column-major), stream; then graph replay of the bodies given.
epilogue_parts() {
  step epilogue_parts_stream 40 "$bin/tilejit" bench gemm --dtype bf16 --method stream --layout NT,NN:c \
    --shapes 4096x4096x4096,8192x8192x8192 -e none -e 'd = acc + bias[n]' -e 'd = gelu(acc + bias[n])' \
    -e 'd = gelu_tanh(acc + bias[n])' -e 'd = acc * scale[m] + residual' -e 'd = acc + residual' --runs 3 --group-ms 30 \
    --rounds 3 --out "$out/epilogue_parts_stream.csv"
  step epilogue_graph 20 "$bin/tilejit" bench gemm --dtype bf16 --method graph --layout NT,NN:c \
    --shapes 4096x4096x4096,8192x8192x8192 -e none "$@" --runs 3 --group-ms 30 --rounds 3 --out "$out/epilogue_graph.csv"
}

# Issue 14: each template variant in build/variants (a copy of kernels_templates with one thing
# changed): the epilogue GPU tests, then bodies beside its own plain GEMM in the same rounds.
epilogue_variants() {
  local layouts="$1" v
  for v in "$root"/build/variants/*/; do
    [ -d "$v" ] || continue
    v=$(basename "$v")
    step "variant_${v}_tests" 2 env TILEJIT_TEMPLATE_DIR="$root/build/variants/$v" "$bin/tilejit_gpu_tests" --gtest_brief=1 \
      --gtest_filter='GemmEpilogueGpu.*'
    step "variant_${v}_bench" 26 env TILEJIT_TEMPLATE_DIR="$root/build/variants/$v" "$bin/tilejit" bench gemm --dtype bf16 \
      --method stream --layout "$layouts" --shapes 4096x4096x4096,8192x8192x8192 -e none -e 'd = acc + bias[n]' \
      -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual' -e 'd = acc + residual' --runs 3 --group-ms 30 --rounds 3
  done
}

# Issue 15: e4m3 -> bf16 at 4096^3 and 8192^3 (A row-major, B column-major: the layout cuBLASLt's
# 8-bit matmul takes), the heuristic's pick and alternatives, beside cuBLASLt in the same rounds.
fp8_large_configs() {
  step fp8_large 24 "$bin/tilejit" bench gemm --dtype e4m3 --method stream --layout NT \
    --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 30 --rounds 3 --out "$out/fp8_large_stream.csv" \
    --config default,wgmma:128x256x128:64x256:4:c2,wgmma:128x256x128:64x256:3,wgmma:256x128x128:128x128:3,wgmma:128x128x128:128x128:4:pp,wgmma:128x256x256:64x256:2
}

# Issue 15: the SASS of the 8-bit kernel (Hopper's 8-bit wgmma is QGMMA in SASS, the 16-bit one HGMMA).
fp8_sass() {
  step fp8_sass 8 bash -c "rm -rf /tmp/dump && TILEJIT_DUMP_DIR=/tmp/dump TILEJIT_CACHE=off '$bin/tilejit' gemm --dtype e4m3 \
    --m 4096 --n 4096 --k 4096 --layout NT --check && ls /tmp/dump && cuobjdump -sass /tmp/dump/*.cubin | grep -cE '[HQ]GMMA' && \
    cuobjdump -sass /tmp/dump/*.cubin | grep -m3 -E '[HQ]GMMA'"
}

for what in "$@"; do
  case "$what" in
    tests)
      # Every test process compiles its own kernels (private cache), so run them side by side.
      step tests 12 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      step demo 10 "$bin/tilejit" demo
      ;;
    memcheck)
      step memcheck 12 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter=-*MoreThan2To32*:*Gemm*
      ;;
    bench-elementwise)
      step bench_add_f32 3 "$bin/tilejit" elementwise -e 'z = x + y' --dtype f32 --n 268435456 --bench --check --runs 50
      step bench_add_bf16 3 "$bin/tilejit" elementwise -e 'z = x + y' --dtype bf16 --n 536870912 --bench --runs 50
      step bench_axpy_f32 3 "$bin/tilejit" elementwise -e 'z = x * alpha + y' -s alpha=2 --n 268435456 --bench --runs 50
      step bench_copy_f32 3 "$bin/tilejit" elementwise -e 'z = x' --n 268435456 --bench --runs 50
      for cfg in "--threads 256 --tile 1024" "--threads 256 --tile 2048" "--threads 128 --tile 1024" "--threads 512 --tile 4096" "--threads 256 --tile 8192"; do
        step "bench_add_f32_${cfg// /_}" 2 "$bin/tilejit" elementwise -e 'z = x + y' --n 268435456 --bench --runs 30 $cfg
      done
      ;;
    bench-launch)
      step bench_launch 6 "$bin/tilejit" bench launch --launches 10000
      step bench_compile 6 env CUDA_CACHE_DISABLE=1 TILEJIT_CACHE=off "$bin/tilejit" bench compile
      step bench_compile2 6 env CUDA_CACHE_DISABLE=1 TILEJIT_CACHE=off "$bin/tilejit" bench compile
      ;;
    bench-cache)
      saved_cache_dir="$TILEJIT_CACHE_DIR"
      export TILEJIT_CACHE_DIR=/tmp/tilejit-first-call-cache
      rm -rf "$TILEJIT_CACHE_DIR"
      for i in 1 2 3 4 5 6; do step "first_call_$i" 2 "$bin/tilejit" bench first-call; done
      for i in 1 2 3 4 5; do step "first_call_warm_loader_$i" 2 "$bin/tilejit" bench first-call --warm-loader; done
      export TILEJIT_CACHE_DIR="$saved_cache_dir"
      ;;
    bench-compile32)
      saved_cache_dir="$TILEJIT_CACHE_DIR"
      exprs=(-e 'z = x + y' -e 'z = x * alpha + y' -s alpha=2 -e 'z = tanh(x) * y' -e 'z = max(x, y) - min(x, y)')
      step compile32_serial 1 env CUDA_CACHE_DISABLE=1 TILEJIT_CACHE=off "$bin/tilejit" compile elementwise "${exprs[@]}" \
        --dtype f32,f64,f16,bf16,i32,i64,i8,u8 --arch sm_90a --jobs 1
      for j in 4 8 16; do
        step "compile32_jobs$j" 1 env CUDA_CACHE_DISABLE=1 TILEJIT_CACHE=off "$bin/tilejit" compile elementwise "${exprs[@]}" \
          --dtype f32,f64,f16,bf16,i32,i64,i8,u8 --arch sm_90a --jobs $j
      done
      export TILEJIT_CACHE_DIR="$saved_cache_dir"
      ;;
    gemm-tests)
      step gemm_tests 25 ctest --test-dir "$root/build" -R "GemmGpu" -j 16 --output-on-failure
      ;;
    memcheck-gemm)
      step memcheck_gemm 6 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmGpuMisc.CAliasesDAndKZero:GemmGpuMisc.MixedOutputDtypesAndLeadingDimensions:*OddSizes/bf16_NT:*OddSizes/tf32_NN:*OddSizes/f32_TT:*BatchAlphaBetaBiasActivations/f16_TN'
      ;;
    puzzle33)
      step puzzle33 20 "$bin/tilejit" bench puzzle33 --runs 20
      ;;
    bench-gemm)
      step bench_gemm_bf16 40 "$bin/tilejit" bench gemm --dtype bf16 --layout NN,NT,TN,TT --runs 20 --out "$out/gemm_bf16.csv" \
        --shapes 1024x1024x1024,4096x4096x4096,8192x8192x8192,12288x4096x4096,4096x4096x512,16x8192x8192,128x8192x8192,1000x1000x1000,4095x4095x4095
      step bench_gemm_f16 20 "$bin/tilejit" bench gemm --dtype f16 --layout NN,NT,TN,TT --runs 20 --out "$out/gemm_f16.csv" \
        --shapes 4096x4096x4096,8192x8192x8192,12288x4096x4096,4095x4095x4095
      step bench_gemm_tf32 6 "$bin/tilejit" bench gemm --dtype f32 --math tf32 --layout NT,NN --shapes 4096x4096x4096,8192x8192x8192 --runs 10
      step bench_gemm_f32 6 "$bin/tilejit" bench gemm --dtype f32 --layout NN,NT --shapes 4096x4096x4096 --runs 10
      ;;
    bench-mma)
      # Issue 4's mma.sync kernels beside cuBLAS (on Hopper the heuristic picks wgmma: force mma).
      [ -x "$root/build/mma_peak" ] || nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a "$root/tools/microbench/mma_peak.cu" \
        -o "$root/build/mma_peak"
      step mma_peak 8 "$root/build/mma_peak"
      for dt in bf16 f16; do
        step "bench_mma_$dt" 6 "$bin/tilejit" bench gemm --dtype $dt --layout NN,NT --shapes 4096x4096x4096,8192x8192x8192 \
          --config mma:128x256x32:64x64:4 --runs 20
      done
      step bench_mma_tf32 4 "$bin/tilejit" bench gemm --dtype f32 --math tf32 --layout NN,NT --shapes 4096x4096x4096 \
        --config mma:128x128x32:64x64:3 --runs 10
      ;;
    wgmma-compile)
      # Cold NVRTC compile of wgmma kernels (one process each, no cache) and HGMMA in their SASS.
      for spec in "bf16 NT wgmma:128x256x64:64x256:4" "bf16 NN wgmma:128x256x64:64x256:4" "f16 TT wgmma:64x128x64:64x128:8" \
                  "f32 NT wgmma:128x256x32:64x256:4"; do
        set -- $spec
        math=exact; [ "$1" = f32 ] && math=tf32
        dump="$out/sass_$1_$2"
        mkdir -p "$dump"
        step "compile_wgmma_$1_$2" 8 env CUDA_CACHE_DISABLE=1 TILEJIT_CACHE=off TILEJIT_DUMP_DIR="$dump" "$bin/tilejit" compile gemm --dtype "$1" \
          --math $math --layout "$2" --config "$3" --m 4096 --n 4096 --k 4096
        for f in "$dump"/*.cubin; do echo "$(basename "$f"): $(cuobjdump --dump-sass "$f" | grep -c HGMMA) HGMMA instructions"; done
      done
      ;;
    gemm-issues)
      # Everything issues 4 and 5 ask of the H200 in one go: correctness (GPU, CLI and cache tests;
      # memcheck of the wgmma variants), the default shapes of `bench gemm` for bf16 and f16 beside
      # cuBLAS plus 12288x4096x4096, tf32, mma.sync at 4096^3, cold compiles (CUDA_CACHE_DISABLE=1:
      # where a driver is present, NVRTC 12.9+ keeps its own cache of compiled programs in the
      # driver's compute cache, which would turn a repeated compile into a lookup), HGMMA in the SASS,
      # launch and disk-hit costs.
      step tests 12 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      step memcheck_wgmma 4 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmGpuWgmma.SwappedDecodeShapes:GemmGpuWgmma.StagesDTmaCannotWrite:GemmGpuWgmma.KHalves:GemmGpuWgmma.SplitK:GemmGpuWgmma.TailSplit:GemmGpuWgmma.BiasWithoutCOnTilesAtDsEdge'
      shapes=1024x1024x1024,4096x4096x4096,8192x8192x8192,12288x4096x4096,4096x4096x512,16x8192x8192,128x8192x8192,1000x1000x1000,4095x4095x4095
      for dt in bf16 f16; do
        step "gemm_$dt" 40 "$bin/tilejit" bench gemm --dtype $dt --layout NN,NT,TN,TT --shapes $shapes --runs 20 --rounds 3 --out "$out/gemm_$dt.csv"
      done
      step gemm_tf32 6 "$bin/tilejit" bench gemm --dtype f32 --math tf32 --layout NT --shapes 4096x4096x4096,8192x8192x8192 --runs 20
      for dt in bf16 f16; do
        step "mma_$dt" 4 "$bin/tilejit" bench gemm --dtype $dt --layout NN,NT --shapes 4096x4096x4096 --config mma:128x256x32:64x64:4 --runs 20
      done
      for i in 1 2; do
        for spec in "bf16 NT wgmma:128x256x64:64x256:4" "bf16 NN wgmma:128x256x64:64x256:4" "f16 TT wgmma:64x128x64:64x128:8" \
          "bf16 NT wgmma:64x16x128:64x16:8:sw"; do
          set -- $spec
          step "compile${i}_$1_$2" 1 env CUDA_CACHE_DISABLE=1 TILEJIT_CACHE=off "$bin/tilejit" compile gemm --dtype "$1" --layout "$2" --config "$3" --m 4096 --n 4096 --k 4096
        done
      done
      key=$("$bin/tilejit" compile gemm --dtype bf16 --layout NT --m 4096 --n 4096 --k 4096 | awk '$1 == "key" {print $2}')
      step sass_hgmma 2 bash -c "'$bin/tilejit' cache show $key --sass | grep -c HGMMA"
      step launch_gemm 8 "$bin/tilejit" bench launch --gemm --launches 10000
      saved_cache_dir="$TILEJIT_CACHE_DIR"
      export TILEJIT_CACHE_DIR=/tmp/tilejit-first-call-cache
      rm -rf "$TILEJIT_CACHE_DIR"
      for i in 1 2 3 4 5 6; do step "first_call_$i" 2 "$bin/tilejit" bench first-call; done
      export TILEJIT_CACHE_DIR="$saved_cache_dir"
      ;;
    verify-sw-col-a)
      # Branch wip/sw-col-a (not yet run on the H200): decode shapes with a column-major A swap
      # operands too, A transposed into the workspace at each launch for the 16/32-wide tiles.
      step swa_tests 8 ctest --test-dir "$root/build" -R "GemmGpuWgmma|MathsAndLayouts" -j 16 --output-on-failure
      step swa_memcheck 4 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmGpuWgmma.SwappedDecodeShapes'
      step swa_decode 16 "$bin/tilejit" bench gemm --dtype bf16 --layout NN,NT,TN,TT --shapes 16x8192x8192,32x8192x8192,16x4096x4096,1x8192x8192 \
        --runs 20 --rounds 3
      step swa_decode_k2 16 "$bin/tilejit" bench gemm --dtype bf16 --layout TN,TT --shapes 16x8192x8192,32x8192x8192,16x4096x4096,1x8192x8192 \
        --config wgmma:64x128x64:64x128:8:k2 --runs 20 --rounds 3
      ;;
    sweep-shapes)
      # Configurations beside the heuristic's pick for the shapes issue 5 still misses, each timed
      # beside cuBLAS in the same command (bf16, --rounds 3).
      sweep() {  # name shape config...
        local name="$1" shape="$2"; shift 2
        step "sweep_${name}_default" 6 "$bin/tilejit" bench gemm --dtype bf16 --layout NN,NT,TN,TT --shapes "$shape" --runs 20 --rounds 3
        for cfg in "$@"; do
          step "sweep_${name}_${cfg//:/_}" 6 "$bin/tilejit" bench gemm --dtype bf16 --layout NN,NT,TN,TT --shapes "$shape" --runs 20 --rounds 3 --config "$cfg"
        done
      }
      sweep m128 128x8192x8192 wgmma:64x128x64:64x128:8:c2 wgmma:128x128x64:64x128:6:k2 wgmma:128x64x64:64x64:8 \
        wgmma:64x256x64:64x256:4:k2 wgmma:64x64x64:64x64:8 wgmma:64x128x64:64x128:4:k2
      sweep m1000 1000x1000x1000 wgmma:64x128x64:64x128:4:k2 wgmma:64x64x64:64x64:4 wgmma:64x64x64:64x64:4:k2 \
        wgmma:128x128x64:64x128:4:k2 wgmma:128x64x64:64x64:4
      sweep m12288 12288x4096x4096 wgmma:256x128x64:128x128:3 wgmma:192x128x64:64x128:4 wgmma:128x192x64:64x192:4
      ;;
    ab-tf32-rounding)
      # mma.sync tf32: the kernel's cvt.rna.tf32.f32 of every fragment element against two cheaper
      # roundings (templates in .cache-gpu/tpl_add: + half an ulp; .cache-gpu/tpl_trunc: none, as
      # wgmma reads raw f32), same configuration, same run, error against float64 in every line.
      for v in main add trunc; do
        dir="$root/kernels_templates"; [ "$v" != main ] && dir="$root/.cache-gpu/tpl_$v"
        step "tf32_round_$v" 6 env TILEJIT_TEMPLATE_DIR="$dir" "$bin/tilejit" bench gemm --dtype f32 --math tf32 --layout NN,NT,TN,TT \
          --shapes 4096x4096x4096 --config mma:128x128x32:64x64:3 --runs 20 --rounds 2
      done
      ;;
    sweep-1000)
      for cfg in wgmma:128x64x64:64x64:4 wgmma:128x64x64:64x64:6 wgmma:128x64x64:64x64:8 wgmma:128x64x128:64x64:4 \
        wgmma:128x32x64:64x32:8 wgmma:64x64x64:64x64:8:kh; do
        step "sweep_m1000_${cfg//:/_}" 6 "$bin/tilejit" bench gemm --dtype bf16 --layout NN,NT,TN,TT --shapes 1000x1000x1000 --runs 20 --rounds 3 --config "$cfg"
      done
      step sweep_m1000_default 6 "$bin/tilejit" bench gemm --dtype bf16 --layout NN,NT,TN,TT --shapes 1000x1000x1000 --runs 20 --rounds 3
      ;;
    profile-decode-tn)
      # Kernel by kernel (transpose of A, GEMM) for the swapped decode shape with a column-major A.
      step profile_decode_tn 30 ncu --clock-control none --metrics gpu__time_duration.sum --csv -c 12 \
        "$bin/tilejit" gemm --m 16 --n 8192 --k 8192 --dtype bf16 --layout TN --bench --runs 3
      step profile_decode_nn 30 ncu --clock-control none --metrics gpu__time_duration.sum --csv -c 12 \
        "$bin/tilejit" gemm --m 16 --n 8192 --k 8192 --dtype bf16 --layout NN --bench --runs 3
      ;;
    sweep-decode)
      # Longer K steps (512-byte rows per TMA box) for the memory-bound decode and 128-row shapes.
      for spec in "16x8192x8192 -" "16x8192x8192 wgmma:64x16x256:64x16:4:sw" "16x8192x8192 wgmma:64x16x256:64x16:5:sw" \
        "16x8192x8192 wgmma:64x16x128:64x16:6:sw" "128x8192x8192 -" "128x8192x8192 wgmma:64x128x128:64x128:4" \
        "128x8192x8192 wgmma:64x128x128:64x128:4:c2" "128x8192x8192 wgmma:64x128x64:64x128:6"; do
        set -- $spec
        cfg=(); [ "$2" != - ] && cfg=(--config "$2")
        step "sweep_decode_$1_${2//:/_}" 6 "$bin/tilejit" bench gemm --dtype bf16 --layout NN,NT,TN,TT --shapes "$1" --runs 20 --rounds 3 "${cfg[@]}"
      done
      ;;
    sweep-decode-col-a)
      # Decode shapes with a column-major A without swapping: 64-row tiles (M padded, MMA rows wasted
      # on a memory-bound shape) and 64-column tiles of B, against sw with A transposed per launch.
      for cfg in - wgmma:64x64x128:64x64:6 wgmma:64x64x64:64x64:8; do
        c=(); [ "$cfg" != - ] && c=(--config "$cfg")
        step "sweep_colA_${cfg//:/_}" 6 "$bin/tilejit" bench gemm --dtype bf16 --layout TN,TT --shapes 16x8192x8192,32x8192x8192 --runs 20 --rounds 3 "${c[@]}"
      done
      step sweep_colA_c2 4 "$bin/tilejit" bench gemm --dtype bf16 --layout TT --shapes 16x8192x8192,32x8192x8192 --runs 20 --rounds 3 --config wgmma:64x64x128:64x64:6:c2
      ;;
    ab-configs)
      # Configurations against each other in one command (bench gemm --config A,B,...: same inputs,
      # same rounds, each beside cuBLAS), where separate commands differed mostly by cuBLAS's drift.
      for dt in bf16 f16; do
        step "ab_12288_$dt" 12 "$bin/tilejit" bench gemm --dtype $dt --layout NN,NT,TN,TT --shapes 12288x4096x4096 --runs 20 --rounds 3 \
          --config default,wgmma:192x128x64:64x128:4,wgmma:128x192x64:64x192:4
        step "ab_1000_$dt" 12 "$bin/tilejit" bench gemm --dtype $dt --layout NN,NT,TN,TT --shapes 1000x1000x1000 --runs 20 --rounds 3 \
          --config default,wgmma:128x64x64:64x64:4,wgmma:128x64x64:64x64:8
      done
      ;;
    next-decode-kh)
      # Prepared for the next session (not yet run): two consumer warpgroups on alternate K blocks
      # (kh) for the memory-bound decode and 128-row shapes, against the heuristic's pick in one command.
      step kh_tests 12 "$bin/tilejit_gpu_tests" --gtest_brief=1 --gtest_filter='GemmGpuWgmma.KHalves:GemmGpuWgmma.SwappedDecodeShapes'
      for dt in bf16 f16; do
        step "kh_decode_$dt" 12 "$bin/tilejit" bench gemm --dtype $dt --layout NN,NT,TN,TT --shapes 16x8192x8192 --runs 20 --rounds 3 \
          --config default,wgmma:64x16x128:64x16:8:kh:sw
        step "kh_decode32_$dt" 8 "$bin/tilejit" bench gemm --dtype $dt --layout NN,NT,TN,TT --shapes 32x8192x8192 --runs 20 --rounds 3 \
          --config default,wgmma:64x32x128:64x32:8:kh:sw
        step "kh_m128_$dt" 8 "$bin/tilejit" bench gemm --dtype $dt --layout NN,NT,TN,TT --shapes 128x8192x8192 --runs 20 --rounds 3 \
          --config default,wgmma:64x128x64:64x128:8:kh
      done
      ;;
    next-large)
      # Prepared for the next session (not yet run): ping-pong consumers against the default for the
      # large shapes in one command (measured slower in the third session, before the epilogue changes
      # of the fourth; separate commands then).
      for dt in bf16 f16; do
        step "pp_large_$dt" 12 "$bin/tilejit" bench gemm --dtype $dt --layout NN,NT,TN,TT --shapes 12288x4096x4096,8192x8192x8192 \
          --runs 20 --rounds 3 --config default,wgmma:64x256x64:64x256:4:pp,wgmma:128x128x64:128x128:4:pp
      done
      ;;
    profile-misses)
      # Prepared for the next session (not yet run): where the time goes in the shapes issue 5 still
      # misses. One launch each after warm-up (-s 5 -c 1), clocks as the card runs them; the sections
      # the third session ran (SpeedOfLight, WarpStateStats, MemoryWorkloadAnalysis, Occupancy) plus
      # ComputeWorkloadAnalysis (pipe utilisation).
      for spec in "12288 4096 4096 NT" "12288 4096 4096 NN" "16 8192 8192 NN" "128 8192 8192 NN" "1000 1000 1000 NN"; do
        set -- $spec
        step "profile_$1x$2x$3_$4" 60 ncu --clock-control none -s 5 -c 1 --section SpeedOfLight --section WarpStateStats \
          --section MemoryWorkloadAnalysis --section Occupancy --section ComputeWorkloadAnalysis \
          "$bin/tilejit" gemm --m $1 --n $2 --k $3 --dtype bf16 --layout $4 --bench --runs 3
      done
      ;;
    i12-check)
      # Issue 12 (GEMM as applications run it): every GPU, CLI and cache test; memcheck of the new
      # graph, back-to-back (programmatic dependent launch), column-major D and tf32 paths.
      step tests 25 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      step memcheck_i12 6 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmGpuGraph.APlansFirstRunMayBeInsideACapture:GemmGpuGraph.BackToBackGemmsReadThePreviousOnesOutput:GemmGpuGraph.SwappedDecodeShapesTakeABias:GemmGpuWgmma.SplitK:GemmGpuWgmma.StagesDTmaCannotWrite'
      step memcheck_i12_layouts 6 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmGpuGraph.ColumnMajorDInEveryLayout:GemmGpuGraph.Tf32OnWgmmaInEveryLayout'
      ;;
    i12-large:*|i12-small:*)
      # The issue's shapes, tilejit beside cuBLAS in the same command, 3 rounds: i12-large:DTYPE:METHOD
      # (4096^3 .. 12288x4096x4096, D row- and column-major) and i12-small:DTYPE:METHOD (about one
      # wave or less, unaligned, decode-like).
      IFS=: read -r kind dt m <<<"$what"
      if [ "$kind" = i12-large ]; then
        step "${dt}_large_$m" 36 "$bin/tilejit" bench gemm --dtype $dt --method $m --layout NN,NT,TN,TT,NN:c,NT:c,TN:c,TT:c \
          --shapes 4096x4096x4096,6144x6144x6144,8192x8192x8192,12288x4096x4096 --runs 3 --group-ms 30 --rounds 3 \
          --out "$out/${dt}_large_$m.csv"
      else
        step "${dt}_small_$m" 26 "$bin/tilejit" bench gemm --dtype $dt --method $m --layout NN,NT,TN,TT \
          --shapes 1000x1000x1000,128x8192x8192,4095x4095x4095,1x4096x4096,16x8192x8192,32x8192x8192 --runs 3 --group-ms 30 --rounds 3 \
          --out "$out/${dt}_small_$m.csv"
      fi
      ;;
    i12-tf32)
      for m in stream graph; do
        step "tf32_$m" 10 "$bin/tilejit" bench gemm --dtype f32 --math tf32 --method $m --layout NN,NT,TN,TT \
          --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 30 --rounds 3 --out "$out/tf32_$m.csv"
      done
      ;;
    i12-pdl)
      # Programmatic dependent launch on and off (TILEJIT_PDL), same shapes, back to back.
      for pdl in 1 0; do
        step "pdl${pdl}_stream" 14 env TILEJIT_PDL=$pdl "$bin/tilejit" bench gemm --dtype bf16 --method stream --layout NT,NN:c \
          --shapes 4096x4096x4096,1000x1000x1000,128x8192x8192,16x8192x8192 --runs 3 --group-ms 30 --rounds 3
      done
      ;;
    i12-pdl-variants)
      # Where the GEMM kernel lets the next grid launch (programmatic dependent launch): at its start
      # (main), at each block's last epilogue (.cache-gpu/tpl_late), only at exit (.cache-gpu/tpl_exit),
      # and no PDL at all; with swapped-operand and smaller-tile configurations beside the heuristic's
      # for the one-wave shapes. Variant templates are made by the session that runs this, not committed.
      shapes=1000x1000x1000,128x8192x8192,16x8192x8192,4096x4096x4096
      cfgs=default,wgmma:64x128x64:64x128:8:sw,wgmma:128x64x64:64x64:8,wgmma:64x64x64:64x64:8
      for v in main late exit off; do
        dir="$root/kernels_templates"; pdl=1
        case $v in late|exit) dir="$root/.cache-gpu/tpl_$v" ;; off) pdl=0 ;; esac
        step "pdlvar_$v" 20 env TILEJIT_TEMPLATE_DIR="$dir" TILEJIT_PDL=$pdl "$bin/tilejit" bench gemm --dtype bf16 --method stream --layout NT \
          --shapes $shapes --config $cfgs --runs 3 --group-ms 30 --rounds 3
      done
      ;;
    i12-profile)
      # Kernel time alone (ncu, one launch after warm-up) of the shapes issue 12 still misses.
      for spec in "1000 1000 1000 NT" "128 8192 8192 NT" "16 8192 8192 NT"; do
        set -- $spec
        step "profile_$1x$2x$3_$4" 14 ncu --clock-control none -s 5 -c 1 --section SpeedOfLight --section LaunchStats \
          "$bin/tilejit" gemm --m $1 --n $2 --k $3 --dtype bf16 --layout $4 --bench --runs 3
      done
      ;;
    i13)
      # Issue 13 (users' own kernels): the GPU, CLI and cache tests (examples against float64, argument
      # checks, clusters and programmatic launch); memcheck of the user-kernel tests; the consumer
      # program built against an install (copied to build/consumer-bin by the session that carries the
      # build), launched; and the built-in ops' speed and launch cost after the JIT core changes.
      step tests 25 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      step memcheck_user 6 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='UserKernelsGpu.*'
      for c in "$root"/build/consumer-bin/*; do [ -x "$c" ] && step "consumer_$(basename "$c")" 3 "$c" 128; done
      step launch_gemm 8 "$bin/tilejit" bench launch --gemm --launches 10000
      step bench_add_f32 3 "$bin/tilejit" elementwise -e 'z = x + y' --dtype f32 --n 268435456 --bench --check --runs 50
      step bench_add_bf16 3 "$bin/tilejit" elementwise -e 'z = x + y' --dtype bf16 --n 536870912 --bench --runs 50
      step gemm_after 14 "$bin/tilejit" bench gemm --dtype bf16 --method stream --layout NT,NN:c \
        --shapes 4096x4096x4096,8192x8192x8192,1000x1000x1000,16x8192x8192,4095x4095x4095 --runs 3 --group-ms 30 --rounds 3
      saved_cache_dir="$TILEJIT_CACHE_DIR"
      export TILEJIT_CACHE_DIR=/tmp/tilejit-first-call-cache
      rm -rf "$TILEJIT_CACHE_DIR"
      for i in 1 2 3 4 5; do step "first_call_$i" 2 "$bin/tilejit" bench first-call; done
      export TILEJIT_CACHE_DIR="$saved_cache_dir"
      ;;
    i14-check)
      # Issue 14 (epilogues as bodies): every GPU, CLI and cache test after the templates' change (one
      # generated epilogue on every path), memcheck of the epilogue tests, and the GEMM figures of the
      # i13 step (no epilogue) to compare with the runs before the change.
      step tests 25 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      step memcheck_epilogue 8 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmEpilogueGpu.*'
      step gemm_plain 14 "$bin/tilejit" bench gemm --dtype bf16 --method stream --layout NT,NN:c \
        --shapes 4096x4096x4096,8192x8192x8192,1000x1000x1000,16x8192x8192,4095x4095x4095 --runs 3 --group-ms 30 --rounds 3
      ;;
    i14-bench)
      # Issue 14: what an epilogue costs, tilejit's plain GEMM and two bodies on the same inputs in the
      # same rounds, each beside cuBLAS (bias + GELU beside cuBLASLt's fused GELU_BIAS where D is
      # row-major); the CLI's own check of a body with two outputs on odd sizes.
      for m in stream graph; do
        step "epilogue_bf16_$m" 20 "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT,NN:c \
          --shapes 4096x4096x4096,8192x8192x8192 -e none -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual' \
          --runs 3 --group-ms 30 --rounds 3 --out "$out/epilogue_bf16_$m.csv"
      done
      epilogue_small_shapes_and_check
      ;;
    i14-fast)
      # Issue 14, second pass (branch-free epilogue reads, a chunk's values before its stores, short
      # float gelu / gelu_tanh): every GPU, CLI and cache test, memcheck of the epilogue and GELU
      # tests, then what each part of an epilogue costs against tilejit's plain GEMM in the same rounds,
      # and the same for each template variant in build/variants, if any.
      step tests 25 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      step gelu_accuracy 4 "$bin/tilejit_gpu_tests" --gtest_filter='ElementwiseGpu.GeluFormsAreAccurateElementByElement'
      step memcheck_epilogue 8 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmEpilogueGpu.*:ElementwiseGpu.GeluForms*'
      epilogue_parts -e 'd = gelu(acc + bias[n])' -e 'd = gelu_tanh(acc + bias[n])' -e 'd = acc * scale[m] + residual'
      epilogue_variants NT
      epilogue_small_shapes_and_check
      ;;
    i14-order)
      # Issue 14: template variants of the epilogue (build/variants), each checked by the epilogue GPU
      # tests and timed on the same bodies beside its own plain GEMM, after the wgmma and epilogue tests
      # of the working tree.
      step wgmma_epilogue_tests 4 "$bin/tilejit_gpu_tests" --gtest_brief=1 --gtest_filter='GemmEpilogueGpu.*:GemmGpuWgmma.*'
      epilogue_variants NT,NN:c
      ;;
    i12-synced)
      # The launch-then-wait method as a labelled extra, against the earlier synchronised figures.
      step synced_bf16 20 "$bin/tilejit" bench gemm --dtype bf16 --method synced --layout NN,NT,TN,TT \
        --shapes 4096x4096x4096,8192x8192x8192,1000x1000x1000,16x8192x8192,128x8192x8192,4095x4095x4095 --runs 20 --rounds 3 \
        --out "$out/bf16_synced.csv"
      ;;
    i15-first)
      # Issue 15: the 8-bit GEMM's tests, its SASS, every GPU, CLI and cache test, then e4m3 -> bf16
      # beside cuBLASLt's 8-bit matmul (same scales) for several configurations.
      step fp8_tests 25 timeout 200 "$bin/tilejit_gpu_tests" --gtest_brief=1 --gtest_filter='Fp8GemmGpu.*'
      fp8_sass
      step tests 25 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      fp8_large_configs
      ;;
    i15-perf)
      fp8_sass
      fp8_large_configs
      ;;
    i15-second)
      # Issue 15, after the 1-byte transpose, the 3-stage heuristic and the harness fixes.
      step fp8_tests 25 timeout 200 "$bin/tilejit_gpu_tests" --gtest_brief=1 --gtest_filter='Fp8GemmGpu.*'
      step fp8_large 24 "$bin/tilejit" bench gemm --dtype e4m3 --method stream --layout NT \
        --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 30 --rounds 3 --out "$out/fp8_large_stream.csv" \
        --config default,wgmma:128x256x128:64x256:4,wgmma:128x256x128:64x256:3:c2,wgmma:128x128x128:128x128:4:pp
      ;;
    i15-blocks)
      # Issue 15: block scales (1 x 128 for A, 128 x 128 for B) beside per-tensor scales and cuBLASLt,
      # their tests and memcheck, then every GPU, CLI and cache test on the final templates.
      step fp8_tests 30 timeout 300 "$bin/tilejit_gpu_tests" --gtest_brief=1 --gtest_filter='Fp8GemmGpu.*'
      step fp8_per_tensor 12 "$bin/tilejit" bench gemm --dtype e4m3 --method stream --layout NT \
        --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192 --runs 3 --group-ms 30 --rounds 3 --out "$out/fp8_per_tensor.csv"
      step fp8_blocks 20 "$bin/tilejit" bench gemm --dtype e4m3 --block-scales --method stream --layout NT \
        --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192 --runs 3 --group-ms 30 --rounds 3 --out "$out/fp8_blocks.csv" \
        --config default,wgmma:128x128x128:64x128:3,wgmma:128x128x128:64x128:6,wgmma:128x128x128:64x128:4:c2,wgmma:64x128x128:64x128:8
      step fp8_blocks_memcheck 6 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit" gemm --dtype e4m3 --block-scales \
        --m 300 --n 520 --k 200 --layout NN --bias --act gelu --check
      step fp8_blocks_memcheck2 6 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit" gemm --dtype e4m3 --block-scales \
        --m 1000 --n 1000 --k 1000 --layout TN --config wgmma:128x128x128:64x128:4:k3 --check
      step tests 25 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      ;;
    i15-blocks2)
      # Issue 15: block scales with their scales loaded two K blocks ahead.
      step fp8_block_tests 6 timeout 200 "$bin/tilejit_gpu_tests" --gtest_brief=1 --gtest_filter='Fp8GemmGpu.BlockScales'
      step fp8_per_tensor 12 "$bin/tilejit" bench gemm --dtype e4m3 --method stream --layout NT \
        --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 30 --rounds 3 --out "$out/fp8_per_tensor.csv"
      step fp8_blocks 20 "$bin/tilejit" bench gemm --dtype e4m3 --block-scales --method stream --layout NT \
        --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192 --runs 3 --group-ms 30 --rounds 3 --out "$out/fp8_blocks.csv" \
        --config default,wgmma:128x64x128:64x64:4,wgmma:128x64x128:64x64:8,wgmma:192x64x128:64x64:4,wgmma:64x128x128:64x128:8
      step fp8_blocks_memcheck 6 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit" gemm --dtype e4m3 --block-scales \
        --m 1000 --n 1000 --k 1000 --layout NN --bias --act gelu --check
      ;;
    i15-final)
      # Issue 15: the per-tensor kernel on the block-scaled tiles (where the block scales' cost lies),
      # then every GPU, CLI and cache test on the final templates.
      step fp8_tiles 12 "$bin/tilejit" bench gemm --dtype e4m3 --method stream --layout NT \
        --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 30 --rounds 3 --out "$out/fp8_tiles.csv" \
        --config default,wgmma:128x128x128:64x128:4,wgmma:128x128x128:64x128:6
      step tests 25 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      ;;
    i15-out8)
      # Issue 15: an 8-bit D with an output scale: every GPU, CLI and cache test (the new
      # Fp8GemmGpu.EightBitOutputs among them), e4m3 -> e4m3 beside cuBLASLt, memcheck.
      step tests 25 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      step fp8_out8 8 "$bin/tilejit" bench gemm --dtype e4m3 --out-dtype e4m3 --method stream --layout NT \
        --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 30 --rounds 3 --out "$out/fp8_out8.csv"
      step fp8_out8_memcheck 4 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit" gemm --dtype e4m3 \
        --out-dtype e4m3 --m 1000 --n 1000 --k 1000 --layout NN --bias --act gelu --check
      grep -E "^========= [A-Z]" "$out/fp8_out8_memcheck.log" | grep -v "cuFuncGetParamInfo" | head -5
      ;;
    i16-one)
      # Issue 16: one shape class tuned with an empty cache (compile in worker processes, then timing),
      # tuned again (only the heuristic's and the best timed again), used by another process with no
      # tuning, TILEJIT_AUTOTUNE=on in-process, and memcheck of the tuner's helper kernels.
      rm -rf /tmp/tune-one /tmp/tune-on /tmp/tune-mc
      step tune_one 14 env TILEJIT_CACHE_DIR=/tmp/tune-one "$bin/tilejit" tune gemm --dtype bf16 --layout NT --shapes 4096x4096x4096 --all
      step tune_one_again 4 env TILEJIT_CACHE_DIR=/tmp/tune-one "$bin/tilejit" tune gemm --dtype bf16 --layout NT --shapes 4096x4096x4096
      step tune_one_use 4 env TILEJIT_CACHE_DIR=/tmp/tune-one TILEJIT_LOG_LEVEL=debug "$bin/tilejit" gemm --m 4100 --n 4096 --k 4096 \
        --layout NT --check
      grep -E "from tuning|tuning it now|heuristic chose" "$out/tune_one_use.log" | head -3
      step tune_one_list 4 env TILEJIT_CACHE_DIR=/tmp/tune-one "$bin/tilejit" cache list --kind tuning
      step tune_on 6 env TILEJIT_CACHE_DIR=/tmp/tune-on TILEJIT_AUTOTUNE=on TILEJIT_LOG_LEVEL=info "$bin/tilejit" gemm --m 2048 --n 2048 \
        --k 2048 --layout NT --check
      step tune_memcheck 6 env TILEJIT_CACHE_DIR=/tmp/tune-mc compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit" tune gemm \
        --dtype f16 --layout TN:c --shapes 300x200x104 --candidates wgmma:64x128x64:64x128:4,mma:64x64x32:32x32:4 --workers 1
      grep -E "^========= [A-Z]" "$out/tune_memcheck.log" | grep -v "cuFuncGetParamInfo" | head -5
      ;;
    i16-cold)
      # Issue 16: one class tuned with an empty cache and NVRTC's own cache off (real compiles).
      rm -rf /tmp/tune-cold
      step tune_cold 6 env CUDA_CACHE_DISABLE=1 TILEJIT_CACHE_DIR=/tmp/tune-cold "$bin/tilejit" tune gemm --dtype f16 --layout NN \
        --shapes 6144x6144x6144
      step tune_cold_inproc 3 env CUDA_CACHE_DISABLE=1 TILEJIT_CACHE_DIR=/tmp/tune-cold2 TILEJIT_AUTOTUNE=on TILEJIT_LOG_LEVEL=info \
        "$bin/tilejit" gemm --m 6144 --n 6144 --k 6144 --layout TT --dtype f16 --check
      ;;
    i16-waves)
      # Issue 16: the heuristic's wave rule (128x192 or 128x128 tiles where 128x256 leaves a wave mostly
      # idle): checked against float64 in every layout and D column-major, memcheck, then the new pick
      # beside the old ones and cuBLAS in the same rounds (stream; graph on NT).
      check_shapes waves_check "3072x3072x3072 1536x1536x1536 768x3072x768 512x11008x4096" "NN NT TN TT NT:c TN:c" \
        "3072x3072x3072 NT bf16|768x3072x768 TN:c f16"
      step waves_memcheck 4 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit" gemm --m 768 --n 3072 --k 768 \
        --layout TN --dtype bf16 --check
      step waves_stream 40 "$bin/tilejit" bench gemm --dtype bf16 --method stream --layout NN,NT,TN,TT \
        --shapes 3072x3072x3072,1536x1536x1536,768x3072x768,512x11008x4096,1536x1536x6144 \
        -c default,wgmma:128x256x64:64x256:4,wgmma:128x128x64:64x128:4 --runs 3 --group-ms 30 --rounds 3 --out "$out/waves_stream.csv"
      step waves_f16_graph 20 "$bin/tilejit" bench gemm --dtype f16 --method graph --layout NT \
        --shapes 3072x3072x3072,1536x1536x1536,768x3072x768,512x11008x4096 \
        -c default,wgmma:128x256x64:64x256:4,wgmma:128x128x64:64x128:4 --runs 3 --group-ms 30 --rounds 3 --out "$out/waves_graph.csv"
      ;;
    i16-m64)
      # Issue 16: 64-wide tiles for M of one 64-row tile (33-64), checked against float64 in every
      # layout and D column-major, then beside the old pick (64x128, split-K by the same rule) and
      # cuBLAS in the same rounds, stream and graph.
      check_shapes m64_check "64x8192x4096 48x4096x4096 64x1024x4096 33x14336x4096" "NN NT TN TT NT:c" \
        "64x8192x4096 NT bf16|48x4096x4096 TN f16|64x1024x4096 NN bf16"
      for meth in stream graph; do
        step "m64_$meth" 40 "$bin/tilejit" bench gemm --dtype bf16 --method "$meth" --layout NT,NN \
          --shapes 64x8192x4096,48x4096x4096,64x4096x4096,40x11008x4096,64x1024x4096,33x14336x4096 \
          -c default,wgmma:64x128x64:64x128:8,wgmma:64x128x64:64x128:8:k2,wgmma:64x128x64:64x128:8:k4 --runs 3 --group-ms 30 --rounds 3 --out "$out/m64_$meth.csv"
      done
      ;;
    i16-m64-pick)
      # Issue 16: the heuristic's own pick for M of one 64-row tile with a wide N (64x128 tiles where
      # 128x128 ones fill half the device or more), checked against float64 in every layout, then
      # beside cuBLAS, stream and graph.
      check_shapes m64_pick_check "40x11008x4096 33x14336x4096 64x16384x4096" "NN NT TN TT NT:c" "40x11008x4096 NT bf16"
      for meth in stream graph; do
        step "m64_pick_$meth" 30 "$bin/tilejit" bench gemm --dtype bf16 --method "$meth" --layout NT,NN \
          --shapes 40x11008x4096,33x14336x4096,64x16384x4096,48x4096x4096,64x8192x4096 --runs 3 --group-ms 30 --rounds 3 \
          --out "$out/m64_pick_$meth.csv"
      done
      ;;
    i14-inside)
      # Issue 14, third pass: interior tiles read the epilogue's operands with no bounds checks. Every
      # GPU, CLI and cache test, memcheck of the epilogue tests, the parts of an epilogue against the
      # plain GEMM (stream and graph), then each variant in build/variants (prev: the templates
      # before the change; pf: M x N inputs prefetched into L1 a chunk ahead).
      step tests 25 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      step memcheck_epilogue 8 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmEpilogueGpu.*'
      epilogue_parts -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual'
      epilogue_variants NT
      epilogue_small_shapes_and_check
      ;;
    i14-verify)
      # The GPU, CLI and cache tests and memcheck of the epilogue tests on this session's code, their
      # results in one summary line each.
      step tests 4 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      echo "tests: $(grep -E "tests passed|tests failed" "$out/tests.log")"
      grep -E "^\s+[0-9]+ - .*(Failed|Timeout|Exception)" "$out/tests.log" | head -10
      step memcheck_epilogue 4 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmEpilogueGpu.*'
      echo "memcheck_epilogue: $(grep -E "ERROR SUMMARY|PASSED|FAILED" "$out/memcheck_epilogue.log" | tr '\n' ' ')"
      ;;
    i12-small-tune)
      # Issue 12: what the tuner finds at about one wave of tiles (1000^3, 1024^3), and the heuristic's
      # pick for M of one 64-row tile beside cuBLAS (stream).
      step tune_small 12 "$bin/tilejit" tune gemm --dtype bf16 --layout NT --compare --compare-rounds 3 \
        --shapes 1000x1000x1000,1024x1024x1024,2000x2000x2000 --out "$out/tune_small.csv"
      step m64_pick_stream 14 "$bin/tilejit" bench gemm --dtype bf16 --method stream --layout NT,NN \
        --shapes 40x11008x4096,33x14336x4096,64x16384x4096,48x4096x4096,64x8192x4096 --runs 3 --group-ms 30 --rounds 3 \
        --out "$out/m64_pick_stream.csv"
      ;;
    i14-memcheck)
      # memcheck of the kernels this session changed (the epilogues that read memory: interior tiles read
      # without bounds checks), each report kind counted: the epilogue GPU tests (every kind and
      # layout, odd sizes) and the CLI's check of a body with every kind of operand in each layout.
      kinds() { grep -E '^========= (Invalid|Program hit|Uninitialized|Race|Out of|Error|Leaked|Barrier)' "$out/$1.log" | sed 's/ at 0x[0-9a-f]*//; s/ by thread.*//' | sort | uniq -c | sort -rn | head -6; }
      step memcheck_epilogue 3 timeout 100 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmEpilogueGpu.*'
      kinds memcheck_epilogue
      step memcheck_cli 3 timeout 60 bash -c "for l in ${MEMCHECK_LAYOUTS:-NN NT TN TT NT:c}; do compute-sanitizer --tool memcheck '$bin/tilejit' gemm --m 1001 --n 777 --k 515 \
        --layout \$l --beta 0.5 -e 'd = gelu(acc + bias[n]) * scale[m] + residual + beta * c; pre = acc * s' --scalar s=0.25 --check; done"
      grep -E "check:|ERROR SUMMARY" "$out/memcheck_cli.log"
      kinds memcheck_cli
      ;;
    i16-heldout)
      # Issue 16: tuned against the heuristic on shapes neither the heuristic's rules nor an earlier
      # sweep came from (the first sweep's shapes taught the heuristic its wave and M <= 64 rules).
      # HELDOUT_SHAPES replaces the bf16 list and skips the rest (the 16:29Z run: its first 12 shapes).
      rm -rf /tmp/tune-heldout
      export TILEJIT_CACHE_DIR=/tmp/tune-heldout
      tune=("$bin/tilejit" tune gemm --compare --compare-rounds 3)
      step heldout_bf16 30 timeout "${HELDOUT_S:-300}" "${tune[@]}" --dtype bf16 --layout NT --out "$out/heldout_bf16.csv" \
        --shapes "${HELDOUT_SHAPES:-1280x1280x1280,1792x1792x1792,3584x3584x3584,96x11008x4096,200x4096x14336,1024x14336x4096,24576x1024x2048,12288x768x3072,1111x2222x3333,2500x1500x999,4001x997x2048,3072x3072x192,896x896x896,2304x2304x2304,2816x2816x2816,4352x4352x4352,5632x5632x5632,6656x6656x6656,80x4096x4096,160x8192x2048,320x5120x5120,640x13824x5120,24x6144x6144,8x8192x1024,32768x1024x1024,16384x2048x512,49152x512x2048,8192x1536x6144,3333x1111x2222,2999x4001x1777,5555x555x3333,777x7777x777,1500x2500x3001,2048x2048x96,8192x4096x160,5120x5120x64,1536x6144x128,448x448x448,768x768x2304,1000x3000x5000}"
      if [ -z "${HELDOUT_SHAPES:-}" ]; then
        step heldout_f16 14 timeout 90 "${tune[@]}" --dtype f16 --layout NN --out "$out/heldout_f16.csv" \
          --shapes 2304x2304x2304,320x5120x5120,32768x1024x1024,3333x1111x2222,2048x2048x96,640x13824x5120,1500x2500x3001,896x896x896
        step heldout_batch 8 timeout 60 "${tune[@]}" --dtype bf16 --layout NT --batch 4 --out "$out/heldout_batch.csv" \
          --shapes 1536x1536x1536,640x640x2560,2048x512x512
      fi
      unset TILEJIT_CACHE_DIR
      ;;
    i18-runtimes)
      # Issue 18: every device listed, and one Runtime per device (device 0 twice on one GPU) driven by
      # two threads each, results checked, one compile per kernel in the process.
      step info 12 "$bin/tilejit" info
      step runtimes_per_device 6 "$bin/tilejit_gpu_tests" --gtest_filter='RuntimesPerDeviceGpu.*'
      # Two GPUs: devices 0 and 1 (the issue asks >= 1.9x); one GPU: device 0 twice (the same code).
      gpus=$(nvidia-smi -L | wc -l)
      pair=$([ "$gpus" -ge 2 ] && echo 0,1 || echo 0,0)
      step bench_devices 8 "$bin/tilejit" bench devices --devices "$pair" --dtype bf16 --layout NT --m 8192 --n 8192 --k 8192 \
        --seconds 1 --rounds 3
      ;;
    i14-ppc2)
      # Issue 14: ping-pong consumers in clusters of two (B shared by the pair) against the cooperative
      # default, plain and with the two bodies of the issue, stream.
      step ppc2_tests 4 "$bin/tilejit_gpu_tests" --gtest_brief=1 --gtest_filter='GemmGpuWgmma.ClusterOfTwo:GemmGpuGraph.*'
      step ppc2_stream 40 "$bin/tilejit" bench gemm --dtype bf16 --method stream --layout NT,NN:c \
        --shapes 4096x4096x4096,8192x8192x8192,12288x4096x4096 \
        -c default,wgmma:128x128x64:128x128:5:pp,wgmma:128x128x64:128x128:5:pp:c2,wgmma:64x256x64:64x256:4:pp:c2 \
        -e none -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual' --runs 3 --group-ms 30 --rounds 2 --out "$out/ppc2_stream.csv"
      ;;
    i15-stages)
      # Issue 15: block-scaled 128x128x128 tiles with 4 (the heuristic's), 5 and 6 stages beside the
      # per-tensor default, stream.
      step fp8_stages 16 "$bin/tilejit" bench gemm --dtype e4m3 --block-scales --method stream --layout NT \
        --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 30 --rounds 2 --out "$out/fp8_stages.csv" \
        --config default,wgmma:128x128x128:64x128:5,wgmma:128x128x128:64x128:6
      ;;
    i15-profile)
      # Issue 15 / 14: where the block-scaled kernel's time goes beside the per-tensor one on the same
      # tiles, and the bf16 default with and without bias + GELU (one launch after warm-up each).
      prof() {
        local name="$1"
        shift
        step "$name" 70 ncu --clock-control none -k regex:gemm_wgmma -s 3 -c 1 --section SpeedOfLight --section WarpStateStats \
          --section SourceCounters --section ComputeWorkloadAnalysis "$bin/tilejit" gemm --m 4096 --n 4096 --k 4096 --layout NT --bench --runs 3 "$@"
      }
      prof prof_fp8_blocks --dtype e4m3 --block-scales
      prof prof_fp8_tensor --dtype e4m3 -c wgmma:128x128x128:64x128:4
      prof prof_bf16_gelu --dtype bf16 -e 'd = gelu(acc + bias[n])'
      prof prof_bf16_plain --dtype bf16
      ;;
    i16-c2)
      # Issue 16 / 12: 128x256 tiles with and without 2-CTA clusters on the heuristic's large aligned
      # shapes and on the odd sizes where tuning picked clusters (1.10-1.42x), stream and graph.
      for meth in stream graph; do
        step "c2_$meth" 16 "$bin/tilejit" bench gemm --dtype bf16 --method "$meth" --layout NT,NN \
          --shapes 4096x4096x4096,8192x8192x8192,12288x4096x4096,1000x3000x5000,2500x1500x999,2999x4001x1777 \
          -c default,wgmma:128x256x64:64x256:4,wgmma:128x256x64:64x256:4:c2 --runs 3 --group-ms 30 --rounds 3 --out "$out/c2_$meth.csv"
      done
      ;;
    i14-ab)
      # Issue 14: the working tree's templates and the pf variant (M x N inputs prefetched into L1 a
      # chunk ahead) in turn, twice each, on the bodies that read an M x N input.
      for round in 1 2; do
        for v in base pf; do
          dir=()
          [ "$v" = pf ] && dir=(env TILEJIT_TEMPLATE_DIR="$root/build/variants/pf")
          step "ab_${v}_$round" 12 "${dir[@]}" "$bin/tilejit" bench gemm --dtype bf16 --method stream --layout NT,NN:c \
            --shapes 4096x4096x4096,8192x8192x8192 -e none -e 'd = acc * scale[m] + residual' -e 'd = acc + residual' \
            -e 'd = gelu(acc + bias[n])' --runs 3 --group-ms 30 --rounds 2 --out "$out/ab_${v}_$round.csv"
        done
      done
      ;;
    i16-sweep)
      # Issue 16: tuned against the heuristic on shapes the heuristic was not tuned on (square, skinny,
      # tall, unaligned, small K, batched; bf16 and f16), same run, stream method.
      rm -rf /tmp/tune-sweep
      export TILEJIT_CACHE_DIR=/tmp/tune-sweep
      step tune_tests 6 "$bin/tilejit_gpu_tests" --gtest_brief=1 --gtest_filter='GemmTuningGpu.*'
      step sweep_bf16 60 "$bin/tilejit" tune gemm --dtype bf16 --layout NT --compare --compare-rounds 3 --out "$out/tune_bf16.csv" \
        --shapes 1536x1536x1536,2048x2048x2048,2560x2560x2560,3072x3072x3072,5120x5120x5120,7168x7168x7168,64x8192x4096,256x4096x4096,512x11008x4096,48x4096x4096,8x14336x4096,32x4096x11008,16384x1024x4096,8192x2048x2048,32768x512x1024,14336x4096x1024,3001x2999x2003,5000x3000x1999,1023x1023x1023,2047x2047x2047,777x1555x3111,4096x4096x128,8192x8192x256,2048x8192x64,4096x14336x512,1536x1536x6144,768x3072x768,512x512x512,384x1024x4096
      step sweep_f16 24 "$bin/tilejit" tune gemm --dtype f16 --layout NN --compare --compare-rounds 3 --out "$out/tune_f16.csv" \
        --shapes 2048x2048x2048,3072x3072x3072,5120x5120x5120,256x4096x4096,16384x1024x4096,3001x2999x2003,2047x2047x2047,4096x4096x128,8192x8192x256,768x3072x768,1536x1536x6144,64x8192x4096
      step sweep_batched 10 "$bin/tilejit" tune gemm --dtype bf16 --layout NT --compare --compare-rounds 3 --batch 8 \
        --out "$out/tune_batched.csv" --shapes 1024x1024x1024,512x512x2048,256x1024x4096
      unset TILEJIT_CACHE_DIR
      echo "tune_tests: $(grep -E "PASSED|FAILED|SKIPPED" "$out/tune_tests.log" | tr '\n' ' ')"
      ;;
    i15-more)
      # Issue 15: every layout (cuBLASLt beside it on the K-major problem), graph replay, cuBLASLt's
      # precise accumulation, small shapes, and memcheck of the 8-bit kernels.
      step fp8_small 14 "$bin/tilejit" bench gemm --dtype e4m3 --method stream --layout NT \
        --shapes 128x8192x8192,16x8192x8192,1x4096x4096,4095x4095x4095,1000x1000x1000 --runs 3 --group-ms 30 --rounds 3 \
        --out "$out/fp8_small_stream.csv"
      step fp8_layouts 20 "$bin/tilejit" bench gemm --dtype e4m3 --method stream --layout NN,TN,TT,NT:c \
        --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 30 --rounds 3 --out "$out/fp8_layouts_stream.csv"
      step fp8_graph 14 "$bin/tilejit" bench gemm --dtype e4m3 --method graph --layout NT \
        --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192,16x8192x8192,4095x4095x4095 --runs 3 --group-ms 30 --rounds 3 \
        --out "$out/fp8_graph.csv"
      step fp8_precise 8 "$bin/tilejit" bench gemm --dtype e4m3 --method stream --layout NT --lt-accum precise \
        --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 30 --rounds 3
      step fp8_memcheck 8 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='Fp8GemmGpu.OutputDtypes*:Fp8GemmGpu.Batch*:Fp8GemmGpu.Plans*:Fp8GemmGpu.Scales*'
      grep -m12 -E "^========= [A-Z]|^=========     at|Program hit" "$out/fp8_memcheck.log"
      grep -c "cuFuncGetParamInfo" "$out/fp8_memcheck.log"
      ;;
    i12-wave-probe)
      # Issue 12 / 14: what cuBLAS runs for about one wave (kernel name, grid, cluster, memory
      # throughput) beside tilejit's kernel; the 1000^3 configurations that share B across a pair
      # (clusters) under graph and stream; where the warps of the 4096^3 kernels wait, with and
      # without bias + GELU (cooperative default and ping-pong).
      command -v nsys >/dev/null && echo "nsys: $(command -v nsys)" || echo "nsys: absent"
      step wave_ncu_names 30 bash -c "ncu --clock-control none -c 40 --section LaunchStats '$bin/tilejit' bench gemm --dtype bf16 \
        --method synced --layout NT --shapes 1000x1000x1000,128x8192x8192,16x8192x8192 --runs 2 | grep -E '^  [a-zA-Z_].*\\(|Grid Size|Block Size|Cluster Size|Registers Per|Dynamic Shared' | sort | uniq -c"
      for who in 'regex:^(?!gemm_wgmma)' regex:gemm_wgmma; do
        step "wave_ncu_1000_$([ "$who" = regex:gemm_wgmma ] && echo tilejit || echo cublas)" 100 ncu --clock-control none -k "$who" -s 2 -c 1 --section LaunchStats --section SpeedOfLight \
          --section MemoryWorkloadAnalysis --section Occupancy "$bin/tilejit" bench gemm --dtype bf16 --method synced --layout NT \
          --shapes 1000x1000x1000 --runs 3
      done
      local_cfgs=default,wgmma:128x128x64:64x128:4,wgmma:64x128x64:64x128:8:c2,wgmma:64x128x128:64x128:4:c2
      local_cfgs=$local_cfgs,wgmma:128x128x64:64x128:4:c2,wgmma:64x256x64:64x256:4:c2,wgmma:128x128x64:64x128:4:k2
      local_cfgs=$local_cfgs,wgmma:128x64x64:64x64:8,wgmma:128x64x64:64x64:8:c2,wgmma:128x64x128:64x64:4:c2
      for m in graph stream; do
        step "wave_1000_$m" 40 "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT \
          --shapes 1000x1000x1000,1024x1024x1024 --config "$local_cfgs" --runs 3 --group-ms 30 --rounds 3 --out "$out/wave_1000_$m.csv"
      done
      stalls() {
        local name="$1"
        shift
        step "$name" 60 ncu --clock-control none -k regex:gemm_wgmma -s 3 -c 1 --section SpeedOfLight \
          --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__inst_executed.sum' \
          "$bin/tilejit" gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype bf16 --bench --runs 3 "$@"
      }
      stalls stalls_plain
      stalls stalls_gelu -e 'd = gelu(acc + bias[n])'
      stalls stalls_pp_plain -c wgmma:128x128x64:128x128:4:pp
      stalls stalls_pp_gelu -c wgmma:128x128x64:128x128:4:pp -e 'd = gelu(acc + bias[n])'
      ;;
    i12-align)
      # Issue 12: what operands whose lines are not 128-byte aligned cost through TMA, and whether
      # packing them first (TILEJIT_EXP_PACK=which:alignment) pays, graph and stream, beside cuBLAS.
      # TILEJIT_EXP_PACK existed only in the fifteenth session's uncommitted build (see docs/benchmarks.md):
      # on main every setting runs the same code.
      for spec in "1000 1000 1000 NT" "1000 1000 1000 NN" "1000 1000 1000 TN" "1001 777 515 TT" "2040 2040 2040 NT"; do
        set -- $spec
        echo "check $spec: $(TILEJIT_EXP_PACK=ab:128 "$bin/tilejit" gemm --m $1 --n $2 --k $3 --layout $4 --dtype bf16 --check 2>&1 | grep -E 'check|rror')"
      done
      for pk in none b:128 ab:128 ab:64; do
        for m in graph stream; do
          step "align_${pk/:/_}_$m" 30 env TILEJIT_EXP_PACK=$pk "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT,NN \
            --shapes 1000x1000x1000,1008x1008x1008,2000x2000x2000,2040x2040x2040,4000x4000x4000,4088x4088x4088 \
            --runs 3 --group-ms 20 --rounds 2
        done
      done
      ;;
    i12-lsu)
      # Issue 12: operands whose lines start off 128-byte boundaries copied by the producer with
      # cp.async (A_VEC / B_VEC 1) instead of TMA: every GPU test, CLI checks of such shapes in every
      # kind of schedule, memcheck, then the rates with the copies (default) and without
      # (TILEJIT_EXP_LSU_ALIGN=0: TMA as before), graph and stream, beside cuBLAS.
      # Needs docs/experiments/cp_async_operand_copies.diff applied (git apply) and a rebuild.
      # A hang shows in seconds here rather than in the tests' 300 s timeouts.
      for spec in "1000 1000 1000 NT wgmma:64x128x64:64x128:8" "1000 1000 1000 NN wgmma:128x128x64:64x128:4" \
                  "1000 1000 1000 TN wgmma:64x128x64:64x128:8:kh" "1000 1000 1000 TT wgmma:128x128x64:128x128:4:pp"; do
        set -- $spec
        timeout 60 "$bin/tilejit" gemm --m $1 --n $2 --k $3 --layout $4 --dtype bf16 -c $5 --check >"$out/smoke.log" 2>&1
        local_rc=$?
        echo "smoke $spec: rc=$local_rc $(grep -E 'check|rror' "$out/smoke.log" | tr '\n' ' ')"
        [ "$local_rc" = 124 ] && { echo "smoke: hung, stopping"; exit 1; }
      done
      step lsu_tests 8 timeout 400 ctest --test-dir "$root/build" -L "gpu|cli|cache" -j 16 --output-on-failure
      for spec in "1000 1000 1000 NT bf16" "1000 1000 1000 NN bf16" "1000 1000 1000 TN f16" "1000 1000 1000 TT bf16" \
                  "1001 777 520 TT bf16" "333 1000 1000 NT:c bf16" "2040 2040 2040 NN f16" "1000 1000 1008 NT e4m3" \
                  "200 3000 1000 NT bf16 -c wgmma:128x128x64:64x128:4:k2" "1000 1000 1000 NN bf16 -c wgmma:128x128x64:128x128:4:pp" \
                  "1000 1000 1000 TN bf16 -c wgmma:64x128x64:64x128:8:kh" "1000 1000 1000 NT bf16 --batch 3" \
                  "1000 1000 1000 TT bf16 -e d=gelu(acc+bias[n])*scale[m]+residual" "24 1000 1000 NT bf16" "1 1000 1000 NN bf16"; do
        set -- $spec
        echo "check $spec: $("$bin/tilejit" gemm --m $1 --n $2 --k $3 --layout $4 --dtype $5 "${@:6}" --check 2>&1 | grep -E 'config|check|rror' | tr '\n' ' ')"
      done
      step lsu_memcheck 4 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit" gemm --m 1001 --n 777 --k 520 --layout NN --dtype bf16 --check
      step lsu_memcheck_tn 4 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit" gemm --m 1000 --n 1000 --k 1000 --layout TN --dtype bf16 --check
      ;;
    i12-lsu-bench)
      # The rates of i12-lsu's copies: on (default) against off (TILEJIT_EXP_LSU_ALIGN=0), then
      # configurations at 1000^3 (with the knob unset, so copies on). Needs the diff applied too.
      for lsu in 0 128; do
        for m in graph stream; do
          step "lsu${lsu}_$m" 30 env TILEJIT_EXP_LSU_ALIGN=$lsu "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT,NN,TN,TT \
            --shapes 1000x1000x1000,2040x2040x2040,1008x1008x1008,2000x2000x2000,4000x4000x4000,4088x4088x4088 \
            --runs 3 --group-ms 20 --rounds 2
        done
      done
      step lsu_1000_cfgs 16 "$bin/tilejit" bench gemm --dtype bf16 --method graph --layout NT,NN --shapes 1000x1000x1000,8184x8184x8184 \
        --config default,wgmma:128x128x64:64x128:4,wgmma:64x128x128:64x128:4,wgmma:64x128x64:64x128:8:c2,wgmma:128x64x64:64x64:8 \
        --runs 3 --group-ms 20 --rounds 2
      ;;
    i12-packb)
      # Issue 12: B packed into 128-byte aligned lines when its own lines start off ALIGN-byte
      # boundaries (TILEJIT_EXP_PACK_B=ALIGN, 0 off): the experiment behind wgmma_packs_b_for_speed,
      # run at 13:08Z on an uncommitted build that had the knob; main has no knob any more.
      echo "i12-packb needs the sixteenth session's uncommitted TILEJIT_EXP_PACK_B (see docs/benchmarks.md)"
      ;;
    i12-offsectors)
      # Issue 12: the rules for B's lines off 32-byte boundaries (clusters of two at about a wave,
      # B packed above M = 1024): GEMM GPU tests, checks, then the heuristic's picks under graph and
      # stream beside cuBLAS.
      step offsec_tests 6 timeout 150 ctest --test-dir "$root/build" -R "GemmGpuWgmma|GemmGpuGraph|GemmGpuMisc" -j 16 --output-on-failure
      # (cuFuncGetParamInfo's end-of-list CUDA_ERROR_INVALID_VALUE is an API error, not a memory one.)
      step offsec_memcheck 4 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 "$bin/tilejit_gpu_tests" \
        --gtest_brief=1 --gtest_filter='GemmGpuWgmma.PacksBWhoseLinesStartOffSectors'
      for spec in "1000 1000 1000 NT" "1000 1000 1000 NN" "1000 1000 1000 TN" "1000 1000 1000 TT" "2040 2040 2040 NT" \
                  "2040 2040 2040 NN" "3000 1000 1000 NN" "1000 1000 1000 NT:c"; do
        set -- $spec
        echo "check $spec: $("$bin/tilejit" gemm --m $1 --n $2 --k $3 --layout $4 --dtype bf16 --check 2>&1 | grep -E 'config|check|rror' | tr '\n' ' ')"
      done
      for m in graph stream; do
        step "offsec_$m" 40 "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT,NN,TN,TT \
          --shapes 1000x1000x1000,1008x1008x1008,2000x2000x2000,2040x2040x2040,3000x3000x3000,4088x4088x4088,8184x8184x8184 \
          --runs 3 --group-ms 20 --rounds 2
      done
      # Clusters of two (no packing) against the default (B packed) on the larger such shapes.
      step offsec_c2_graph 30 "$bin/tilejit" bench gemm --dtype bf16 --method graph --layout NT,NN \
        --shapes 2040x2040x2040,3000x3000x3000,4088x4088x4088,8184x8184x8184 \
        --config default,wgmma:128x128x64:64x128:4:c2,wgmma:128x256x64:64x256:4:c2 --runs 3 --group-ms 20 --rounds 2
      ;;
    i12-offsectors2)
      # Issue 12: the fixed batched packing test and the overlap check of prepared plans; clusters of
      # two against packing for B's lines off 32-byte boundaries over more shapes and every layout;
      # then the early PDL triggers (needs gemm_knob_experiments.diff applied and a rebuild).
      step offsec2_tests 8 timeout 120 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmGpuWgmma.PacksBWhoseLinesStartOffSectors:GemmGpuMisc.PreparedPlansStillRefuseOverlappingOutputs:GemmGpuMisc.PlansRunWithOtherPointersAndRuntimeGemmReusesPlans'
      step offsec2_memcheck 4 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 "$bin/tilejit_gpu_tests" \
        --gtest_brief=1 --gtest_filter='GemmGpuWgmma.PacksBWhoseLinesStartOffSectors'
      step offsec2_sweep 120 "$bin/tilejit" bench gemm --dtype bf16 --method graph --layout NT,NN,TN,TT \
        --shapes 2040x2040x2040,3000x3000x3000,4088x4088x4088,5000x5000x5000,6136x6136x6136,8184x8184x8184 \
        --config default,wgmma:128x256x64:64x256:4:c2,wgmma:128x256x64:64x256:4,wgmma:128x128x64:64x128:4 --runs 3 --group-ms 20 --rounds 2
      for v in 1 2; do
        step "trigger${v}_tests" 4 env TILEJIT_EXP_EARLY_TRIGGER=$v timeout 100 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
          --gtest_filter='GemmGpuGraph.*:GemmGpuWgmma.SwappedDecodeShapes:GemmGpuWgmma.ClusterOfTwo'
      done
      for m in graph stream; do
        for knobs in TILEJIT_UNUSED=0 TILEJIT_EXP_EARLY_TRIGGER=1 TILEJIT_EXP_EARLY_TRIGGER=2; do
          echo "== trigger $knobs $m"
          env $knobs "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT \
            --shapes 1000x1000x1000,2048x2048x2048,128x8192x8192,16x8192x8192,1x4096x4096,4096x4096x4096 \
            --runs 3 --group-ms 20 --rounds 3 2>&1 | grep -E "^[0-9]|rror"
        done
      done 2>&1 | tee "$out/trigger_bench.log"
      ;;
    i12-partial-waves)
      # Issue 12: shapes whose waves of 128x256 tiles are partly empty (3000^3: 73%, 5000^3: 87%) and
      # 2000^3 (B on 32-byte but not 128-byte boundaries: 128 tiles of 128x256 are one wave), against
      # clusters of two in other tile shapes and a tail split. 128x192 in clusters needs a
      # column-major B (a row-major B's tile splits into 64-column halves), so NT,TT and NN,TN apart.
      o="--dtype bf16 --method graph --runs 3 --group-ms 20 --rounds 2"
      step explore_nt 40 "$bin/tilejit" bench gemm $o --layout NT,TT --shapes 2000x2000x2000,3000x3000x3000,5000x5000x5000 \
        --config default,wgmma:128x256x64:64x256:4:c2,wgmma:128x192x64:64x192:4:c2,wgmma:256x128x64:128x128:3:c2,wgmma:128x256x64:64x256:4:t2
      step explore_nn 40 "$bin/tilejit" bench gemm $o --layout NN,TN --shapes 2000x2000x2000,3000x3000x3000,5000x5000x5000 \
        --config default,wgmma:128x256x64:64x256:4:c2,wgmma:256x128x64:128x128:3:c2,wgmma:128x256x64:64x256:4:t2
      ;;
    i14-epi)
      # Issue 14: two epilogue experiments (docs/experiments/gemm_knob_experiments.diff; needs it
      # applied and a rebuild). TILEJIT_EXP_EPI_ROLL=1: the TMA-store epilogue's chunks rolled into
      # one copy of the code (the GELU kernel's code falls from 129 KB to 60 KB), against the
      # instruction-fetch stalls of the fourteenth session's profile. TILEJIT_EXP_EPI_PREFETCH=1: the
      # epilogue's M x N reads (C, residuals) prefetched into L2 eight K blocks before a tile's end.
      step epi_tests 6 env TILEJIT_EXP_EPI_ROLL=1 TILEJIT_EXP_EPI_PREFETCH=1 timeout 200 ctest --test-dir "$root/build" \
        -R "GemmEpilogueGpu|GemmGpuWgmma|GemmGpuGraph" -j 16 --output-on-failure
      for m in graph stream; do
        for knobs in TILEJIT_UNUSED=0 TILEJIT_EXP_EPI_ROLL=1 TILEJIT_EXP_EPI_PREFETCH=1 "TILEJIT_EXP_EPI_ROLL=1 TILEJIT_EXP_EPI_PREFETCH=1"; do
          tag=$(echo "$knobs" | sed -e 's/TILEJIT_UNUSED=0/none/' -e 's/TILEJIT_EXP_EPI_//g' -e 's/=1//g' -e 's/ /+/g' | tr 'A-Z' 'a-z')
          echo "== epi_${tag}_$m: $knobs"
          env $knobs "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT,NN:c \
            --shapes 4096x4096x4096,8192x8192x8192 -e none -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual' \
            --runs 3 --group-ms 30 --rounds 3 2>&1 | grep -E "^[0-9]|cuBLASLt|rror"
        done
      done 2>&1 | tee "$out/epi_bench.log"
      ;;
    i12-trigger)
      # Issue 12: the next grid launched earlier (docs/experiments/gemm_knob_experiments.diff; needs it applied
      # and a rebuild). TILEJIT_EXP_EARLY_TRIGGER=1: once every block has passed
      # griddepcontrol.wait; 2: once every block's producer has issued its last load; unset: at the
      # blocks' exit, as on main. The seventh session measured a trigger at the start only at
      # 128x8192x8192 (16% slower); about-one-wave shapes such as 1000^3 were not tried.
      for v in 1 2; do
        step "trigger${v}_tests" 6 env TILEJIT_EXP_EARLY_TRIGGER=$v timeout 150 ctest --test-dir "$root/build" -R "GemmGpuGraph|GemmGpuWgmma" -j 16 --output-on-failure
      done
      for m in graph stream; do
        for knobs in TILEJIT_UNUSED=0 TILEJIT_EXP_EARLY_TRIGGER=1 TILEJIT_EXP_EARLY_TRIGGER=2; do
          echo "== trigger $knobs $m"
          env $knobs "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT \
            --shapes 1000x1000x1000,1024x1024x1024,2048x2048x2048,128x8192x8192,16x8192x8192,1x4096x4096,4096x4096x4096 \
            --runs 3 --group-ms 20 --rounds 3 2>&1 | grep -E "^[0-9]|rror"
        done
      done 2>&1 | tee "$out/trigger_bench.log"
      ;;
    i12-tf32ra)
      # Issue 12: tf32 with a column-major A through registers (ra) and NN swapped onto it, against the
      # transposed copies of before (the same tiles without ra, unswapped); then bf16 3000^3 in
      # 128x192 clusters of two (the heuristic's pick for a column-major B) against packing B.
      step ra_tests 12 timeout 240 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmGpuWgmma.Tf32ColumnMajorAThroughRegisters:GemmGpuGraph.Tf32OnWgmmaInEveryLayout:*OddSizes/tf32*:*Unaligned4095/tf32*:*BatchAlphaBetaBiasActivations/tf32*'
      for lay in TT TN NN; do
        step "ra_memcheck_$lay" 3 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 "$bin/tilejit" gemm \
          --m 1000 --n 777 --k 515 --dtype f32 --math tf32 --layout "$lay" --check
      done
      o="--runs 3 --group-ms 20 --rounds 3"
      step ra_graph 20 "$bin/tilejit" bench gemm --dtype f32 --math tf32 --method graph --layout NN,NT,TN,TT,TT:c \
        --shapes 4096x4096x4096,8192x8192x8192 --config default,wgmma:128x256x32:64x256:4 $o --out "$out/ra_graph.csv"
      step ra_stream 20 "$bin/tilejit" bench gemm --dtype f32 --math tf32 --method stream --layout NN,NT,TN,TT \
        --shapes 4096x4096x4096,8192x8192x8192 $o
      step c192 20 "$bin/tilejit" bench gemm --dtype bf16 --method graph --layout NT,TT,NN \
        --shapes 3000x3000x3000 --config default,wgmma:128x192x64:64x192:4 --runs 3 --group-ms 20 --rounds 3
      ;;
    i12-suite)
      step gemm_suite 25 timeout 420 ctest --test-dir "$root/build" -L gpu -R "GemmGpu|GemmEpilogueGpu" -j 16 --output-on-failure
      ;;
    i12-verify)
      # Issue 12: every GPU test after the tf32 change; the bf16 and e4m3 kernels (whose main loop
      # moved into a lambda shared with A through registers) beside cuBLAS / cuBLASLt; tf32 with a
      # column-major D in the other layouts.
      step gpu_suite 30 timeout 450 ctest --test-dir "$root/build" -L gpu -j 16 --output-on-failure
      o="--method graph --runs 3 --group-ms 20 --rounds 3"
      step bf16_check 20 "$bin/tilejit" bench gemm --dtype bf16 $o --layout NT,NN,TT \
        --shapes 4096x4096x4096,8192x8192x8192,1000x1000x1000
      step e4m3_check 10 "$bin/tilejit" bench gemm --dtype e4m3 $o --layout NT --shapes 4096x4096x4096,8192x8192x8192
      step tf32_dcol 12 "$bin/tilejit" bench gemm --dtype f32 --math tf32 $o --layout NN:c,NT:c,TN:c \
        --shapes 4096x4096x4096,8192x8192x8192
      ;;
    i12-decode-trigger)
      # Issue 12: the next grid launched once every producer has issued its last load, for the
      # swapped decode path's narrow tiles only (the working tree), against the templates without it
      # (build/variants/notrigger: a copy of kernels_templates before the change), alternating.
      step trigger_tests 10 timeout 200 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmGpuWgmma.SwappedDecodeShapes:GemmGpuGraph.*:Fp8GemmGpu.DecodeShapes:GemmGpuMisc.PlansRunWithOtherPointersAndRuntimeGemmReusesPlans'
      d="--shapes 1x4096x4096,8x4096x4096,16x8192x8192,32x8192x8192,128x8192x8192 --runs 3 --group-ms 20 --rounds 3"
      for r in 1 2; do
        for v in trigger notrigger; do
          tdir=""
          [ "$v" = notrigger ] && tdir="$root/build/variants/notrigger"
          for m in graph stream; do
            echo "== $v $m round $r"
            env ${tdir:+TILEJIT_TEMPLATE_DIR=$tdir} "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT,NN $d 2>&1 | grep -E "^[0-9]|rror"
            [ "$r" = 1 ] && env ${tdir:+TILEJIT_TEMPLATE_DIR=$tdir} "$bin/tilejit" bench gemm --dtype e4m3 --method $m --layout NT \
              --shapes 1x4096x4096,16x8192x8192,128x8192x8192 --runs 3 --group-ms 20 --rounds 3 2>&1 | grep -E "^[0-9]|rror"
          done
        done
      done 2>&1 | tee "$out/decode_trigger.log"
      ;;
    i12-last)
      # Issue 12: back-to-back GEMMs reading the previous one's D with decode shapes (the early
      # launch of the swapped kernels), under memcheck too; tf32 through registers on smaller
      # shapes against the transposing form; bf16 4000^3 and 2048^3 in 128x256 clusters of two.
      step chain_tests 5 timeout 150 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
        --gtest_filter='GemmGpuGraph.BackToBackGemmsReadThePreviousOnesOutput:GemmGpuWgmma.SwappedDecodeShapes'
      step chain_memcheck 4 timeout 200 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 \
        "$bin/tilejit_gpu_tests" --gtest_brief=1 --gtest_filter='GemmGpuGraph.BackToBackGemmsReadThePreviousOnesOutput'
      o="--method graph --runs 3 --group-ms 20 --rounds 3"
      step tf32_small 20 "$bin/tilejit" bench gemm --dtype f32 --math tf32 $o --layout NN,TT \
        --shapes 1000x1000x1000,2048x2048x2048 --config default,wgmma:128x128x32:64x128:4,wgmma:64x128x32:64x128:8
      step c2_4000 12 "$bin/tilejit" bench gemm --dtype bf16 $o --layout NT,NN --shapes 4000x4000x4000,2048x2048x2048 \
        --config default,wgmma:128x256x64:64x256:4:c2
      ;;
    i12-c4)
      # Issue 12: clusters of four (2 x 2 tiles sharing A and B halves through multicast) where lines
      # start off 128-byte boundaries (1000^3 and larger), and one-row operands taken K-major
      # (1x4096x4096 TN/TT). A smoke check first, under a short timeout: a wrong barrier count hangs.
      step c4_smoke 4 timeout 30 "$bin/tilejit" gemm --m 1000 --n 1000 --k 1000 --layout NT --dtype bf16 \
        --config wgmma:64x128x128:64x128:4:c4 --check
      if grep -q PASS "$out/c4_smoke.log"; then
        step c4_tests 8 timeout 300 "$bin/tilejit_gpu_tests" --gtest_brief=1 \
          --gtest_filter='GemmGpuWgmma.ClusterOfFour:GemmGpuWgmma.ClusterOfTwo:GemmGpuMisc.OneRowAndOneColumnOperandsInEveryLayout:GemmGpuWgmma.SwappedDecodeShapes'
        for lay in NT TN; do
          step c4_memcheck_$lay 4 timeout 60 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 \
            "$bin/tilejit" gemm --m 1000 --n 776 --k 520 --layout $lay --dtype bf16 --config wgmma:64x128x128:64x128:4:c4 --check
        done
        o="--runs 3 --group-ms 20 --rounds 3"
        for method in graph stream; do
          step c4_1000_$method 20 "$bin/tilejit" bench gemm --dtype bf16 --method $method $o --layout NT,NN,TN,TT \
            --shapes 1000x1000x1000,1024x1024x1024 \
            --config default,wgmma:64x128x128:64x128:4:c4,wgmma:128x128x128:64x128:3:c4
        done
        step c4_large 30 "$bin/tilejit" bench gemm --dtype bf16 --method graph --runs 3 --group-ms 20 --rounds 2 --layout NT,TT \
          --shapes 2040x2040x2040,3000x3000x3000,4088x4088x4088,5000x5000x5000 \
          --config default,wgmma:128x128x128:64x128:3:c4,wgmma:128x256x128:64x256:2:c4
      fi
      for method in graph stream; do
        step one_row_$method 12 "$bin/tilejit" bench gemm --dtype bf16 --method $method --runs 3 --group-ms 20 --rounds 3 \
          --layout NN,NT,TN,TT --shapes 1x4096x4096,1x8192x8192
      done
      ;;
    i12-c4b)
      # Issue 12: why clusters of four run at half speed even on aligned 1024^3: how many clusters
      # are resident, A loaded whole by each block (variant c4_local_a: B still shared, NT/NN only),
      # and where the warps stall; then every GPU test.
      TILEJIT_LOG_LEVEL=debug step c4_occupancy 6 "$bin/tilejit" gemm --m 1024 --n 1024 --k 1024 --layout NT --dtype bf16 \
        --config wgmma:64x128x128:64x128:4:c4
      grep -h "resident" "$out/c4_occupancy.log"
      o="--method graph --runs 3 --group-ms 20 --rounds 2 --layout NT,NN --shapes 1000x1000x1000,1024x1024x1024"
      step c4_main 12 "$bin/tilejit" bench gemm --dtype bf16 $o --config wgmma:64x128x128:64x128:4:c2,wgmma:64x128x128:64x128:4:c4
      TILEJIT_TEMPLATE_DIR="$root/build/variants/c4_local_a" step c4_local_a 12 "$bin/tilejit" bench gemm --dtype bf16 $o \
        --config wgmma:64x128x128:64x128:4:c2,wgmma:64x128x128:64x128:4:c4
      step c4_ncu 40 timeout 120 ncu --clock-control none --section WarpStateStats --section LaunchStats --section SpeedOfLight \
        -k regex:gemm_wgmma -s 2 -c 1 "$bin/tilejit" gemm --m 1024 --n 1024 --k 1024 --layout NT --dtype bf16 \
        --config wgmma:64x128x128:64x128:4:c4 --runs 3
      step gpu_suite 12 timeout 400 ctest --test-dir build -L gpu -j 16 --output-on-failure
      ;;
    i12-sweep)
      # Issue 12: configurations for 128x8192x8192 (B shared by clusters, split-K, deeper K steps) and
      # for the decode shapes 16x8192x8192 / 32x8192x8192 (deeper K steps, split-K), graph; then where an
      # epilogue's time goes, cooperative against ping-pong (ncu, bias + GELU at 4096^3).
      o="--method graph --runs 3 --group-ms 20 --rounds 2 --layout NT,NN,TN,TT"
      step sweep_128 40 "$bin/tilejit" bench gemm --dtype bf16 $o --shapes 128x8192x8192 \
        --config default,wgmma:64x128x64:64x128:8:c2,wgmma:64x128x128:64x128:4:c2,wgmma:128x128x64:64x128:4:k2,wgmma:64x256x64:64x256:4,wgmma:64x128x128:64x128:4,wgmma:128x256x64:64x256:4:k4
      step sweep_16 20 "$bin/tilejit" bench gemm --dtype bf16 $o --shapes 16x8192x8192 \
        --config default,wgmma:64x16x256:64x16:4:sw,wgmma:64x16x256:64x16:5:sw,wgmma:64x16x128:64x16:8:k2:sw
      step sweep_32 20 "$bin/tilejit" bench gemm --dtype bf16 $o --shapes 32x8192x8192 \
        --config default,wgmma:64x32x256:64x32:4:sw,wgmma:64x32x128:64x32:8:k2:sw
      for cfg in wgmma:128x256x64:64x256:4 wgmma:128x128x64:128x128:5:pp; do
        for body in none 'd = gelu(acc + bias[n])'; do
          tag="${cfg##*:}_$(echo "$body" | tr -cd 'a-z' | head -c 8)"
          step "ncu_$tag" 60 timeout 120 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
            -k regex:gemm_wgmma -c 1 "$bin/tilejit" gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype bf16 --config "$cfg" -e "$body"
        done
      done
      ;;
    i14-pp)
      # Issue 14: an epilogue's cost in the cooperative 128x256 kernel against ping-pong consumers,
      # whose epilogue runs while the other consumer's MMAs do (graph, bf16, NT and NN:c).
      for shp in 4096x4096x4096 8192x8192x8192; do
        step "pp_${shp%%x*}" 40 "$bin/tilejit" bench gemm --dtype bf16 --method graph --runs 3 --group-ms 20 --rounds 2 \
          --layout NT,NN:c --shapes $shp -e none -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual' \
          --config default,wgmma:128x128x64:128x128:5:pp,wgmma:64x256x64:64x256:4:pp
      done
      step ncu_pp_gelu 40 timeout 120 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
        -k regex:gemm_wgmma -c 1 "$bin/tilejit" gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype bf16 \
        --config wgmma:128x128x64:128x128:5:pp -e 'd = gelu(acc + bias[n])'
      ;;
    i14-prefetch)
      # Issue 14: the wgmma producer asks L2 for the epilogue's operands STAGES K blocks before a
      # tile's end (variant nopf: the same templates without it). Every GPU test first (the final
      # build, with one-row operands taken K-major), memcheck of the epilogue's reads at odd sizes,
      # then prefetch on / off / on / off, graph, bf16, with cuBLAS and cuBLASLt bias+GELU in each run.
      step gpu_tests 6 timeout 300 ctest --test-dir "$root/build" -L gpu -j 16 --output-on-failure
      grep -E "tests passed|Failed|FAILED" "$out/gpu_tests.log" | head -8
      body='d = gelu(acc + bias[n]) * scale[m] + residual'
      for lay in NT NN:c TT; do
        for shp in 1000x776x520 16x776x520; do
          IFS=x read -r wm wn wk <<<"$shp"
          step "pf_memcheck_${lay/:/_}_$wm" 3 timeout 90 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 99 \
            "$bin/tilejit" gemm --m "$wm" --n "$wn" --k "$wk" --layout "$lay" --dtype bf16 -e "$body" --check
        done
      done
      o="--dtype bf16 --method graph --runs 3 --group-ms 20 --rounds 2 --layout NT,NN:c --shapes 4096x4096x4096,8192x8192x8192"
      bodies=(-e none -e 'd = gelu(acc + bias[n])' -e 'd = gelu_tanh(acc + bias[n])' -e 'd = acc * scale[m] + residual')
      for pass in 1 2; do
        step "pf_on_$pass" 40 timeout 240 "$bin/tilejit" bench gemm $o "${bodies[@]}"
        TILEJIT_TEMPLATE_DIR="$root/build/variants/nopf" step "pf_off_$pass" 40 timeout 240 "$bin/tilejit" bench gemm $o "${bodies[@]}"
      done
      # Issue 12: one-row operands taken K-major, 8-bit and tf32 (bf16 was run on 2026-12-04).
      step one_row_e4m3 12 timeout 120 "$bin/tilejit" bench gemm --dtype e4m3 --method graph --runs 3 --group-ms 20 --rounds 3 \
        --layout NT,TN --shapes 1x4096x4096,1x8192x8192
      step one_row_tf32 12 timeout 120 "$bin/tilejit" bench gemm --dtype f32 --math tf32 --method graph --runs 3 --group-ms 20 \
        --rounds 3 --layout NN,NT,TN,TT --shapes 1x4096x4096,1x8192x8192
      ;;
    i15-regs)
      # Issue 15: block-scaled kernels with their consumers at 240 registers (the producer at 24; a lone
      # consumer at 256), where ptxas spilled 92 bytes at 232 (the working tree), against HEAD's 232 / 40
      # (build/variants/old) and clusters of two at 240 too (build/variants/bsc2); per-tensor beside them.
      step fp8_tests 6 timeout 240 "$bin/tilejit_gpu_tests" --gtest_filter='Fp8*'
      o="--dtype e4m3 --layout NT --runs 3 --group-ms 20 --rounds 3"
      big=4096x4096x4096,8192x8192x8192
      for meth in graph stream; do
        step "bs_tensor_$meth" 10 "$bin/tilejit" bench gemm $o --method $meth --shapes $big,128x8192x8192
        step "bs_new_$meth" 14 "$bin/tilejit" bench gemm $o --method $meth --block-scales --shapes $big,128x8192x8192 \
          -c default,wgmma:128x128x128:64x128:5,wgmma:128x128x128:64x128:6
        TILEJIT_TEMPLATE_DIR="$root/build/variants/old" step "bs_old_$meth" 10 "$bin/tilejit" bench gemm $o --method $meth \
          --block-scales --shapes $big,128x8192x8192
        TILEJIT_TEMPLATE_DIR="$root/build/variants/bsc2" step "bs_c2_$meth" 10 "$bin/tilejit" bench gemm $o --method $meth \
          --block-scales --shapes $big -c wgmma:128x128x128:64x128:4:c2,wgmma:128x128x128:64x128:5:c2
      done
      cat "$out"/bs_*.log > "$out/i15_regs_all.txt" && rm -f "$out"/bs_*.log
      ;;
    i14-power)
      # Issue 14: is an epilogue's cost time or power? Board power and the SM clock sampled every 20 ms
      # while one kernel runs 8000 synchronised launches (4096^3 bf16 NT), plain and with each body,
      # in the cooperative 128x256 kernel and in ping-pong 128x128.
      for c in wgmma:128x256x64:64x256:4 wgmma:128x128x64:128x128:5:pp; do
        for body in none 'd = gelu(acc + bias[n])' 'd = acc * scale[m] + residual'; do
          ep=()
          [ "$body" != none ] && ep=(-e "$body")
          nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv,noheader,nounits -lms 20 \
            >"$out/smi.tmp" 2>&1 &
          smi=$!
          res=$("$bin/tilejit" gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype bf16 -c "$c" "${ep[@]}" --bench --runs 8000 2>&1 | grep -E "bench|median|TFLOP" | tr '\n' ' ')
          kill $smi; wait $smi 2>/dev/null
          # Samples while the GPU draws more than 300 W (the kernel's run, not its setup).
          stats=$(awk -F', *' '$3 > 300 {n++; c += $2; w += $3; r[$4]++} END {printf "samples %d  mean SM clock %.0f MHz  mean power %.0f W  reasons", n, n ? c / n : 0, n ? w / n : 0; for (k in r) printf " %s:%d", k, r[k]}' "$out/smi.tmp")
          echo "$c | $body | $res | $stats" | tee -a "$out/i14_power.txt"
        done
      done
      rm -f "$out/smi.tmp"
      ;;
    i15-stall)
      # Issue 15: where the block-scaled kernel's warps wait, per SASS instruction (ncu's source page:
      # warp-state samples at each PC), for b397776+240-register templates (build/variants/base), the
      # working tree (each K block's scales loaded two K blocks ahead, stages released before the adds)
      # and the per-tensor kernel on the same tiles; then the variants timed side by side
      # (build/variants/late: the loads after the MMAs are issued; release: only the early release).
      g="gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype e4m3 --bench --runs 3"
      src_prof st_base env TILEJIT_TEMPLATE_DIR="$root/build/variants/base" "$bin/tilejit" $g --block-scales -c wgmma:128x128x128:64x128:4
      src_prof st_ahead "$bin/tilejit" $g --block-scales -c wgmma:128x128x128:64x128:4
      src_prof st_tensor "$bin/tilejit" $g -c wgmma:128x128x128:64x128:4
      o="--dtype e4m3 --layout NT --runs 3 --group-ms 20 --rounds 3"
      big=4096x4096x4096,8192x8192x8192,128x8192x8192
      for meth in graph stream; do
        step "v_tensor_$meth" 8 "$bin/tilejit" bench gemm $o --method $meth --shapes $big
        step "v_ahead_$meth" 12 "$bin/tilejit" bench gemm $o --method $meth --block-scales --shapes $big \
          -c default,wgmma:128x128x128:64x128:5,wgmma:128x128x128:64x128:6
        for v in base late release; do
          TILEJIT_TEMPLATE_DIR="$root/build/variants/$v" step "v_${v}_$meth" 8 "$bin/tilejit" bench gemm $o --method $meth \
            --block-scales --shapes $big
        done
      done
      cat "$out"/v_*.log >"$out/i15_stall_bench.txt" && rm -f "$out"/v_*.log
      cat "$out"/st_*.log >"$out/i15_stall_prof.txt" && rm -f "$out"/st_*.log
      gzip -f "$out"/st_*.sass.csv
      step fp8_tests 4 timeout 200 "$bin/tilejit_gpu_tests" --gtest_filter='Fp8*'
      ;;
    i15-desc)
      # Issue 15 / 12: wgmma descriptors built once per stage (one add per k step) and the consumer's
      # index made warp-uniform (the working tree), against the same without the shuffle
      # (build/variants/noshfl) and b397776 + 240 registers (build/variants/base): where the block-scaled
      # kernel's instructions go now, its rate, the per-tensor e4m3 and bf16 kernels' rates; then the
      # whole GPU suite on the working tree's templates.
      g="gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype e4m3 --bench --runs 3"
      src_prof sd_bs "$bin/tilejit" $g --block-scales -c wgmma:128x128x128:64x128:4
      src_prof sd_bs_noshfl env TILEJIT_TEMPLATE_DIR="$root/build/variants/noshfl" "$bin/tilejit" $g --block-scales -c wgmma:128x128x128:64x128:4
      src_prof sd_tensor "$bin/tilejit" $g
      o="--runs 3 --group-ms 20 --rounds 3"
      big=4096x4096x4096,8192x8192x8192,128x8192x8192
      for meth in graph stream; do
        for v in new noshfl base; do
          variant_cli $v
          step "d_${v}_bs_$meth" 6 "${run[@]}" bench gemm --dtype e4m3 --layout NT $o --method $meth --block-scales --shapes $big
          step "d_${v}_e4m3_$meth" 6 "${run[@]}" bench gemm --dtype e4m3 --layout NT $o --method $meth --shapes $big
          step "d_${v}_bf16_$meth" 7 "${run[@]}" bench gemm --dtype bf16 --layout NT,NN $o --method $meth \
            --shapes 4096x4096x4096,8192x8192x8192
        done
      done
      cat "$out"/d_*.log >"$out/i15_desc_bench.txt" && rm -f "$out"/d_*.log
      cat "$out"/sd_*.log >"$out/i15_desc_prof.txt" && rm -f "$out"/sd_*.log
      gzip -f "$out"/sd_*.sass.csv
      step gpu_suite 12 timeout 400 ctest --test-dir "$root/build" -L gpu -j 16 --output-on-failure
      ;;
    i15-cursor)
      # Issue 15: block scales read through a per-tile cursor (pointers stepped per K block, a load past
      # the tile's end skipped; the working tree) against 9a64722's loads (build/variants/head); issues
      # 14 / 12: the epilogue bodies and the small and decode shapes on 9a64722's templates against
      # cdf7484's (build/variants/base: before the warp-uniform consumer index); Fp8 tests on the tree.
      o="--runs 3 --group-ms 20 --rounds 3"
      for meth in graph stream; do
        for v in new head base; do
          variant_cli $v
          [ $v != base ] && step "c_${v}_bs_$meth" 6 "${run[@]}" bench gemm --dtype e4m3 --layout NT $o --method $meth --block-scales \
            --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192
          [ $v == new ] && continue
          step "c_${v}_epi_$meth" 14 "${run[@]}" bench gemm --dtype bf16 --layout NT,NN:c $o --method $meth \
            --shapes 4096x4096x4096,8192x8192x8192 -e none -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual'
          step "c_${v}_small_$meth" 10 "${run[@]}" bench gemm --dtype bf16 --layout NT,TN $o --method $meth \
            --shapes 1000x1000x1000,128x8192x8192,16x8192x8192,1x4096x4096
          step "c_${v}_e4m3small_$meth" 6 "${run[@]}" bench gemm --dtype e4m3 --layout NT $o --method $meth \
            --shapes 128x8192x8192,16x8192x8192
        done
      done
      gather_logs c_ i15_cursor_bench.txt
      g="gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype e4m3 --bench --runs 3"
      src_prof sc_bs "$bin/tilejit" $g --block-scales -c wgmma:128x128x128:64x128:4
      gzip -f "$out"/sc_*.sass.csv
      step fp8_tests 4 timeout 200 "$bin/tilejit_gpu_tests" --gtest_filter='Fp8*'
      ;;
    i15-cursor2)
      # Issue 15: the cursor's loads unconditional (a load past the tile's end reads the last K block's
      # scales again; the working tree) against the conditional ones (build/variants/cur1) and 9a64722
      # (build/variants/head); tiles for the block-scaled small shapes (64x128 lone consumer, 128x64
      # with two, 128x128 with split-K 2); Fp8 tests on the tree.
      o="--runs 3 --group-ms 20 --rounds 3"
      for meth in graph stream; do
        for v in new cur1 head; do
          variant_cli $v
          step "e_${v}_bs_$meth" 6 "${run[@]}" bench gemm --dtype e4m3 --layout NT $o --method $meth --block-scales \
            --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192
        done
        step "e_new_tiles_$meth" 10 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT $o --method $meth --block-scales \
          --shapes 128x8192x8192,1000x1000x1000,256x7168x4096 \
          -c default,wgmma:128x64x128:64x64:6,wgmma:128x64x128:64x64:8,wgmma:128x128x128:64x128:4:k2
      done
      gather_logs e_ i15_cursor2_bench.txt
      step fp8_tests 4 timeout 200 "$bin/tilejit_gpu_tests" --gtest_filter='Fp8*'
      ;;
    i15-close)
      # The twenty-second session's final code (its GPU suite ran under the tenth session's i15-final):
      # memcheck of the changed kernels through the CLI's float64 check (block-scaled with two consumers
      # and a lone one, per-tensor e4m3, bf16 in two layouts with an epilogue, tf32 with A through
      # registers); block-scaled stages; where the bf16 epilogue bodies' time goes (ncu per SASS
      # instruction, for issue 14).
      mc() { compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit" gemm --check "$@" 2>&1 | grep -E "check:|ERROR SUMMARY|rror" | tr '\n' ' '; echo " <- $*"; }
      {
        mc --dtype e4m3 --block-scales --m 1000 --n 1000 --k 1000 --layout TN -e 'd = gelu(acc + bias[n])'
        mc --dtype e4m3 --block-scales --m 300 --n 520 --k 200 --layout NN
        mc --dtype e4m3 --block-scales --m 2000 --n 1000 --k 1000 --layout NT -c wgmma:128x128x128:64x128:4
        mc --dtype e4m3 --m 1000 --n 1000 --k 1000 --layout NT --out-dtype bf16
        mc --dtype bf16 --m 1001 --n 777 --k 515 --layout NT --beta 0.5 -e 'd = gelu(acc + bias[n]) * scale[m] + residual + beta * c'
        mc --dtype bf16 --m 1001 --n 777 --k 515 --layout NN:c -e 'd = acc * scale[m] + residual'
        mc --dtype f32 --math tf32 --m 1001 --n 777 --k 515 --layout NN
        mc --dtype bf16 --m 16 --n 4096 --k 4096 --layout TN
      } >"$out/memcheck.log" 2>&1
      cat "$out/memcheck.log"
      step bs_stages 8 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT --runs 3 --group-ms 20 --rounds 3 --method graph --block-scales \
        --shapes 4096x4096x4096,8192x8192x8192 -c default,wgmma:128x128x128:64x128:3,wgmma:128x128x128:64x128:5,wgmma:128x128x128:64x128:6
      g="gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype bf16 --bench --runs 3"
      src_prof ep_none "$bin/tilejit" $g
      src_prof ep_gelu "$bin/tilejit" $g -e 'd = gelu(acc + bias[n])'
      src_prof ep_resid "$bin/tilejit" $g -e 'd = acc * scale[m] + residual'
      cat "$out"/ep_*.log "$out/bs_stages.log" >"$out/i15_final.txt" && rm -f "$out"/ep_*.log "$out/bs_stages.log"
      gzip -f "$out"/ep_*.sass.csv
      ;;
    i14-pp2)
      # Issue 14: ping-pong 128x128 beside the cooperative 128x256 default with the warp-uniform consumer
      # index (ptxas: ping-pong with the three-term body spills 124 bytes instead of 172), plain and with
      # the issue's two bodies.
      for meth in graph stream; do
        step "pp2_$meth" 20 "$bin/tilejit" bench gemm --dtype bf16 --method $meth --layout NT --shapes 4096x4096x4096,8192x8192x8192 \
          -c default,wgmma:128x128x64:128x128:5:pp -e none -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual' \
          --runs 3 --group-ms 20 --rounds 3
      done
      ;;
    i14-pp3)
      # Issue 14: the same on more layouts and shapes, bodies that read an M x N input (graph).
      step pp3_graph 70 "$bin/tilejit" bench gemm --dtype bf16 --method graph --layout NT,NN,TN,NN:c \
        --shapes 4096x4096x4096,6144x6144x6144,8192x8192x8192,12288x4096x4096 -c default,wgmma:128x128x64:128x128:5:pp \
        -e 'd = acc * scale[m] + residual' -e 'd = gelu(acc + bias[n]) + residual' --runs 3 --group-ms 20 --rounds 3
      ;;
    i15-halves)
      # Issue 15: block scales on 128x256 tiles, each K block's products one 128-column half at a time,
      # beside the heuristic's 128x128 (two sets of products); the block-scale GPU test with them.
      for meth in graph stream; do
        step "halves_$meth" 12 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT --method $meth --block-scales \
          --shapes 4096x4096x4096,8192x8192x8192 -c default,wgmma:128x256x128:64x256:3,wgmma:128x256x128:64x256:4 \
          --runs 3 --group-ms 20 --rounds 3
      done
      step bs_test 4 timeout 120 "$bin/tilejit_gpu_tests" --gtest_filter='Fp8GemmGpu.BlockScales'
      ;;
    i15-turns)
      # Issue 15: the two consumers of block-scaled 128x256 tiles issuing their halves' MMAs in strict
      # turns (two named barriers; run 2026-12-04 21:13Z, then dropped: slower) against eb9584c
      # (build/variants/base), as the heuristic's default; per-tensor e4m3 tiles at the large, 128-row
      # and decode shapes; the GPU suite on the tree.
      o="--runs 3 --group-ms 20 --rounds 3"
      step bs_test 4 timeout 200 "$bin/tilejit_gpu_tests" --gtest_filter='Fp8*'
      for meth in graph stream; do
        for v in new base; do
          variant_cli $v
          step "t_${v}_bs_$meth" 6 "${run[@]}" bench gemm --dtype e4m3 --layout NT $o --method $meth --block-scales \
            --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192
        done
        step "t_pt_large_$meth" 14 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT $o --method $meth \
          --shapes 4096x4096x4096,8192x8192x8192 -c default,wgmma:128x256x128:64x256:4,wgmma:128x256x128:64x256:3:c2,wgmma:256x128x128:128x128:3,wgmma:128x128x128:128x128:4:pp
        step "t_pt_small_$meth" 14 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT $o --method $meth \
          --shapes 128x8192x8192 -c default,wgmma:64x128x128:64x128:8:c2,wgmma:128x64x128:64x64:8,wgmma:64x256x128:64x256:4,wgmma:64x128x256:64x128:4
        step "t_pt_decode_$meth" 8 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT $o --method $meth \
          --shapes 16x8192x8192 -c default,wgmma:64x32x256:64x32:8:sw
      done
      gather_logs t_ i15_turns_bench.txt
      step gpu_suite 6 ctest --test-dir build -L gpu -j 16 --timeout 300
      ;;
    i15-c2prof)
      # Issue 15: block-scaled 128x128 tiles in clusters of two (B multicast; no spill since the
      # warp-uniform index) against the heuristic's 128x256 halves; ncu per SASS instruction of the
      # halves kernel and of the per-tensor kernel on the same tiles.
      o="--runs 3 --group-ms 20 --rounds 3"
      for meth in graph stream; do
        step "c2_bs_$meth" 12 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT $o --method $meth --block-scales \
          --shapes 4096x4096x4096,8192x8192x8192 -c default,wgmma:128x128x128:64x128:4:c2,wgmma:128x128x128:64x128:5:c2,wgmma:128x128x128:64x128:6:c2,wgmma:128x128x128:64x128:4
      done
      gather_logs c2_ i15_c2_bench.txt
      g="gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype e4m3 --bench --runs 3 -c wgmma:128x256x128:64x256:3"
      src_prof pf_halves "$bin/tilejit" $g --block-scales
      src_prof pf_tensor "$bin/tilejit" $g
      cat "$out"/pf_*.log >"$out/i15_c2prof.txt" && rm -f "$out"/pf_*.log
      gzip -f "$out"/pf_*.sass.csv
      ;;
    i15-ahead)
      # Issue 15: block scales of the 128x256 halves loop loaded two K blocks ahead into two sets used in
      # turn (the working tree) against eb9584c (build/variants/base); issue 14: ping-pong against the
      # default with bodies that read an M x N input, stream (i14-pp3 ran graph).
      o="--runs 3 --group-ms 20 --rounds 3"
      step bs_test 4 timeout 200 "$bin/tilejit_gpu_tests" --gtest_filter='Fp8GemmGpu.BlockScales:Fp8GemmGpu.EveryPairLayoutAndOddSize'
      for meth in graph stream; do
        for v in new base; do
          variant_cli $v
          step "a_${v}_bs_$meth" 6 "${run[@]}" bench gemm --dtype e4m3 --layout NT $o --method $meth --block-scales \
            --shapes 4096x4096x4096,8192x8192x8192,6144x6144x6144,128x8192x8192
        done
      done
      step a_pp_stream 70 "$bin/tilejit" bench gemm --dtype bf16 --method stream --layout NT,NN,TN \
        --shapes 4096x4096x4096,6144x6144x6144,8192x8192x8192,12288x4096x4096 -c default,wgmma:128x128x64:128x128:5:pp \
        -e 'd = acc * scale[m] + residual' -e 'd = gelu(acc + bias[n]) + residual' $o
      gather_logs a_ i15_ahead_bench.txt
      ;;
    i14-pprule)
      # The twenty-third session's final code: the GPU suite; the heuristic's ping-pong for bodies that
      # read an M x N input (default) beside the 128x256 tiles it replaces, K = 4096, four layouts;
      # float64 checks and memcheck of the default with such bodies.
      step gpu_suite 6 ctest --test-dir build -L gpu -j 16 --timeout 300
      for meth in graph stream; do
        step "r_pp_$meth" 40 "$bin/tilejit" bench gemm --dtype bf16 --method $meth --layout NT,NN,TN,TT \
          --shapes 4096x4096x4096,12288x4096x4096 -c default,wgmma:128x256x64:64x256:4 \
          -e 'd = acc * scale[m] + residual' -e 'd = gelu(acc + bias[n]) + residual' --runs 3 --group-ms 20 --rounds 3
      done
      {
        for lay in NT NN TN TT; do
          "$bin/tilejit" gemm --m 4096 --n 4096 --k 4096 --dtype bf16 --layout $lay --check -e 'd = acc * scale[m] + residual' 2>&1 |
            grep -E "config|check" | tr '\n' ' '; echo " <- $lay"
        done
        timeout 150 compute-sanitizer --tool memcheck --error-exitcode 99 "$bin/tilejit" gemm --check --m 4096 --n 4000 --k 1000 --dtype f16 \
          --layout TN -e 'd = gelu(acc + bias[n]) * scale[m] + residual' 2>&1 | grep -E "config|check:|ERROR SUMMARY" | tr '\n' ' '; echo " <- memcheck"
      } >"$out/r_checks.log" 2>&1
      cat "$out/r_checks.log"
      gather_logs r_ i14_pprule.txt
      ;;
    i15-mainloop2)
      # Issue 15 (next session): the block-scaled main loop of 128x128 and 64x128 tiles with two sets of
      # scales loaded two K blocks ahead (docs/experiments/block_scale_main_loop_two_sets.diff, applied
      # to a copy of the templates in build/variants/ml2) against the committed one; its Fp8 tests.
      rm -rf build/variants/ml2 && mkdir -p build/variants && cp -r kernels_templates build/variants/ml2 &&
        git apply -p2 --directory=build/variants/ml2 docs/experiments/block_scale_main_loop_two_sets.diff || { echo "patch failed"; continue; }
      o="--runs 3 --group-ms 20 --rounds 3"
      for meth in graph stream; do
        for v in new ml2; do
          variant_cli $v
          step "m_${v}_bs_$meth" 8 "${run[@]}" bench gemm --dtype e4m3 --layout NT $o --method $meth --block-scales \
            --shapes 128x8192x8192,256x7168x4096,2048x2048x2048,4096x4096x4096 -c default,wgmma:128x128x128:64x128:4
        done
      done
      gather_logs m_ i15_mainloop2_bench.txt
      variant_cli ml2
      step ml2_tests 4 env TILEJIT_TEMPLATE_DIR="$root/build/variants/ml2" timeout 200 "$bin/tilejit_gpu_tests" \
        --gtest_filter='Fp8GemmGpu.BlockScales:Fp8GemmGpu.EveryPairLayoutAndOddSize'
      ;;
    i14-probe)
      # Issue 14 (twenty-fourth session): does ping-pong hide its epilogue? The cost of one and of three
      # GELUs in ping-pong 128x128 and the cooperative 128x256 (hidden: about flat; exposed: about 3x);
      # ncu per SASS instruction of ping-pong with and without GELU at 4096^3.
      step pb_graph 40 "$bin/tilejit" bench gemm --dtype bf16 --method graph --layout NT --shapes 4096x4096x4096,8192x8192x8192 \
        -c default,wgmma:128x128x64:128x128:5:pp -e none -e 'd = gelu(acc + bias[n])' -e 'd = gelu(gelu(gelu(acc + bias[n])))' \
        -e 'd = acc + residual' --runs 3 --group-ms 20 --rounds 3
      gather_logs pb_ i14_probe_bench.txt
      g="gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype bf16 --bench --runs 3 -c wgmma:128x128x64:128x128:5:pp"
      src_prof pq_pp_gelu "$bin/tilejit" $g -e 'd = gelu(acc + bias[n])'
      src_prof pq_pp_plain "$bin/tilejit" $g
      cat "$out"/pq_*.log >"$out/i14_probe_ncu.txt" && rm -f "$out"/pq_*.log
      gzip -f "$out"/pq_*.sass.csv
      ;;
    i15-split)
      # Issues 15 and 12 (twenty-fourth session): 128-row problems on 128x128 tiles with split-K 2 (two
      # consumers an SM, a third less L2 traffic an SM than 64x128 tiles) beside the defaults.
      o="--runs 3 --group-ms 20 --rounds 3"
      for meth in graph stream; do
        step "sp_e4m3_$meth" 10 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT $o --method $meth --shapes 128x8192x8192 \
          -c default,wgmma:128x128x128:64x128:4:k2,wgmma:128x128x128:64x128:6:k2,wgmma:128x256x128:64x256:3:k2
        step "sp_bf16_$meth" 10 "$bin/tilejit" bench gemm --dtype bf16 --layout NT $o --method $meth --shapes 128x8192x8192 \
          -c default,wgmma:128x128x64:64x128:6:k2,wgmma:128x128x64:64x128:4:k2
      done
      gather_logs sp_ i15_split_bench.txt
      ;;
    i12-small-sweep)
      # Issue 12 (twenty-fourth session): 1000^3 and 2000^3 (B's lines off 32-byte boundaries) under
      # graph replay and on a stream: K halves, two consumers on 128x64 / 128x128 tiles and 128x64
      # clusters beside the heuristic's 64x128 clusters of two.
      o="--runs 3 --group-ms 20 --rounds 3"
      both="wgmma:64x128x128:64x128:4:kh,wgmma:64x128x64:64x128:8:kh,wgmma:64x128x64:64x128:8,wgmma:128x128x64:64x128:4,wgmma:128x64x64:64x64:8"
      for meth in graph stream; do
        step "ss_kb_$meth" 40 "$bin/tilejit" bench gemm --dtype bf16 --method $meth --layout NT,TT $o --shapes 1000x1000x1000,2000x2000x2000 \
          -c default,$both,wgmma:128x64x128:64x64:4:c2,wgmma:128x64x64:64x64:8:c2
        step "ss_kr_$meth" 30 "$bin/tilejit" bench gemm --dtype bf16 --method $meth --layout NN,TN $o --shapes 1000x1000x1000,2000x2000x2000 \
          -c default,$both
      done
      gather_logs ss_ i12_small_sweep.txt
      ;;
    i24-final)
      # The twenty-fourth session's final code (the ping-pong rule for M x N inputs withdrawn): the GPU
      # suite; the default with such bodies (128x256 again) beside cuBLAS; memcheck with its reports
      # kept; the names and launch shapes of cuBLAS / cuBLASLt's kernels, plain and with bias + GELU.
      step gpu_suite 6 ctest --test-dir build -L gpu -j 16 --timeout 300
      step f_default 12 "$bin/tilejit" bench gemm --dtype bf16 --method graph --layout NT,TN --shapes 4096x4096x4096,12288x4096x4096 \
        -e 'd = acc * scale[m] + residual' -e 'd = gelu(acc + bias[n])' --runs 3 --group-ms 20 --rounds 3
      timeout 150 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --check --m 4096 --n 4000 --k 1000 --dtype f16 --layout TN \
        -e 'd = gelu(acc + bias[n]) * scale[m] + residual' >"$out/f_memcheck.log" 2>&1
      grep -E "config|check:|ERROR SUMMARY|Program hit|=========     " "$out/f_memcheck.log" | head -20
      timeout 120 ncu --clock-control none -k regex:'^(nvjet|sm90|cutlass|void cutlass|ampere|xmma)' --section LaunchStats -c 40 \
        "$bin/tilejit" bench gemm --dtype bf16 --method synced --layout NT --shapes 4096x4096x4096 -e none -e 'd = gelu(acc + bias[n])' \
        --runs 1 >"$out/f_ltnames.log" 2>&1
      grep -E "^  [^ ].*\(" "$out/f_ltnames.log" | sed 's/, Context.*//' | sort | uniq -c
      for meth in graph stream; do
        step "f_e4m3_$meth" 6 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT --method $meth --shapes 16x8192x8192,4095x4095x4095 \
          --runs 3 --group-ms 20 --rounds 3
      done
      gather_logs f_ i24_final.txt
      ;;
    i15-three)
      # Issue 15 (twenty-fourth session): block scales on 192x128 tiles of three consumers, each K block's
      # products in one set of 64 registers (while one consumer waits for its MMAs and adds, two others'
      # MMAs keep the tensor cores busy), beside the heuristic's 128x256 halves; per-tensor e4m3 of the
      # same shapes for the ratio to tilejit's own rate; the block-scale GPU test.
      o="--runs 3 --group-ms 20 --rounds 3"
      for meth in graph stream; do
        step "th_bs_$meth" 14 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT $o --method $meth --block-scales \
          --shapes 4096x4096x4096,6144x6144x6144,8192x8192x8192 \
          -c default,wgmma:192x128x128:64x128:4,wgmma:192x128x128:64x128:3,wgmma:128x128x128:64x128:4
        step "th_pt_$meth" 6 "$bin/tilejit" bench gemm --dtype e4m3 --layout NT $o --method $meth \
          --shapes 4096x4096x4096,6144x6144x6144,8192x8192x8192
      done
      gather_logs th_ i15_three_bench.txt
      step bs_test 4 timeout 200 "$bin/tilejit_gpu_tests" --gtest_filter='Fp8GemmGpu.BlockScales'
      ;;
    i24-memcheck)
      # Parameter sizes read from the cubin (no failing cuFuncGetParamInfo probe): the GPU suite, then
      # memcheck of a GEMM with an epilogue, a swapped decode GEMM, an 8-bit GEMM and an elementwise
      # kernel, with every report kept.
      step gpu_suite 6 ctest --test-dir build -L gpu -j 16 --timeout 300
      {
        timeout 150 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --check --m 4096 --n 4000 --k 1000 --dtype f16 --layout TN \
          -e 'd = gelu(acc + bias[n]) * scale[m] + residual'
        timeout 100 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --check --m 16 --n 4096 --k 4096 --dtype bf16 --layout NN
        timeout 100 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --check --m 1000 --n 1000 --k 1000 --dtype e4m3 --layout NT --block-scales
        timeout 100 compute-sanitizer --tool memcheck "$bin/tilejit" demo
      } >"$out/mc_all.log" 2>&1
      grep -E "config|check:|ERROR SUMMARY|Program hit" "$out/mc_all.log" | head -30
      # Issue 14: cuBLASLt's shape (256x128 tiles, two consumers of 128x128, pairs) with and without
      # the issue's bodies, beside the default 128x256 (4 and 3 stages: 256x128 fits 3).
      step mc_tiles 60 "$bin/tilejit" bench gemm --dtype bf16 --method graph --layout NT,NN --shapes 4096x4096x4096,8192x8192x8192 \
        -c default,wgmma:128x256x64:64x256:3,wgmma:256x128x64:128x128:3,wgmma:256x128x64:128x128:3:c2 -e none \
        -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual' --runs 3 --group-ms 20 --rounds 3
      gather_logs mc_ i24_memcheck.txt
      ;;
    i24-staging)
      # Not run yet: needs `git apply docs/experiments/d_staging_64_rows.diff` and a rebuild first (it
      # changes the D tensor map's box on the host too). D staged and TMA-stored one m64 block of rows at
      # a time (128-row consumers free 32 KB: ping-pong 128x128 takes 6 stages, 256x128 takes 4):
      # float64 checks of 128-row-consumer kernels, then those beside the default, plain and with GELU + bias.
      check_specs st_checks "4096 4096 4096 NT bf16 wgmma:128x128x64:128x128:6:pp none" \
        "1001 777 515 NN bf16 wgmma:128x128x64:128x128:6:pp d=acc*scale[m]+residual" \
        "1001 777 515 TN f16 wgmma:256x128x64:128x128:4 d=gelu(acc+bias[n])" \
        "2048 2048 1024 NT bf16 wgmma:256x128x64:128x128:4:c2 d=acc*scale[m]+residual" \
        "1000 1000 1000 NT e4m3 wgmma:256x128x128:128x128:3 none" \
        "1003 515 777 TT bf16 wgmma:128x128x64:128x128:5:pp d=gelu(acc+bias[n])+residual"
      step st_bench 24 "$bin/tilejit" bench gemm --dtype bf16 --method graph --layout NT --shapes 4096x4096x4096,8192x8192x8192 \
        -c default,wgmma:128x128x64:128x128:5:pp,wgmma:128x128x64:128x128:6:pp,wgmma:256x128x64:128x128:4,wgmma:256x128x64:128x128:4:c2 \
        -e none -e 'd = gelu(acc + bias[n])' --runs 3 --group-ms 20 --rounds 2
      gather_logs st_ i24_staging.txt
      ;;
    i25-vectors)
      # Issue 14 (prepared in the twenty-fifth session, no GPU then). Needs build/ made with
      # docs/experiments/epilogue_tile_vectors.diff applied (git apply, then cmake --build build): the
      # epilogue's column vectors (bias[n]) copied per tile into shared memory by the producer's
      # second warp; a row-major M x N input (residual) copied chunk by chunk into D's staging buffer
      # with 16-byte cp.async; D's pairs stored as one 32-bit shared-memory store. Correctness first
      # (the GPU suite with the new cases, float64 CLI checks of every path that stages, memcheck and
      # racecheck), then the same binary with TILEJIT_EXP_TILE_VECTORS=0 TILEJIT_EXP_STAGED_INPUT=0
      # (global reads, as before) against staging, alternating, and the pair stores against two
      # 16-bit stores (template variant noalign), graph.
      # (A kernel that hangs on a barrier shows as a test past its timeout, not as a lost session.)
      step tv_suite 6 ctest --test-dir "$root/build" -L gpu -j 16 --timeout 240 --output-on-failure
      check_specs tv_checks "${staging_specs[@]}"
      step tv_memcheck 4 timeout 300 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --m 1001 --n 777 --k 515 --layout TN --dtype f16 \
        -e 'd = gelu(acc + bias[n]) * scale[m] + residual' --check
      step tv_racecheck 6 timeout 300 compute-sanitizer --tool racecheck "$bin/tilejit" gemm --m 520 --n 768 --k 512 --layout NT --dtype bf16 \
        -c wgmma:128x128x64:128x128:5:pp -e 'd = gelu(acc + bias[n]) + residual' --check
      step tv_racecheck2 6 timeout 300 compute-sanitizer --tool racecheck "$bin/tilejit" gemm --m 520 --n 768 --k 512 --layout NT --dtype bf16 \
        -e 'd = acc * scale[m] + bias[n] + residual' --check
      gather_logs tv_ i25_vectors_checks.txt
      ;;
    i25-vectors-bench)
      # The timing half of i25-vectors (same build; one call of 600 s holds neither half twice).
      rm -rf "$root/build/variants/noalign" && mkdir -p "$root/build/variants" && cp -r "$root/kernels_templates" "$root/build/variants/noalign" &&
        sed -i 's/struct alignas(2 \* sizeof(TD)) output_pair/struct output_pair/' "$root/build/variants/noalign/gemm_wgmma.cuh"
      grep -c "struct output_pair" "$root/build/variants/noalign/gemm_wgmma.cuh"
      o="--dtype bf16 --method graph --runs 3 --group-ms 20 --rounds 3"
      for round in 1 2; do
        for v in 1 0; do
          step "tv_bench_${round}_staging$v" 50 env TILEJIT_EXP_TILE_VECTORS=$v TILEJIT_EXP_STAGED_INPUT=$v "$bin/tilejit" bench gemm $o \
            --layout NT,NN --shapes 4096x4096x4096,8192x8192x8192 -c default,wgmma:128x128x64:128x128:5:pp -e none -e 'd = acc + bias[n]' \
            -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual' -e 'd = gelu(acc + bias[n]) * scale[m] + residual'
        done
      done
      for v in new noalign; do
        variant_cli $v
        step "tv_bench_pairs_$v" 20 "${run[@]}" bench gemm $o --layout NT --shapes 4096x4096x4096,8192x8192x8192 -e none -e 'd = gelu(acc + bias[n])'
      done
      # What the epilogue's reads cost L1 and the tensor cores, staging off / on (one launch after 3).
      for v in 0 1; do
        step "tv_ncu_residual_$v" 30 env TILEJIT_EXP_TILE_VECTORS=$v TILEJIT_EXP_STAGED_INPUT=$v ncu --clock-control none -k regex:gemm_wgmma -s 3 -c 1 \
          --metrics gpu__time_duration.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
          "$bin/tilejit" gemm --m 4096 --n 4096 --k 4096 --layout NT --dtype bf16 --bench --runs 3 -e 'd = gelu(acc + bias[n]) * scale[m] + residual'
      done
      gather_logs tv_ i25_vectors_bench.txt
      ;;
    i25-fp8-narrow)
      # Issue 15 (prepared in the twenty-fifth session, no GPU then): e4m3 128x8192x8192 and
      # 16x8192x8192 configurations (clusters of two sharing B, 64x256, fewer stages) beside the
      # default, graph and stream; the graph ratios (1.02-1.03 on the H100) miss the issue's 1.1.
      for meth in graph stream; do
        step "pf_128_$meth" 12 "$bin/tilejit" bench gemm --dtype e4m3 --method $meth --layout NT --shapes 128x8192x8192 \
          -c default,wgmma:64x128x128:64x128:8:c2,wgmma:64x256x128:64x256:4,wgmma:64x256x128:64x256:4:c2,wgmma:64x128x128:64x128:6,wgmma:128x128x128:64x128:6 \
          --runs 3 --group-ms 20 --rounds 3
      done
      gather_logs pf_ i25_fp8_narrow.txt
      ;;
    # i25-vectors*, i27-*: TILEJIT_EXP_TILE_VECTORS / TILEJIT_EXP_STAGED_INPUT existed only in the
    # experiment's build (972e248 + its diff, run 2026-12-07); on main the two settings time the same kernels.
    i27-checks)
      # The twenty-seventh session's first call: i25-vectors within one call's 600 s (the GPU suite in
      # the background beside the float64 CLI checks; sanitizers with shorter limits). Needs build/
      # of main (the staging landed on 2026-12-07).
      timeout 330 ctest --test-dir "$root/build" -L gpu -j 16 --timeout 300 --output-on-failure >"$out/tv_suite.log" 2>&1 &
      suite_pid=$!
      check_specs tv_checks "${staging_specs[@]}"
      step tv_memcheck 4 timeout 150 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --m 1001 --n 777 --k 515 --layout TN --dtype f16 \
        -e 'd = gelu(acc + bias[n]) * scale[m] + residual' --check
      wait_for_step "$suite_pid" tv_suite
      step tv_racecheck 6 timeout 100 compute-sanitizer --tool racecheck "$bin/tilejit" gemm --m 520 --n 768 --k 512 --layout NT --dtype bf16 \
        -c wgmma:128x128x64:128x128:5:pp -e 'd = gelu(acc + bias[n]) + residual' --check
      step tv_racecheck2 6 timeout 100 compute-sanitizer --tool racecheck "$bin/tilejit" gemm --m 520 --n 768 --k 512 --layout NT --dtype bf16 \
        -e 'd = acc * scale[m] + bias[n] + residual' --check
      gather_logs tv_ i27_checks.txt
      ;;
    i27-one)
      # What decides docs/experiments/epilogue_tile_vectors.diff in one call, for a session whose device
      # time allows one: the wgmma, fp8, graph and epilogue GPU tests in the background (the new staging
      # cases, the unrun StagesDTmaCannotWrite; the paired stores change every wgmma kernel that stores D
      # through TMA) beside float64 CLI checks of every staging path; then staging on (1) / off (0)
      # alternating in the same binary, graph, NT and NN, the issue's two bodies; memcheck, racecheck.
      timeout 240 ctest --test-dir "$root/build" -L gpu -R 'GemmEpilogueGpu|GemmGpuWgmma|Fp8GemmGpu|GemmGpuGraph' -j 16 --timeout 220 \
        --output-on-failure >"$out/to_tests.log" 2>&1 &
      tests_pid=$!
      check_specs to_checks "1001 777 515 NN bf16 default d=gelu(acc+bias[n])*scale[m]+residual" \
        "1024 768 515 NT bf16 default d=acc*scale[m]+residual" \
        "1024 768 512 TN f16 wgmma:128x128x64:128x128:5:pp d=gelu(acc+bias[n])+residual" \
        "1024 768 512 TN bf16 default d=acc+beta*c" \
        "1024 1024 512 NN:c bf16 default d=gelu(acc+bias[n])*scale[m]+residual" \
        "520 700 4096 TT bf16 wgmma:128x256x64:64x256:4:t3 d=relu(acc+bias[n])*scale[m]" \
        "777 1001 2048 NT bf16 wgmma:128x128x64:64x128:4:k2 d=acc+bias[n]" \
        "1003 515 777 NT bf16 wgmma:192x128x64:64x128:4 d=gelu(acc+bias[n])" \
        "1000 1000 1000 NT e4m3 default d=gelu(acc+bias[n])"
      wait "$tests_pid"
      echo "== to_tests: rc=$?"
      tail -n 12 "$out/to_tests.log"
      o="--dtype bf16 --method graph --layout NT,NN --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 20 --rounds 2"
      for round in 1 2; do
        for v in 1 0; do
          step "to_bench_${round}_staging$v" 30 env TILEJIT_EXP_TILE_VECTORS=$v TILEJIT_EXP_STAGED_INPUT=$v timeout 75 "$bin/tilejit" bench gemm $o \
            -e none -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual'
        done
      done
      step to_memcheck 4 timeout 60 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --m 1001 --n 777 --k 515 --layout TN --dtype f16 \
        -e 'd = gelu(acc + bias[n]) * scale[m] + residual' --check
      step to_racecheck 6 timeout 60 compute-sanitizer --tool racecheck "$bin/tilejit" gemm --m 520 --n 768 --k 512 --layout NT --dtype bf16 \
        -e 'd = acc * scale[m] + bias[n] + residual' --check
      gather_logs to_ i27_one.txt
      ;;
    i27-stream)
      # Staging on (1) / off (0) under the stream method too (i25-vectors-bench times graph replay),
      # the issue's two bodies and plain, NT and NN, beside cuBLASLt's fused bias + GELU.
      o="--dtype bf16 --method stream --runs 3 --group-ms 20 --rounds 3"
      for v in 1 0; do
        step "ts_stream_staging$v" 30 env TILEJIT_EXP_TILE_VECTORS=$v TILEJIT_EXP_STAGED_INPUT=$v "$bin/tilejit" bench gemm $o \
          --layout NT,NN --shapes 4096x4096x4096,8192x8192x8192 -e none -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual'
      done
      gather_logs ts_ i27_stream.txt
      ;;
    # i28-checks, i28-bench ran on 7a9d11a (2026-12-07, H100), whose templates had the consumer lag
    # (kLeadBlocksWanted = 3), since dropped: their lead* variants need docs/experiments/consumer_lead.diff
    # applied first (mk_variant prints "0 lines changed" without it).
    i28-checks)
      # Twenty-eighth session, correctness of the staged input's prefetch (its first two chunks copied
      # during the main loop, the next two loaded into registers a chunk ahead) and of 2ca501f (a
      # swapped kernel's vectors staged by its own problem): the GPU suite in the background beside
      # float64 CLI checks (every staging path, then multi-tile problems where the prefetch waits for
      # the previous tile's stores, f32 D with 8 chunks, e4m3 per-tensor and block-scaled, tf32
      # through registers, split and tail-split tiles); memcheck, racecheck; where ptxas's spills sit (SASS).
      timeout 330 ctest --test-dir "$root/build" -L gpu -j 16 --timeout 300 --output-on-failure >"$out/pc_suite.log" 2>&1 &
      suite_pid=$!
      check_specs pc_checks "${staging_specs[@]}" \
        "4096 4096 4096 NT bf16 default d=acc*scale[m]+residual" \
        "8192 4096 1024 NN bf16 default d=acc+residual" \
        "4096 4096 1024 TN f16 default d=gelu(acc+bias[n])*scale[m]+residual" \
        "4096 2048 512 NT bf16 wgmma:128x128x64:128x128:5:pp d=acc+residual" \
        "4096 4096 2048 NT bf16 wgmma:128x256x64:64x256:4:t3 d=acc*scale[m]+residual" \
        "2048 2048 4096 NT bf16 wgmma:128x256x64:64x256:4:k2 d=acc+residual" \
        "3000 2048 1024 NT bf16 wgmma:192x128x64:64x128:4 d=acc+residual" \
        "4096 4096 4096 NN:c bf16 wgmma:128x256x64:64x256:4:sw d=acc*s1[m]+s2[m]"
      {
        "$bin/tilejit" gemm --m 2048 --n 4096 --k 512 --layout NT --dtype bf16 --out-dtype f32 -e 'd = acc + residual' --check
        "$bin/tilejit" gemm --m 4096 --n 4096 --k 1024 --layout NT --dtype e4m3 -e 'd = acc * scale[m] + residual' --check
        "$bin/tilejit" gemm --m 4096 --n 4096 --k 1024 --layout NT --dtype e4m3 --block-scales -e 'd = acc + residual' --check
        "$bin/tilejit" gemm --m 2048 --n 4096 --k 512 --layout NN --dtype f32 --math tf32 -e 'd = acc + residual' --check
        "$bin/tilejit" gemm --m 4096 --n 4096 --k 512 --layout TN --dtype bf16 --beta 0.5 --check
      } 2>&1 | grep -E "config|check|rror" >"$out/pc_more.log"
      cat "$out/pc_more.log"
      step pc_memcheck 4 timeout 120 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --m 4096 --n 4096 --k 4096 --layout NN:c --dtype bf16 \
        -c wgmma:128x256x64:64x256:4:sw -e 'd = acc * s1[m] + s2[m]' --check
      step pc_memcheck2 4 timeout 120 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --m 4096 --n 2048 --k 256 --layout NT --dtype bf16 \
        -e 'd = acc * scale[m] + residual' --check
      wait_for_step "$suite_pid" pc_suite
      step pc_racecheck 6 timeout 150 compute-sanitizer --tool racecheck "$bin/tilejit" gemm --m 4096 --n 2048 --k 128 --layout NT --dtype bf16 \
        -e 'd = acc * scale[m] + residual' --check
      # The embedded templates lag consumer 1 by kLeadBlocks (3); the same tests with the lag off
      # (variant lead0: the prefetch alone) and at 4 (= the default's stages).
      mk_variant lead0 's/enum : int { kLeadBlocksWanted = 3 };/enum : int { kLeadBlocksWanted = 0 };/'
      mk_variant lead4 's/enum : int { kLeadBlocksWanted = 3 };/enum : int { kLeadBlocksWanted = 4 };/'
      for v in lead0 lead4; do
        step "pc_tests_$v" 4 env TILEJIT_TEMPLATE_DIR="$root/build/variants/$v" timeout 200 "$root/build/bin/tilejit_gpu_tests" \
          --gtest_filter='GemmEpilogueGpu.EveryKindAndLayout:GemmGpuWgmma.*'
      done
      # Spills: the local loads and stores in the SASS of the default kernel with a residual.
      rm -rf /tmp/pc_dump
      for v in new base; do
        variant_cli $v
        TILEJIT_DUMP_DIR=/tmp/pc_dump/$v TILEJIT_CACHE_DIR=/tmp/pc_cache_$v "${run[@]}" compile gemm --m 4096 --n 4096 --k 4096 \
          --layout NT --dtype bf16 -e 'd = acc * scale[m] + residual' >/dev/null 2>&1
        TILEJIT_DUMP_DIR=/tmp/pc_dump/$v TILEJIT_CACHE_DIR=/tmp/pc_cache_$v "${run[@]}" compile gemm --m 4096 --n 4096 --k 1024 \
          --layout NT --dtype e4m3 --block-scales -e 'd = acc + residual' >/dev/null 2>&1
      done
      for f in /tmp/pc_dump/*/*.cubin; do
        echo "#### $f"
        cuobjdump -sass "$f" | grep -E "^ +/\*[0-9a-f]+\*/" | sed 's@/\*[0-9a-f]*\*/@@; s@;.*@@' | awk '{$1=$1};1' >/tmp/pc_s.txt
        echo "instructions $(wc -l </tmp/pc_s.txt) local $(grep -c -E "LDL|STL" /tmp/pc_s.txt)"
        grep -n -E "LDL|STL|HGMMA.*gsb0|WARPGROUP.DEPBAR|BAR.SYNC|LDGSTS|UTMASTG|SYNCS.EXCH|EXIT" /tmp/pc_s.txt | awk -F: '{print $1": "$2}' | uniq -c -f1 | head -150
      done >"$out/pc_sass.log" 2>&1
      grep -E "^####|^instructions" "$out/pc_sass.log"
      gather_logs pc_ i28_checks.txt
      ;;
    i28-bench)
      # The embedded templates (the input's prefetch, consumer 1 three K blocks behind) against main
      # before them (variant base: 63ea428's templates), the prefetch alone (lead0) and the lag at 2
      # and 4 K blocks, alternating, graph, plain, scale + residual and GELU + bias.
      [ -d "$root/build/variants/base" ] || echo "build/variants/base is missing (carry it)"
      mk_variant lead0 's/enum : int { kLeadBlocksWanted = 3 };/enum : int { kLeadBlocksWanted = 0 };/'
      mk_variant lead2 's/enum : int { kLeadBlocksWanted = 3 };/enum : int { kLeadBlocksWanted = 2 };/'
      mk_variant lead4 's/enum : int { kLeadBlocksWanted = 3 };/enum : int { kLeadBlocksWanted = 4 };/'
      o="--dtype bf16 --method graph --layout NT,NN --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 20 --rounds 2"
      for round in 1 2; do
        for v in new base lead0 lead2 lead4; do
          [ "$round" = 2 ] && [ "$v" = lead2 -o "$v" = lead4 ] && continue
          variant_cli $v
          step "pb_${round}_$v" 40 timeout 100 "${run[@]}" bench gemm $o -e none -e 'd = acc * scale[m] + residual' -e 'd = gelu(acc + bias[n])'
        done
      done
      gather_logs pb_ i28_bench.txt
      ;;
    i28-stream)
      # i28-bench's new / base under the stream method, and 12288x4096x4096 (the shape where the
      # residual cost most, H100 2026-12-07) under graph. Needs build/variants/base (carried).
      for v in new base; do
        variant_cli $v
        step "ps_stream_$v" 40 timeout 100 "${run[@]}" bench gemm --dtype bf16 --method stream --layout NT,NN --shapes 4096x4096x4096,8192x8192x8192 \
          --runs 3 --group-ms 20 --rounds 3 -e none -e 'd = acc * scale[m] + residual' -e 'd = gelu(acc + bias[n])'
      done
      for v in new base; do
        variant_cli $v
        step "ps_12288_$v" 20 timeout 60 "${run[@]}" bench gemm --dtype bf16 --method graph --layout NT,NN --shapes 12288x4096x4096 \
          --runs 3 --group-ms 20 --rounds 2 -e none -e 'd = acc * scale[m] + residual'
      done
      gather_logs ps_ i28_stream.txt
      ;;
    i28-skew)
      # The skewed tail (kSkewBlocks: a 64x256 consumer's last K blocks in column halves, the first half's
      # epilogue beside the second half's MMAs), in one call of about 200 s: float64 checks (every
      # layout, f16, f32 D, a residual, a tail split, 3 K blocks), memcheck and racecheck, then the
      # embedded templates (2 blocks) against variants noskew (0) and skew4 (4). Not run yet: needs
      # `git apply docs/experiments/skewed_tail.diff` and a rebuild (the templates are embedded).
      mk_variant noskew 's/enum : int { kSkewBlocksWanted = 2 };/enum : int { kSkewBlocksWanted = 0 };/'
      mk_variant skew4 's/enum : int { kSkewBlocksWanted = 2 };/enum : int { kSkewBlocksWanted = 4 };/'
      check_specs sk_checks "4096 4096 4096 NT bf16 default d=gelu(acc+bias[n])" "4096 4096 4096 NN bf16 default none" \
        "2048 4096 1024 TN f16 default d=gelu(acc+bias[n])*scale[m]+residual" "1001 777 515 TT bf16 wgmma:128x256x64:64x256:4 d=acc*scale[m]+residual" \
        "4096 4096 192 NT bf16 wgmma:128x256x64:64x256:4 d=acc+residual" "520 700 4096 NT bf16 wgmma:128x256x64:64x256:4:t3 d=gelu(acc+bias[n])" \
        "4096 4096 1024 NN:c bf16 wgmma:128x256x64:64x256:4:sw d=acc*s1[m]+s2[m]"
      timeout 30 "$bin/tilejit" gemm --m 2048 --n 4096 --k 512 --layout NT --dtype bf16 --out-dtype f32 -e 'd = acc + residual' --check 2>&1 | grep check
      step sk_memcheck 3 timeout 40 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --m 4096 --n 2048 --k 512 --layout NT --dtype bf16 \
        -e 'd = gelu(acc + bias[n])' --check
      step sk_racecheck 3 timeout 40 compute-sanitizer --tool racecheck "$bin/tilejit" gemm --m 4096 --n 2048 --k 192 --layout NT --dtype bf16 \
        -e 'd = acc * scale[m] + residual' --check
      o="--dtype bf16 --method graph --layout NT,NN --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 20 --rounds 2"
      i=0
      for v in new noskew skew4 new noskew; do
        variant_cli $v
        i=$((i + 1))
        step "sk_bench_${i}_$v" 14 timeout 40 "${run[@]}" bench gemm $o -e none -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual'
      done 2>&1 | grep -E "^==|^[0-9]+x" | cut -c1-60
      gather_logs sk_ i28_skew.txt
      ;;
    i29-first)
      # Twenty-ninth session's first call (about 420 s): the whole GPU suite on main (29727bb's refactor
      # and the lag-free prefetch have not had it), the staging paths' float64 checks, main against
      # skew2, halves and skew4, memcheck and racecheck of skew2 (see skew_call).
      skew_call 330 "" 60 all new skew2 halves skew4 new skew2 halves
      ;;
    i29-lean)
      # i29-first cut to what a call of about 330 s can hold: the whole suite in 220 s at most, main,
      # skew2 and halves twice, memcheck.
      skew_call 220 "" 45 memcheck new skew2 halves new skew2 halves
      ;;
    i29-last)
      # For a call of about 280 s: the GPU tests of the wgmma kernels (29727bb changed only
      # gemm_wgmma.cuh; 140 s at most), main and skew2 twice, no sanitizer.
      skew_call 140 'GemmEpilogueGpu|GemmGpuWgmma|Fp8GemmGpu|GemmGpuGraph' 40 none new skew2 new skew2
      ;;
    i32-bs-lean)
      # Issue 15 (about 170 s; ran 2026-12-07 13:19Z, dropped): block-scaled e4m3 on 128x256 tiles with
      # each consumer's m64 x k128 block of A read into registers once (ldmatrix) for both n128 halves'
      # MMAs (docs/experiments/block_scale_a_registers.diff, variant bsregs). The block-scaled GPU tests
      # (in the background) beside float64 checks with the variant, one memcheck, then main and bsregs
      # alternating under graph (twice) and stream (once), beside cuBLASLt's per-tensor GEMM.
      mk_diff_variant bsregs docs/experiments/block_scale_a_registers.diff
      env TILEJIT_TEMPLATE_DIR="$root/build/variants/bsregs" timeout 115 ctest --test-dir "$root/build" -L gpu \
        -R 'Fp8GemmGpu.BlockScales|Fp8GemmGpu.BatchAlpha|Fp8GemmGpu.EightBit' -j 8 --timeout 110 --output-on-failure >"$out/bsl_tests.log" 2>&1 &
      tests_pid=$!
      (
        export TILEJIT_TEMPLATE_DIR="$root/build/variants/bsregs"
        for a in "--m 4096 --n 4096 --k 4096" "--m 1001 --n 777 --k 515" "--m 2048 --n 4096 --k 1024 -e d=gelu(acc+bias[n])" \
          "--m 1536 --n 2048 --k 1024 -e d=acc*scale[m]+residual" "--m 4096 --n 4096 --k 4096 --out-dtype f32"; do
          timeout 60 "$bin/tilejit" gemm $a --layout NT --dtype e4m3 --block-scales -c wgmma:128x256x128:64x256:3 --check 2>&1 |
            grep -E "config|check|rror" | tr '\n' ' '
          echo " <- $a"
        done
        timeout 60 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --m 1001 --n 777 --k 515 --layout NT --dtype e4m3 --block-scales \
          -c wgmma:128x256x128:64x256:3 --check 2>&1 | tail -3
      ) >"$out/bsl_checks.log" 2>&1
      cat "$out/bsl_checks.log"
      wait_for_step "$tests_pid" bsl_tests
      i=0
      for vm in new:graph bsregs:graph new:graph bsregs:graph new:stream bsregs:stream; do
        v=${vm%:*} m=${vm#*:} i=$((i + 1))
        variant_cli "$v"
        step "bsl_bench_${i}_${v}_$m" 0 timeout 40 "${run[@]}" bench gemm --dtype e4m3 --block-scales --method $m --layout NT \
          --shapes 4096x4096x4096,6144x6144x6144,8192x8192x8192 --runs 3 --group-ms 20 --rounds 2
      done
      block_scale_ab_summary bsl
      gather_logs bsl_ i32_bslean.txt
      ;;
    i33-bs-ab)
      # Issue 15 (about 300 s): three block-scaled variants against main (bsp_main's ncu, H100
      # 2026-12-07, of the quarters variant: 7% of the samples at an R2UR that waits for a B scale's
      # load, 4% at a multiply waiting for a scale). bsq: products in 64-column pieces, two register
      # sets in turn (block_scale_quarters.diff); bsnu: B's scales kept out of uniform registers
      # (block_scale_lane_offsets.diff); bs4: four sets of scales, loaded four K blocks ahead
      # (block_scales_four_ahead.diff). Each variant's block-scaled GPU tests (in the background,
      # side by side) and float64 checks; then the four alternating under graph (twice) and stream
      # (once) beside cuBLASLt's per-tensor GEMM, tilejit's per-tensor rate in the same call; ncu of
      # main and bsnu.
      mk_diff_variant bsq docs/experiments/block_scale_quarters.diff
      mk_diff_variant bsnu docs/experiments/block_scale_lane_offsets.diff
      mk_diff_variant bs4 docs/experiments/block_scales_four_ahead.diff
      pids=()
      for v in bsq bsnu bs4; do
        env TILEJIT_TEMPLATE_DIR="$root/build/variants/$v" timeout 150 ctest --test-dir "$root/build" -L gpu \
          -R 'Fp8GemmGpu.BlockScales|Fp8GemmGpu.BatchAlpha|Fp8GemmGpu.EightBit' -j 4 --timeout 140 --output-on-failure >"$out/bsab_tests_$v.log" 2>&1 &
        pids+=($!)
      done
      for v in bsq bsnu bs4; do
        for a in "--m 4096 --n 4096 --k 4096" "--m 1001 --n 777 --k 515" "--m 2048 --n 4096 --k 1024 -e d=gelu(acc+bias[n])" \
          "--m 1536 --n 2048 --k 1024 -e d=acc*scale[m]+residual" "--m 333 --n 4100 --k 640 --out-dtype f32"; do
          TILEJIT_TEMPLATE_DIR="$root/build/variants/$v" timeout 60 "$bin/tilejit" gemm $a --layout NT --dtype e4m3 --block-scales \
            -c wgmma:128x256x128:64x256:3 --check 2>&1 | grep -E "check|rror" | tr '\n' ' '
          echo " <- $v $a"
        done
      done >"$out/bsab_checks.log" 2>&1
      cat "$out/bsab_checks.log"
      i=0
      for v in bsq bsnu bs4; do
        wait_for_step "${pids[$i]}" "bsab_tests_$v"
        i=$((i + 1))
      done
      block_scale_ab bsab "graph graph stream" new bsq bsnu bs4
      step bsab_bench_99_pertensor_graph 0 timeout 40 "$bin/tilejit" bench gemm --dtype e4m3 --method graph --layout NT \
        --shapes 4096x4096x4096,6144x6144x6144,8192x8192x8192 --runs 3 --group-ms 20 --rounds 2
      block_scale_ab_summary bsab
      gather_logs bsab_ i33_bsab.txt
      g="gemm --m 8192 --n 8192 --k 8192 --layout NT --dtype e4m3 --bench --runs 3 -c wgmma:128x256x128:64x256:3 --block-scales"
      src_prof bsp_main "$bin/tilejit" $g
      src_prof bsp_bsnu env TILEJIT_TEMPLATE_DIR="$root/build/variants/bsnu" "$bin/tilejit" $g
      ;;
    i33-bs-staged)
      # Issue 15 (about 200 s): block scales staged in shared memory with each stage
      # (docs/experiments/block_scales_staged.diff, variant bss: the producer's warp copies a K
      # block's scales with cp.async and the stage's full barrier waits for them), against main and
      # bsnu (B's scales out of uniform registers: +0-5% at 14:47Z). Block-scaled GPU tests with bss
      # (background), float64 checks (the 16-byte and the 4-byte copies: M a multiple of 4 or not, a
      # partial last tile, three consumers; batches in the GPU tests, epilogues, a f32 D), memcheck and racecheck;
      # then main, bsnu and bss alternating under graph (twice) and stream (once); ncu of bss.
      mk_diff_variant bss docs/experiments/block_scales_staged.diff
      mk_diff_variant bsnu docs/experiments/block_scale_lane_offsets.diff
      env TILEJIT_TEMPLATE_DIR="$root/build/variants/bss" timeout 150 ctest --test-dir "$root/build" -L gpu \
        -R 'Fp8GemmGpu' -j 6 --timeout 140 --output-on-failure >"$out/bss_tests.log" 2>&1 &
      tests_pid=$!
      (
        export TILEJIT_TEMPLATE_DIR="$root/build/variants/bss"
        for a in "--m 4096 --n 4096 --k 4096" "--m 1001 --n 777 --k 515" "--m 1000 --n 777 --k 515" "--m 333 --n 4100 --k 640 --out-dtype f32" \
          "--m 2048 --n 4096 --k 1024 -e d=gelu(acc+bias[n])" "--m 1536 --n 2048 --k 1024 -e d=acc*scale[m]+residual" \
          "--m 520 --n 1000 --k 1024" "--m 1001 --n 777 --k 515 -c wgmma:192x128x128:64x128:3" \
          "--m 4096 --n 2048 --k 2048 -c wgmma:192x128x128:64x128:4 --layout TN"; do
          c="-c wgmma:128x256x128:64x256:3"
          case "$a" in *-c*) c="" ;; esac
          l="--layout NT"
          case "$a" in *--layout*) l="" ;; esac
          timeout 60 "$bin/tilejit" gemm $a $l --dtype e4m3 --block-scales $c --check 2>&1 | grep -E "check|rror" | tr '\n' ' '
          echo " <- $a"
        done
        timeout 60 compute-sanitizer --tool memcheck "$bin/tilejit" gemm --m 1001 --n 777 --k 515 --layout NT --dtype e4m3 --block-scales \
          -c wgmma:128x256x128:64x256:3 --check 2>&1 | tail -2
        timeout 60 compute-sanitizer --tool racecheck "$bin/tilejit" gemm --m 1000 --n 520 --k 640 --layout NT --dtype e4m3 --block-scales \
          -c wgmma:128x256x128:64x256:3 --check 2>&1 | tail -2
      ) >"$out/bss_checks.log" 2>&1
      cat "$out/bss_checks.log"
      wait_for_step "$tests_pid" bss_tests
      block_scale_ab bss "graph graph stream" new bsnu bss
      block_scale_ab_summary bss
      gather_logs bss_ i33_bss.txt
      src_prof bsp_bss env TILEJIT_TEMPLATE_DIR="$root/build/variants/bss" "$bin/tilejit" gemm --m 8192 --n 8192 --k 8192 --layout NT \
        --dtype e4m3 --bench --runs 3 -c wgmma:128x256x128:64x256:3 --block-scales
      ;;
    i33-bs-offset)
      # Issue 15 (about 90 s): consumer 1 of the block-scaled 128x256 kernel starts each tile 100, 160
      # or 300 clocks after consumer 0 (docs/experiments/block_scale_consumer_offset.diff), so that
      # their MMA groups do not finish together; three float64 checks of the 160 variant, then main
      # and the three alternating, graph then stream, beside cuBLASLt's per-tensor GEMM.
      for d in 100 160 300; do
        mk_diff_variant "bsd$d" docs/experiments/block_scale_consumer_offset.diff
        sed -i "s/#define CONSUMER_OFFSET_CLOCKS 160/#define CONSUMER_OFFSET_CLOCKS $d/" "$root/build/variants/bsd$d/gemm_wgmma.cuh"
      done
      for a in "--m 4096 --n 4096 --k 4096" "--m 1001 --n 777 --k 515" "--m 2048 --n 4096 --k 1024 -e d=gelu(acc+bias[n])"; do
        TILEJIT_TEMPLATE_DIR="$root/build/variants/bsd160" timeout 60 "$bin/tilejit" gemm $a --layout NT --dtype e4m3 --block-scales \
          -c wgmma:128x256x128:64x256:3 --check 2>&1 | grep -E "check|rror" | tr '\n' ' '
        echo " <- bsd160 $a"
      done
      block_scale_ab bsd "graph stream" new bsd100 bsd160 bsd300
      block_scale_ab_summary bsd
      gather_logs bsd_ i33_bsd.txt
      ;;
    i34-ffma)
      # Issue 15 (about 130 s; ran 2026-12-07 16:3xZ, dropped): needs docs/experiments/ffma_interleave.diff
      # applied and built. The block-scaled kernel's accumulating FFMAs made yieldable in the
      # first 6, 9 or 16 sixteenths of each run (TILEJIT_INTERLEAVE_FFMA, jit/ffma_interleave.hpp):
      # float64 checks and the FP8 GPU tests with 16, then main and the three alternating, graph then
      # stream, beside cuBLASLt's per-tensor GEMM.
      for n in 9 16; do
        for a in "--m 4096 --n 4096 --k 4096" "--m 1001 --n 777 --k 515" "--m 2048 --n 4096 --k 1024 -e d=gelu(acc+bias[n])"; do
          TILEJIT_INTERLEAVE_FFMA=$n timeout 60 "$bin/tilejit" gemm $a --layout NT --dtype e4m3 --block-scales --check 2>&1 |
            grep -E "check|rror" | tr '\n' ' '
          echo " <- ffma$n $a"
        done
      done
      step ffm_tests 6 env TILEJIT_INTERLEAVE_FFMA=16 timeout 120 "$root/build/bin/tilejit_gpu_tests" --gtest_filter='Fp8GemmGpu.*:UserKernelsGpu.*Interleave*'
      block_scale_ab ffm "graph stream" new ffma6 ffma9 ffma16
      block_scale_ab_summary ffm
      gather_logs ffm_ i34_ffma.txt
      ;;
    i34-go)
      # The thirty-third session's first call (about 460 s): the rotate GPU test, the FFMA-yield
      # experiment (i34-ffma), the consumer-offset one (i33-bs-offset), the headline grids.
      step rot_test 12 timeout 120 "$root/build/bin/tilejit_gpu_tests" --gtest_filter='GemmGraphGpu.BenchRotatesInputsThroughCopies'
      "$0" i34-ffma
      "$0" i33-bs-offset
      "$0" i29-headline
      ;;
    i34-last)
      # The thirty-third session's last call (about 300 s). Issue 15's memory-bound e4m3 shapes
      # (128x8192x8192 reads B at 83% of the copy rate with 64x128 tiles, each B tile read by both tile
      # rows): tile shapes that read B once (swapped, 128-row tiles, clusters), float64 checks of them,
      # then graph and stream sweeps; 16x8192x8192 likewise. Issue 12's bf16 128x8192x8192 with the
      # swapped tile. The persistent grid's group of tile rows (8) as 4 and 16 on the large bf16 shapes.
      e4_m128="default,wgmma:64x128x128:64x128:8:c2,wgmma:128x64x128:64x64:8,wgmma:64x128x128:64x128:8:sw,wgmma:64x64x128:64x64:8:sw,wgmma:128x64x128:64x64:8:sw"
      e4_m16="default,wgmma:64x16x512:64x16:4:sw,wgmma:64x32x256:64x32:6:sw,wgmma:128x16x256:64x16:6:sw"
      for c in wgmma:64x128x128:64x128:8:sw wgmma:64x64x128:64x64:8:sw wgmma:128x64x128:64x64:8:sw wgmma:128x64x128:64x64:8; do
        for a in "--m 128 --n 8192 --k 8192" "--m 129 --n 1000 --k 2056"; do
          timeout 60 "$bin/tilejit" gemm $a --layout NT --dtype e4m3 -c $c --check 2>&1 | grep -E "check|rror" | tr '\n' ' '
          echo " <- $c $a"
        done
      done
      for m in graph stream; do
        step "last_e4_m128_$m" 0 timeout 60 "$bin/tilejit" bench gemm --dtype e4m3 --method $m --layout NT --shapes 128x8192x8192 \
          --config "$e4_m128" --runs 3 --group-ms 20 --rounds 3
        step "last_e4_m16_$m" 0 timeout 60 "$bin/tilejit" bench gemm --dtype e4m3 --method $m --layout NT --shapes 16x8192x8192 \
          --config "$e4_m16" --runs 3 --group-ms 20 --rounds 3
        step "last_bf16_m128_$m" 0 timeout 60 "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT,NN --shapes 128x8192x8192 \
          --config default,wgmma:64x128x64:64x128:8:sw,wgmma:64x128x64:64x128:8:c2 --runs 3 --group-ms 20 --rounds 3
      done
      mk_variant group4 's/tile_coords<8>(tile % per_batch/tile_coords<4>(tile % per_batch/'
      mk_variant group16 's/tile_coords<8>(tile % per_batch/tile_coords<16>(tile % per_batch/'
      for m in graph stream; do
        for v in new group4 group16; do
          variant_cli $v
          step "last_group_${m}_$v" 0 timeout 60 "${run[@]}" bench gemm --dtype bf16 --method $m --layout NT,NN \
            --shapes 4096x4096x4096,8192x8192x8192,12288x4096x4096 --runs 3 --group-ms 20 --rounds 2
        done
      done
      bench_rows last_
      gather_logs last_ i34_last.txt
      ;;
    i34-final)
      # About 150 s. Issue 15's e4m3 per-tensor 4096^3 / 8192^3 (0.96-1.02; under 1.00 on the stream)
      # and issue 12's bf16 12288x4096x4096 (0.98-1.00): the heuristic's tile beside clusters of two
      # (B's tile multicast to both blocks of a pair: half the L2 reads) and other stage counts.
      for m in graph stream; do
        step "fin_e4_$m" 0 timeout 90 "$bin/tilejit" bench gemm --dtype e4m3 --method $m --layout NT --shapes 4096x4096x4096,8192x8192x8192 \
          --config default,wgmma:128x256x128:64x256:3:c2,wgmma:128x256x128:64x256:4,wgmma:128x128x128:64x128:6:c2 --runs 3 --group-ms 20 --rounds 3
        step "fin_bf16_$m" 0 timeout 90 "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT,NN --shapes 12288x4096x4096,4096x4096x4096 \
          --config default,wgmma:128x256x64:64x256:4:c2,wgmma:128x256x64:64x256:3 --runs 3 --group-ms 20 --rounds 3
      done
      bench_rows fin_
      gather_logs fin_ i34_final.txt
      ;;
    i34-c2)
      # About 100 s. i34-final's e4m3 8192^3 ran clusters of two 3% above the heuristic's tile (0.991 /
      # 1.026 against 0.962 / 0.993) and 4096^3 1-3% below: the same with five rounds and 6144^3, both
      # methods, and float64 checks of the cluster configuration.
      check_specs c2_checks "8192 8192 8192 NT e4m3 wgmma:128x256x128:64x256:3:c2 none" "6000 4104 2056 NT e4m3 wgmma:128x256x128:64x256:3:c2 none"
      for m in graph stream; do
        step "c2_e4_$m" 0 timeout 90 "$bin/tilejit" bench gemm --dtype e4m3 --method $m --layout NT --shapes 4096x4096x4096,6144x6144x6144,8192x8192x8192 \
          --config default,wgmma:128x256x128:64x256:3:c2 --runs 3 --group-ms 20 --rounds 5
      done
      bench_rows c2_
      gather_logs c2_ i34_c2.txt
      ;;
    i35-tma)
      # Issue 12, 1000^3 (about 150 s; needs the TILEJIT_EXP_TMA_* change of
      # docs/experiments/tma_element_size.diff built): bf16 lines of 2000 bytes start off 32-byte
      # boundaries and TMA reads them at about half its rate. Whether the map's element size (bf16 moved
      # as 1-, 4- or 8-byte integers: the same bytes, the kernel's inner coordinate scaled in a template
      # variant) or the L2 promotion changes that: float64 checks of each, then graph and stream beside
      # cuBLAS at 1000^3, 1024^3 and 2040^3, NT and NN.
      for w in 1 4 8; do
        case $w in 1) f="c0 * 2" ;; 4) f="c0 \/ 2" ;; 8) f="c0 \/ 4" ;; esac
        rm -rf "$root/build/variants/tma_e$w" && mkdir -p "$root/build/variants" && cp -r "$root/kernels_templates" "$root/build/variants/tma_e$w"
        sed -i "/smem_addr(bar)), \"r\"(c0)/s/\"r\"(c0)/\"r\"($f)/" "$root/build/variants/tma_e$w/tilejit/sm90.cuh"
        echo "variant tma_e$w: $(diff -r "$root/kernels_templates" "$root/build/variants/tma_e$w" | grep -c '^>') lines changed"
      done
      for v in tma_e1 tma_e4 tma_e8 l2none; do
        check_specs --variant $v "tma_checks_$v" "1000 1000 1000 NT bf16 default none" "1000 1000 1000 NN bf16 default none" \
          "2040 2040 2040 NT bf16 default none" "1000 1000 1000 TN bf16 default none" "1000 1000 1000 TT bf16 default none"
      done
      bench_ab tma "graph stream" "new tma_e8 tma_e4 tma_e1 l2none l2128 new" 60 --dtype bf16 --layout NT,NN \
        --shapes 1000x1000x1000,1024x1024x1024,2040x2040x2040 --runs 3 --group-ms 20 --rounds 2
      bench_rows tma_
      gather_logs tma_ i35_tma.txt
      ;;
    i35-l2)
      # i35-tma found TMA's L2 promotion of 256 bytes (main) 5-10% slower than none or 128 at 1000^3,
      # 1024^3 and 2040^3 (H100): the same at the large and decode shapes, graph and stream.
      bench_ab l2 "graph stream" "new l2none l2128 new" 60 --dtype bf16 --layout NT,NN \
        --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192,16x8192x8192,1000x1000x1000,2040x2040x2040 --runs 3 --group-ms 20 --rounds 2
      bench_rows l2_ 9000
      gather_logs l2_ i35_l2.txt
      ;;
    i35-l2rule)
      # About 100 s, needs docs/experiments/tma_element_size.diff on top of the rule: L2 promotion of
      # 128 bytes for rows off 128-byte boundaries (new) against 256 everywhere (TILEJIT_EXP_TMA_L2=256,
      # the old code), alternating, graph and stream, four layouts; float64 checks (an L2 promotion is a
      # cache hint: it cannot change results, and the bench rows carry their own check).
      check_specs rule_checks "1000 1000 1000 NN bf16 default none" "2040 2040 2040 TN bf16 default none" "1001 777 520 TT bf16 default none"
      bench_ab rule "graph stream" "l2256 new l2256 new" 60 --dtype bf16 --layout NT,NN,TN,TT \
        --shapes 1000x1000x1000,2040x2040x2040,4088x4088x4088 --runs 3 --group-ms 20 --rounds 2
      bench_rows rule_ 9000
      gather_logs rule_ i35_l2rule.txt
      ;;
    i36-box)
      # Issue 12, 1000^3 (about 200 s; needs docs/experiments/tma_box_rows.diff built): operands whose
      # rows start off 128-byte boundaries. The fifteenth session found B's 128-row boxes slow where
      # A's 64-row ones were not, and clusters of two (B in 64-row halves) gained 17%; cuBLAS runs
      # 1000^3 on 128x64 tiles in pairs (every box 64 rows). Boxes of at most 64 or 32 rows (box64,
      # box32: the kernel issues one TMA load per piece) against main, then 128-row tiles with
      # 64-row boxes at 1000^3. Correctness first: float64 checks and the wgmma GPU tests with box32.
      check_specs --variant box32 bx36_checks32 "1000 1000 1000 NT bf16 default none" "1000 1000 1000 TT bf16 default none" \
        "2040 2040 2040 NT bf16 default none" "1001 777 520 TN bf16 default none" "1000 1000 1000 NT e4m3 default none" \
        "1000 1000 1000 NT bf16 wgmma:128x64x64:64x64:8:c2 none" "300 1000 1000 NT f16 wgmma:192x128x64:64x128:4 none" \
        "1024 1024 1024 NT f32 default none" "16 8192 8192 NT bf16 default none"
      check_specs --variant box64 bx36_checks64 "2040 2040 2040 TT bf16 default none" "1000 1000 1000 NT bf16 wgmma:128x64x128:64x64:4:c2 none" \
        "4096 4096 4096 NT e4m3 default none"
      step bx36_gpu_tests 30 timeout 200 env TILEJIT_EXP_BOX_ROWS=32 ctest --test-dir "$root/build" -L gpu -R "GemmGpuWgmma|Fp8GemmGpu" -j 16
      bench_ab bx36 "graph stream" "new box64 box32 new" 60 --dtype bf16 --layout NT,NN,TN,TT \
        --shapes 1000x1000x1000,1024x1024x1024,2040x2040x2040,4088x4088x4088 --runs 3 --group-ms 20 --rounds 2
      bench_ab bx36big "graph" "new box64 new box64" 60 --dtype bf16 --layout NT,NN \
        --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192 --runs 3 --group-ms 20 --rounds 2
      "$0" i36-cfg
      bench_rows bx36 12000
      gather_logs bx36 i36_box.txt
      ;;
    i36-cfg)
      # 128-row tiles with 64-row boxes at 1000^3 (about 40 s; in i36-box's first run its NN layout
      # refused the c2 configurations, whose row-major B would split in 64-column halves). NT and TT: B column-major.
      bench_ab bx36cfg "graph stream" "box64 new" 90 --dtype bf16 --layout NT,TT --shapes 1000x1000x1000 \
        --config default,wgmma:128x64x64:64x64:8,wgmma:128x64x64:64x64:8:c2,wgmma:128x64x128:64x64:4:c2,wgmma:128x128x64:64x128:4:c2 \
        --runs 3 --group-ms 20 --rounds 2
      bench_rows bx36cfg 6000
      gather_logs bx36cfg i36_cfg.txt
      ;;
    i36-pack)
      # Issue 12, 1000^3 (about 300 s; needs docs/experiments/in_kernel_pack.diff built): operands whose
      # lines start off 32-byte boundaries copied by the GEMM kernel itself into 128-byte aligned lines
      # of the workspace (every block copies a share, counts it done, and TMA reads the copy once the
      # count is complete): a separate copy kernel cost more than it saved (fifteenth session).
      # Correctness first (float64 checks, then the wgmma and graph GPU tests with A and B packed:
      # their odd shapes get packed wherever lines are off 32 bytes), then graph and stream against main.
      # A hang (blocks waiting for counts that never come) would eat the call: one smoke check first.
      variant_cli pkab
      if ! timeout 30 "${run[@]}" gemm --m 1000 --n 1000 --k 1000 --layout NT --dtype bf16 --check 2>&1 | tee "$out/pk36_smoke.log" | grep -q PASS; then
        echo "i36-pack: smoke check failed or hung; skipped"; cat "$out/pk36_smoke.log"; gather_logs pk36 i36_pack.txt; continue
      fi
      check_specs --variant pkab pk36_checks "1000 1000 1000 NT bf16 default none" "1000 1000 1000 NN bf16 default none" \
        "1000 1000 1000 TN bf16 default none" "1000 1000 1000 TT bf16 default none" "1001 777 520 NT bf16 default none" \
        "999 1000 1000 TN f16 default none" "1000 1000 1008 NT e4m3 default none" "3000 3000 1000 NT bf16 default none" \
        "2000 4000 1000 NN bf16 default none" "1000 1000 1000 NT bf16 wgmma:128x128x64:64x128:4 none" \
        "1000 1000 1000 NT bf16 default gelu(acc+bias[n])"
      check_specs --variant pkab_256 pk36_checks256 "1000 1000 1000 NT bf16 default none" "1000 1000 1000 NN bf16 default none" \
        "2040 2040 2040 TT bf16 default none"
      check_specs --variant pkabc pk36_checks_coop "1000 1000 1000 NT bf16 default none" "1000 1000 1000 TN bf16 wgmma:128x128x64:64x128:4 none"
      step pk36_gpu_tests 30 timeout 240 env TILEJIT_EXP_PACK_IN_KERNEL=ab ctest --test-dir "$root/build" -L gpu -R "GemmGpuWgmma|GemmGraphGpu" -j 16
      bench_ab pk36 "graph stream" "new pkb pkab pkab_256 pkabc new" 60 --dtype bf16 --layout NT,NN,TN,TT \
        --shapes 1000x1000x1000,2040x2040x2040,3000x3000x3000 --runs 3 --group-ms 20 --rounds 2
      bench_rows pk36 12000
      gather_logs pk36 i36_pack.txt
      ;;
    i36-go)
      # What the thirty-fifth session left unrun (build with docs/experiments/tma_element_size.diff):
      # on an H200 the headline grids first, i36-second (about 310-450 s: what the issues name the card
      # for), then the landed L2 rule in four layouts, i35-l2rule (about 100 s); on another card the rule,
      # then the GEMM GPU tests (about 150 s), which have not run since the rule landed.
      if on_h200; then
        "$0" i36-second i35-l2rule
      else
        "$0" i35-l2rule
        step i36_tests 8 timeout 200 ctest --test-dir "$root/build" -R "GemmGpuWgmma|GemmGpuGraph|GemmGpuMisc" -j 16 --output-on-failure
      fi
      ;;
    i38-gemv)
      # Kind gemv (new, never run; about 250 s): its GPU tests, then decode shapes against the
      # heuristic's pick and cuBLAS(Lt) in the same rounds, graph and stream, inputs rotated past L2.
      # A gemv configuration's BK is K per warp step of 32 lane runs for a column-major B and the rows
      # a warp takes at once for a row-major one, so each B layout has commands of its own (a
      # configuration refused for one layout aborts its command).
      step gemv_tests 12 timeout 240 ctest --test-dir "$root/build" -R "GemmGpuGemv|GemmGpuGraph|GemmTuningGpu.Decode" -j 16 --output-on-failure
      gv() {  # NAME "DTYPE OPTIONS" LAYOUTS SHAPES CONFIGS
        local m
        for m in graph stream; do
          # shellcheck disable=SC2086
          step "gv_$1_$m" 0 timeout 100 "$bin/tilejit" bench gemm $2 --method $m --layout "$3" --shapes "$4" --config "$5" \
            --runs 3 --group-ms 20 --rounds 2 --rotate auto
        done
      }
      gv m1_kmajor "--dtype bf16" NT,TT 1x4096x4096,1x8192x8192 \
        default,gemv:1x8x256:1x1:4,gemv:1x8x256:1x1:8,gemv:1x16x256:1x2:4,gemv:1x4x256:1x1:4
      gv m1_nmajor "--dtype bf16" NN,TN 1x4096x4096,1x8192x8192 \
        default,gemv:1x32x8:1x32:4,gemv:1x32x8:1x32:8,gemv:1x16x16:1x16:8,gemv:1x8x32:1x8:8,gemv:1x64x8:1x32:8
      gv m8_kmajor "--dtype bf16" NT 4x4096x4096,8x8192x8192 default,gemv:4x8x256:4x1:4,gemv:8x8x256:8x1:4
      gv m8_nmajor "--dtype bf16" NN 4x4096x4096,8x8192x8192 default,gemv:4x32x8:4x32:4,gemv:8x32x8:8x32:4
      gv e4m3_kmajor "--dtype e4m3" NT 1x4096x4096,1x8192x8192 default,gemv:1x8x512:1x1:4,gemv:1x16x512:1x2:4
      gv e4m3_nmajor "--dtype e4m3" TN 1x4096x4096,1x8192x8192 default,gemv:1x64x8:1x64:4,gemv:1x32x16:1x32:8
      gv tf32_nmajor "--dtype f32 --math tf32" NN 1x4096x4096,1x8192x8192 default,gemv:1x16x8:1x16:8,gemv:1x32x4:1x32:8
      gv n1_swapped "--dtype bf16" NT 4096x1x4096,8192x1x8192 default,gemv:1x8x256:1x1:4:sw,gemv:1x4x256:1x1:4:sw
      # The K-major B through bulk copies into a ring per warp (docs/experiments/gemv_bulk.diff, a
      # template variant) against the lanes' own loads, in the same commands' order.
      mk_diff_variant gvbulk docs/experiments/gemv_bulk.diff
      check_specs --variant gvbulk gv_bulk_checks "1 4096 4096 NT bf16 gemv:1x8x256:1x1:8 none" \
        "3 1000 1032 NT bf16 gemv:4x8x256:4x1:4 none" "1 8192 8200 TT bf16 gemv:1x16x256:1x2:4 none" \
        "5 520 1032 NT f16 gemv:8x8x256:8x1:4 none" "1 2048 4096 NT e4m3 gemv:1x8x512:1x1:4 none"
      bench_ab gv_bulk "graph stream" "new gvbulk" 100 --dtype bf16 --layout NT --shapes 1x4096x4096,1x8192x8192,1x14336x4096 \
        --config gemv:1x8x256:1x1:8,gemv:1x4x256:1x1:4,gemv:1x16x256:1x2:4 --runs 3 --group-ms 20 --rounds 2 --rotate auto
      bench_rows gv_ 9000
      gather_logs gv_ i38_gemv.txt
      ;;
    i38-gemv-prof)
      # Kind gemv under ncu (about 60 s; for after i38-gemv): DRAM throughput, occupancy and warp
      # states of bf16 1x4096x4096 NT and NN on gemv configurations and on the heuristic's kernel.
      for spec in "NT gemv:1x8x256:1x1:4" "NT gemv:1x4x256:1x1:4" "NN gemv:1x16x16:1x16:8" "NN gemv:1x8x32:1x8:8" "NT default" "NN default"; do
        read -r lay cfg <<<"$spec"
        cf=() && [ "$cfg" != default ] && cf=(-c "$cfg")
        name="gvp_${lay}_${cfg//[:x]/_}"
        ncu --clock-control none -k regex:gemm_ -s 3 -c 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section Occupancy --section LaunchStats --section WarpStateStats -f -o "$out/$name" \
          "$bin/tilejit" gemm --m 1 --n 4096 --k 4096 --layout "$lay" --dtype bf16 "${cf[@]}" --bench --runs 3 >"$out/$name.log" 2>&1
        ncu -i "$out/$name.ncu-rep" --page details >>"$out/$name.log" 2>&1
        rm -f "$out/$name.ncu-rep"
        echo "== $name"
        grep -E "Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread|Stall Long Scoreboard|Warp Cycles Per Issued" "$out/$name.log" | head -9
      done
      gather_logs gvp_ i38_gemv_prof.txt
      ;;
    i38-go)
      # The thirty-eighth session's first call: kind gemv (i38-gemv, about 330 s), then on a card other
      # than an H200 the L2 rule in four layouts (i35-l2rule, about 100 s; needs
      # docs/experiments/tma_element_size.diff built). On an H200 the headline grids (about 225 s under
      # graph) do not fit beside it: a second call runs i37-short.
      "$0" i38-gemv
      on_h200 || "$0" i35-l2rule
      ;;
    i37-short)
      # i36-go cut to about 250 s for a call with little device time left: on an H200 the headline
      # grids under graph only; elsewhere the L2 rule in four layouts.
      if on_h200; then HL_METHODS=graph "$0" i29-headline; else "$0" i35-l2rule; fi
      ;;
    i36-second)
      # The issues' headline grids and f16 on the H200 (about 310 s), not run on one since the thirty-first session.
      "$0" i29-headline
      "$0" i31-f16
      ;;
    i35-second)
      # The thirty-fourth session's second call: i35-l2rule (about 100 s; under 600 s of device time
      # were left, too little for the H200 headline grids beside it).
      "$0" i35-l2rule
      ;;
    i35-go)
      # The thirty-fourth session's first call: i35-tma (about 180 s), then on an H200 the three issues'
      # headline grids and the f16 large grid (about 310 s), which the issues name the H200 for and
      # which have run only on H100s since the thirty-first session; elsewhere i34-c2 (about 100 s).
      "$0" i35-tma
      if on_h200; then "$0" i29-headline i31-f16; else "$0" i34-c2; fi
      ;;
    i34-first)
      # The thirty-third session's first call (about 330 s): the GPU test of bench gemm --rotate (new,
      # unrun), the consumer-offset experiment (i33-bs-offset, unrun), then the three issues' headline
      # grids with the rotated decode line (i29-headline).
      step rot_test 12 timeout 120 "$root/build/bin/tilejit_gpu_tests" --gtest_filter='GemmGraphGpu.BenchRotatesInputsThroughCopies'
      "$0" i33-bs-offset
      "$0" i29-headline
      ;;
    i33-rotate)
      # Issue 12 (about 60 s): the decode shapes with A and B rotated through copies (bench gemm
      # --rotate auto: twice L2), so that a replayed group streams B from DRAM as an application's
      # next GEMM does, beside the same command without rotation; graph and stream.
      for m in graph stream; do
        for r in auto 1; do
          step "rot_${m}_$r" 0 timeout 60 "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NN,NT,TN,TT \
            --shapes 1x4096x4096,16x8192x8192,32x8192x8192 --runs 3 --group-ms 20 --rounds 2 --rotate $r
        done
      done
      gather_logs rot_ i33_rotate.txt
      ;;
    i32-bs-profile)
      # Issue 15 (about 120 s): where the default block-scaled kernel (128x256 tiles, n128 halves) waits,
      # per SASS instruction, beside the per-tensor kernel on the same tiles (i15-stall profiled the
      # older 128x128 default): $out/bsp_*.log and bsp_*.sass.csv.
      g="gemm --m 8192 --n 8192 --k 8192 --layout NT --dtype e4m3 --bench --runs 3 -c wgmma:128x256x128:64x256:3"
      src_prof bsp_blocks "$bin/tilejit" $g --block-scales
      src_prof bsp_tensor "$bin/tilejit" $g
      ;;
    i32-epi-parts)
      # Issue 14 (about 150 s): which part of GELU + bias costs. On 2026-12-07 the gelu_tanh body (about
      # 8 instructions an element) cost 3.6% of the plain rate, the erf form (18) 4.2%: the cost is
      # not mostly the GELU's arithmetic. Bodies: one reading no input (d = acc * 0.5), the GELU alone in both
      # forms, the bias alone, both; each beside the plain GEMM in the same rounds, graph and stream,
      # twice.
      for r in 1 2; do
        for m in graph stream; do
          step "ep_${m}_$r" 0 timeout 70 "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT,NN \
            --shapes 4096x4096x4096,8192x8192x8192 --runs 3 --group-ms 20 --rounds 2 -e none -e 'd = acc * 0.5' -e 'd = gelu(acc)' \
            -e 'd = gelu_tanh(acc)' -e 'd = acc + bias[n]' -e 'd = gelu(acc + bias[n])'
        done
      done
      gather_logs ep_ i32_epi_parts.txt
      ;;
    i31-f16)
      # Issue 12's large grid in f16 (the headline has bf16 only), graph and stream, cuBLAS in the same
      # command (about 90 s).
      for m in graph stream; do large_grid "f16_large_$m" 120 f16 $m; done
      grep -h -E "^[0-9]+x[0-9]+x[0-9]+ " "$out"/f16_*.log | awk '{print $1, $2, $5}' | tr '\n' ';' | head -c 3000
      gather_logs f16_ i31_f16.txt
      ;;
    i29-headline)
      # The three issues' headline grids on the final code in one call (about 450 s): issue 12's large
      # and small bf16 grids under graph and stream; issue 14's two bodies beside cuBLASLt's fused
      # bias + GELU; issue 15's e4m3 shapes per-tensor and block-scaled. Each bench has cuBLAS / cuBLASLt
      # in the same command. HL_METHODS=graph runs half of it (about 225 s) when device time is short.
      for m in ${HL_METHODS:-graph stream}; do
        large_grid "hl_bf16_large_$m" 150 bf16 $m
        step "hl_bf16_small_$m" 0 timeout 100 "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NN,NT,TN,TT \
          --shapes 1000x1000x1000,128x8192x8192,4095x4095x4095,1x4096x4096,16x8192x8192,32x8192x8192 --runs 3 --group-ms 30 --rounds 3
        # 1x4096x4096's B (32 MiB) fits L2: also timed with inputs rotated past it (the decode figure).
        step "hl_bf16_decode_rot_$m" 0 timeout 40 "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NN,NT,TN,TT \
          --shapes 1x4096x4096 --runs 3 --group-ms 30 --rounds 3 --rotate auto
        step "hl_epi_$m" 0 timeout 80 "$bin/tilejit" bench gemm --dtype bf16 --method $m --layout NT,NN --shapes 4096x4096x4096,8192x8192x8192 \
          --runs 3 --group-ms 20 --rounds 3 -e none -e 'd = gelu(acc + bias[n])' -e 'd = acc * scale[m] + residual'
        step "hl_e4m3_$m" 0 timeout 80 "$bin/tilejit" bench gemm --dtype e4m3 --method $m --layout NT \
          --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192,16x8192x8192,4095x4095x4095 --runs 3 --group-ms 20 --rounds 3
        step "hl_e4m3b_$m" 0 timeout 60 "$bin/tilejit" bench gemm --dtype e4m3 --block-scales --method $m --layout NT \
          --shapes 4096x4096x4096,8192x8192x8192,128x8192x8192 --runs 3 --group-ms 20 --rounds 3
      done
      grep -h -E "^[0-9]+x[0-9]+x[0-9]+ " "$out"/hl_*.log | awk '{print $1, $2, $5}' | sort | uniq | tr '\n' ';' | head -c 6000
      gather_logs hl_ i29_headline.txt
      ;;
    *) echo "unknown step $what" ;;
  esac
done
