#!/usr/bin/env bash
# make_corpus.sh — the training text of minimind-fortunes: the Tang poems, Song lyrics and Chinese
# sayings of Debian's fortunes-zh (its colour escapes removed) and the English fortunes of
# Debian's fortunes, one fortune per document (fortune files separate them with a line of "%").
#   bash models/minimind-fortunes/make_corpus.sh OUT.txt
# Needs: apt-get install -y fortunes-zh fortunes
set -euo pipefail
out=${1:?usage: make_corpus.sh OUT.txt}
dir=/usr/share/games/fortunes
for f in chinese tang300 song100; do
    [ -f "$dir/$f" ] || { echo "make_corpus.sh: $dir/$f is missing: apt-get install -y fortunes-zh" >&2; exit 1; }
done
english=(art computers cookie definitions education ethnic food fortunes goedel humorists kids knghtbrd
         law linux literature love magic medicine men-women miscellaneous news people pets platitudes
         politics riddles science songs-poems sports wisdom work zippy)
for f in "${english[@]}"; do
    [ -f "$dir/$f" ] || { echo "make_corpus.sh: $dir/$f is missing: apt-get install -y fortunes" >&2; exit 1; }
done
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
    # fortunes-zh colours its attributions with ANSI escapes (ESC [ ... m), a few of them nested
    # (ESC[; ESC[34;1m m): removed, twice
    for f in chinese tang300 song100; do
        LC_ALL=C sed -e 's/\x1b\[[0-9;]*m//g' -e 's/\x1b\[[0-9;]*m//g' "$dir/$f"
        echo '%'
    done
    for f in "${english[@]}"; do cat "$dir/$f"; echo '%'; done
} > "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "wrote $out ($(wc -c < "$out") bytes)"
