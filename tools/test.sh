#!/usr/bin/env bash
# Sets up (Debian packages, configure, build) and runs every test with ctest. Tests labelled `gpu`
# skip cleanly on a machine without a GPU.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/tools/setup.sh"
build_dir="${TILEJIT_BUILD_DIR:-$root/build}"
# A private cache directory, so the tests never touch the user's kernel cache.
export TILEJIT_CACHE_DIR="${TILEJIT_CACHE_DIR:-$build_dir/test-cache}"
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" "$@"
