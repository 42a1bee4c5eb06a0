#!/usr/bin/env bash
# Sets up (Debian packages, configure, build) and runs the main job: `tilejit demo`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/tools/setup.sh" >/dev/null
exec "${TILEJIT_BUILD_DIR:-$root/build}/bin/tilejit" demo "$@"
