#!/usr/bin/env bash
# The light and the full install from this checkout into fresh virtual environments, timed, with their sizes
# (docs/INSTALL.md). No pip cache, so every wheel is fetched (or read from the local wheel folder pip is set to use).
#
#   benchmarks/install_size.sh [WORKDIR]     (default /tmp/betaconform-install; removed and made again)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-/tmp/betaconform-install}
python=${PYTHON:-python3}
rm -rf "$work" && mkdir -p "$work"

step() {  # name, then the command; prints the wall time in seconds
  local name=$1; shift
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > "$work/$name.log" 2>&1
  t1=$(date +%s.%N)
  printf '%s: %.1f s\n' "$name" "$(echo "$t1 - $t0" | bc)"
}

step light-venv "$python" -m venv "$work/light"
step light-install "$work/light/bin/pip" install --no-cache-dir --disable-pip-version-check "$here"
echo "light size: $(du -sh "$work/light" | cut -f1)"
"$work/light/bin/python" -c "import torch" 2>/dev/null && echo "light: torch importable (unexpected)" || echo "light: torch not importable"

step full-venv "$python" -m venv "$work/full"
step full-torch "$work/full/bin/pip" install --no-cache-dir --disable-pip-version-check torch==2.13.0
step full-install "$work/full/bin/pip" install --no-cache-dir --disable-pip-version-check "$here[embeddings,plot]"
echo "full size: $(du -sh "$work/full" | cut -f1)"
