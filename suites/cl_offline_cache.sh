#!/usr/bin/env bash
# suites/cl_offline_cache.sh SRC WORK - cl_offline.sh's cache of passed rows
# holds only what passed, for exactly that content: a program that compiles
# cleanly passes and is remembered; a program with an undefined helper in the
# same row after it fails (its text differs, so nothing cached applies) and
# is never remembered; the clean one passes again from the cache.
set -u -o pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work" || exit 1
# shellcheck source=fail_count.sh
. "$(dirname "${BASH_SOURCE[0]}")/fail_count.sh"
# a stand-in for cl_program_dump: ROW OUT.cl OUT.opts, the program in $PROGRAM
cat >"$work/dump.sh" <<'SH'
#!/usr/bin/env bash
cp "$PROGRAM" "$2" && echo "-cl-std=CL1.2" >"$3"
SH
chmod +x "$work/dump.sh"
cat >"$work/good.cl" <<'CL'
static inline float helper(float v) { return v * 2.0f; }
__kernel void k(__global float *x) { x[get_global_id(0)] = helper(x[0]); }
CL
sed 's/^static inline/inline/' "$work/good.cl" >"$work/bad.cl"
export XO_CL_OFFLINE_CACHE=$work/cache
run() { PROGRAM=$work/$1 bash "$src/suites/cl_offline.sh" "$work/dump.sh" "$work/w" row; }

out=$(run good.cl) || fail "a clean program failed: $out"
grep -q "not compiled again" <<<"$out" && fail "the first run of a program came from the cache"
[ "$(ls "$work/cache" 2>/dev/null | wc -l)" = 1 ] || fail "the clean pass was not remembered"
out=$(run bad.cl) && fail "an undefined helper passed after a clean program (cache): $out"
grep -q "undefined: helper" <<<"$out" || fail "the bad program was not compiled: $out"
[ "$(ls "$work/cache" | wc -l)" = 1 ] || fail "a failing program was remembered"
out=$(run good.cl) || fail "the clean program failed the second time: $out"
grep -q "not compiled again" <<<"$out" || fail "the clean program was compiled again: $out"

fail_count_exit cl_offline_cache "all checks passed"
