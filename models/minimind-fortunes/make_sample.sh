#!/usr/bin/env bash
# make_sample.sh — train-sample.txt, the Train tab's built-in text: every 80th fortune of the
# corpus make_corpus.sh writes (Chinese and English alike), the documents separated by a blank
# line, about 60 KB.
#   bash models/minimind-fortunes/make_sample.sh   (needs: apt-get install -y fortunes-zh fortunes)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=$(mktemp)
trap 'rm -f "$corpus" "$here/train-sample.txt.tmp"' EXIT
bash "$here/make_corpus.sh" "$corpus" > /dev/null
awk 'BEGIN { RS = "\n%\n"; n = 0 } { gsub(/^\n+|\n+$/, ""); if ($0 != "" && n++ % 80 == 0) printf "%s\n\n", $0 }' \
    "$corpus" > "$here/train-sample.txt.tmp"
mv "$here/train-sample.txt.tmp" "$here/train-sample.txt"
echo "wrote $here/train-sample.txt ($(wc -c < "$here/train-sample.txt") bytes)"
