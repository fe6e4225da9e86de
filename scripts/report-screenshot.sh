#!/usr/bin/env bash
# Remake docs/report-sample.png: the HTML report of sample_data/ as headless Chromium (Debian's `chromium`) draws
# it, offline, cut to the top of the page and stored with a 256-colour palette (small, colours kept).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
.venv/bin/betaconform fit sample_data/ --max-error 0.2 --at-k 5 -o "$tmp/report.html" --no-step-summary > /dev/null 2>&1 || true
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --host-resolver-rules="MAP * ~NOTFOUND" \
  --window-size=900,1250 --screenshot="$tmp/shot.png" "file://$tmp/report.html" 2> /dev/null
.venv/bin/python -c "
import sys
from PIL import Image
Image.open(sys.argv[1]).convert('RGB').quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(sys.argv[2], optimize=True)
" "$tmp/shot.png" docs/report-sample.png
echo "wrote docs/report-sample.png"
