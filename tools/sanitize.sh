#!/usr/bin/env bash
# Builds the library and its tests with a sanitizer and runs every test that needs no GPU:
#   tools/sanitize.sh asan   (AddressSanitizer + UndefinedBehaviorSanitizer, leaks included)
#   tools/sanitize.sh tsan   (ThreadSanitizer)
# Left out, because they do on purpose what the sanitizer reports: NoDriver.ALeakedRuntime* leaks a
# Runtime (and its thread); Fork.* children exit holding their parent's thread objects (TSan calls
# that a thread leak); install_find_package builds a consumer without the sanitizer's runtime.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kind="${1:-asan}"
case "$kind" in
  asan) flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" type=Debug ;;
  tsan) flags="-fsanitize=thread -fno-omit-frame-pointer" type=RelWithDebInfo ;;
  *) echo "usage: $0 asan|tsan" >&2; exit 2 ;;
esac
TILEJIT_SETUP_DEPS_ONLY=1 "$root/tools/setup.sh"
build_dir="${TILEJIT_BUILD_DIR:-$root/build-$kind}"
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$type" -DCUDAToolkit_ROOT=/usr/local/cuda -DTILEJIT_WARNINGS_AS_ERRORS=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="${flags%% -fno-*}"
cmake --build "$build_dir" --parallel "$(nproc)"
export TILEJIT_CACHE_DIR="$build_dir/test-cache"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1}"
ctest --test-dir "$build_dir" -LE gpu -E 'ALeakedRuntime|^Fork\.|install_find_package' --output-on-failure \
  --parallel "$(nproc)" --timeout 900
