#!/usr/bin/env bash
# ci_isa_fallbacks.sh DIR - ci/lib.sh xo_isa_fallbacks on fake xo binaries
# whose `devices` line names each level the cpu backend can pick: the passes
# ci/test.sh runs again are the levels below it, never the level itself (the
# quick pass ran it) nor one above (the backend refuses it); a binary that
# names no level gets every level.
set -u
source "$(dirname "${BASH_SOURCE[0]}")/../ci/lib.sh"
dir=$1
rm -rf "$dir" && mkdir -p "$dir" || exit 1
fails=0

fake() { # fake NAME LEVEL: an xo whose devices line says isa=LEVEL
    printf '#!/bin/sh\necho "ref  available   ref: naive"\necho "cpu  available   cpu: isa=%s (vector 8 floats), threads=2"\n' \
        "$2" >"$dir/$1"
    chmod +x "$dir/$1"
}

check() { # check XO WANT...: xo_isa_fallbacks XO prints exactly WANT
    local got want
    got=$(xo_isa_fallbacks "$1" | tr '\n' ' ')
    want="${*:2}"
    want=${want:+$want }
    if [ "$got" != "$want" ]; then
        echo "FAILED: $1: got '$got', want '$want'"
        fails=$((fails + 1))
    fi
}

XO_ISA_LEVELS=(avx2 scalar)
fake xo512 avx512
fake xo2 avx2
fake xo0 scalar
printf '#!/bin/sh\nexit 3\n' >"$dir/broken" && chmod +x "$dir/broken"
check "$dir/xo512" avx2 scalar
check "$dir/xo2" scalar
check "$dir/xo0"
check "$dir/broken" avx2 scalar
[ $fails = 0 ] && echo "ci_isa_fallbacks: 4 machines, every pass as expected"
exit $((fails > 0))
