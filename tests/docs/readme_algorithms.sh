#!/usr/bin/env bash
# The README's algorithm tables against `a2a list` (the registry): every
# algorithm of each collective has a row naming it, and every name the
# tables give is one the registry knows.
set -euo pipefail
a2a=$1 readme=$2
listed() {  # the names `a2a list` prints under the collective's heading
  "$a2a" list | awk -v want="$1" '/^A2A_/ {on = ($1 == want)} on && /^  [a-z]/ {print $1}' | sort -u
}
table() {  # backticked names at the start of spec cells of the n-th table after "## Algorithms"
  awk -v n="$1" '/^## Algorithms/ {on = 1} /^## / && !/Algorithms/ {on = 0}
    on && /^\| spec/ {t++} on && t == n && /^\| `/ {print}' "$readme" |
    cut -d'|' -f2 | grep -o '`[a-z0-9-]*' | tr -d '`' | sort -u
}
rc=0
for pair in "A2A_Alltoall 1" "A2A_Alltoallv 2"; do
  set -- $pair
  want=$(listed "$1") have=$(table "$2")
  [ -n "$want" ] && [ -n "$have" ] || { echo "no algorithms found for $1"; exit 1; }
  missing=$(comm -23 <(echo "$want") <(echo "$have"))
  unknown=$(comm -13 <(echo "$want") <(echo "$have"))
  [ -z "$missing" ] || { echo "$1: in a2a list, not in the README: $missing"; rc=1; }
  [ -z "$unknown" ] || { echo "$1: in the README, not in a2a list: $unknown"; rc=1; }
done
[ $rc -eq 0 ] && echo "README algorithm tables match a2a list"
exit $rc
