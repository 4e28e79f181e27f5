#!/usr/bin/env bash
# ci/planted_check.sh [OUT_TABLE] - planted slowdowns, one in each kind of file
# that builds a kernel, must be SLOWER in compare, continuous, bisect and
# detect alike, and a commit that changes only docs or tests must never be
# blamed (docs/perf.md "Kernel versions"; the nightly's planted stage).
#
# For each kind a temporary clone of this tree's HEAD gets three commits on
# top of it: docs (a line appended to docs/perf.md), the plant, tests (a
# comment appended to a suites/ file). The plants (each a large slowdown, so
# that the answer holds on a loaded machine):
#   .c       kernels/cpu.c: the cpu relu forward runs its kernel 8 times
#   .inc     kernels/cpu_kernels.inc: the sigmoid forward loop runs 8 times
#   .h       kernels/cpu.h: the kernels' vector width forced to 1
#   .cl      cl/kernels/act.cl: the relu forward adds 16 sin() per element
#   ops.def  include/xo/ops.def: the kernels' vector width forced to 1
#   flag     kernels/CMakeLists.txt: -O0 on the ISA files this CPU runs
# Every commit is built once (one Release build tree, rebuilt incrementally,
# as continuous and bisect build), and its xo with its xo.versions is placed
# where `--build-dir` finds it, so continuous and bisect reuse those builds.
# Then, per kind, on that kind's benchmark only:
#   record   PLANTED_RUNS (3) runs at each of base, docs, plant, tests into
#            one store
#   compare  plant^ plant SLOWER; docs^ docs and tests^ tests not SLOWER
#   continuous  plant^ plant exits 1 with SLOWER; base docs exits 0
#   bisect   --good base --bad tests names the plant
#   detect   a confirmed regression at the plant; nothing confirmed at docs
#            or tests
# A plant's cell is SLOWER, or what was said instead: LOWERED (its version
# missed the plant: "unchanged code"), UNKNOWN (compare's rule could not call
# it), "detected only" (detect put the step at the plant but did not confirm
# it), missed. The last lines are the table (kind x tool x verdict) and a
# summary; the
# table is also written to OUT_TABLE when given. PLANTED_KINDS (a space-
# separated subset of: c inc cl flag h opsdef, cheapest builds first) limits
# the kinds; each kind's verdicts are logged as it ends.
# Exit: 0 when every cell is right, 1 otherwise.
set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT_TABLE=${1:-}
KINDS=${PLANTED_KINDS:-c inc cl flag h opsdef}
# runs a commit: compare pools a commit's runs and asks their medians to
# separate too (Welch's t on the logs), which 2 + 2 runs under load could not
# show for a +700% slowdown (p 0.09); 3 + 3 can
RUNS=${PLANTED_RUNS:-3}
command -v git >/dev/null && git -C "$ROOT" rev-parse --verify -q HEAD >/dev/null || {
    echo "planted: skipped (no git history)"
    exit 0
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xo-planted-XXXXXX") || exit 1
[ -n "${PLANTED_KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
src=$tmp/src bdir=$tmp/build bd=$tmp/builds
start=$(date +%s)
log() { echo "planted [$(($(date +%s) - start)) s]: $*"; }
log "load $(cut -d' ' -f1-3 /proc/loadavg) at the start; work in $tmp"
git clone --quiet --shared "$ROOT" "$src" && git -C "$src" checkout --quiet --detach HEAD || exit 1
base=$(git -C "$src" rev-parse HEAD)
gitc() { git -C "$src" -c user.name=planted -c user.email=planted@localhost "$@"; }

# plant KIND: edits the clone's tree; prints the victim filter and devices
plant() {
    local isa
    case $1 in
    c) python3 - "$src/kernels/cpu.c" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
old = "\treturn ew_act(be, a, EW_RELU_FWD, false, 1);\n"
assert s.count(old) == 1, "cpu_relu_fwd not found"
s = s.replace(old, "\tfor (int planted = 0; planted < 7; planted++)\n"
              "\t\tew_act(be, a, EW_RELU_FWD, false, 1);\n" + old)
open(p, "w").write(s)
PY
       echo '^op/relu/fwd/.*/cpu$ cpu' ;;
    inc) python3 - "$src/kernels/cpu_kernels.inc" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
old = ("\tint64_t i = 0;\n\n\tfor (; i + VW <= count; i += VW)\n"
       "\t\tst(y + i, vsigmoid(ld(x + i)));\n")
i = s.index("static void XO_K(xo_cpu_sigmoid_fwd)")
assert s.find(old, i) == s.index(old, i) and s.index(old, i) - i < 200, "sigmoid loop not found"
new = ("\tint64_t i = 0;\n\n\tfor (int planted = 0; planted < 8; planted++)\n"
       "\t\tfor (i = 0; i + VW <= count; i += VW)\n"
       "\t\t\tst(y + i, vsigmoid(ld(x + i)));\n")
s = s[:i] + s[i:].replace(old, new, 1)
open(p, "w").write(s)
PY
       echo '^op/sigmoid/fwd/.*/cpu$ cpu' ;;
    h) python3 - "$src/kernels/cpu.h" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
end = s.rindex("#endif")
s = s[:end] + ("/* planted: the kernels' vector width forced to 1 */\n#ifdef XO_VW\n"
               "#undef XO_VW\n#define XO_VW 1\n#endif\n\n") + s[end:]
open(p, "w").write(s)
PY
       echo '^op/sigmoid/fwd/.*/cpu$ cpu' ;;
    cl) python3 - "$src/cl/kernels/act.cl" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
old = "\t\ty[yo + i] = xo_act(x[xo + i], XO_ACT_RELU);\n"
assert s.count(old) == 1, "xo_cl_relu_fwd not found"
s = s.replace(old, "\t{\n\t\tfloat v = x[xo + i], acc = 0.0f;\n\n"
              "\t\tfor (int r = 0; r < 16; r++) /* planted */\n"
              "\t\t\tacc += sin(v + (float)r);\n"
              "\t\ty[yo + i] = xo_act(v + 1e-30f * acc, XO_ACT_RELU);\n\t}\n")
s = s.replace("\tif (i < n)\n\t{", "\tif (i < n) {", 1)
open(p, "w").write(s)
PY
       echo '^op/relu/fwd/.*/cl$ cl' ;;
    opsdef) printf '%s\n' '/* planted: the kernels'"'"' vector width forced to 1 */' '#ifdef XO_VW' \
        '#undef XO_VW' '#define XO_VW 1' '#endif' >>"$src/include/xo/ops.def"
       echo '^op/sigmoid/fwd/.*/cpu$ cpu' ;;
    flag) isa=$("$bdir/cli/xo" devices 2>/dev/null | sed -n 's/.*cpu: isa=\([a-z0-9]*\).*/\1/p')
        python3 - "$src/kernels/CMakeLists.txt" "${isa:-avx2}" <<'PY'
import sys
p, isa = sys.argv[1], sys.argv[2]
mark = {"avx512": '"-mavx512f;', "avx2": '"-mavx2;', "scalar": '"-ffp-contract=fast;'}[isa]
s = open(p).read()
i = s.index(mark, s.index("COMPILE_OPTIONS", s.index("set_source_files_properties(cpu__" + isa)))
s = s[:i + 1] + "-O0;" + s[i + 1:]
open(p, "w").write(s)
PY
       echo '^op/sigmoid/fwd/.*/cpu$ cpu' ;;
    esac
}

# build the clone's checkout of sha into the shared tree; place xo for sha
build_at() {
    local sha=$1
    git -C "$src" checkout --quiet --detach "$sha" || return 1
    cmake -S "$src" -B "$bdir" -DCMAKE_BUILD_TYPE=Release >>"$tmp/build.log" 2>&1 &&
        cmake --build "$bdir" --target xo -j 2 >>"$tmp/build.log" 2>&1 ||
        { tail -30 "$tmp/build.log"; return 1; }
    [ -d "$bd/$sha" ] || git -C "$src" worktree add --quiet --detach "$bd/$sha" "$sha" || return 1
    mkdir -p "$bd/$sha/build/cli" &&
        cp "$bdir/cli/xo" "$bdir/cli/xo.versions" "$bd/$sha/build/cli/"
}

# the plant's verdict in a compare or continuous output (exit rc): SLOWER, or
# what it said instead (a lowered verdict would be a version that missed the
# plant; UNKNOWN the decision rule's indecision, with its reason)
word() {
    if [ "$1" -eq 1 ] && grep -q ' SLOWER' "$2"; then echo SLOWER; return; fi
    sed 's/^/    /' "$2" | tail -8 >&2
    if grep -q 'unchanged code\|environment' "$2"; then echo "LOWERED"
    elif grep -q '^op/.* UNKNOWN' "$2"; then echo "UNKNOWN"
    else echo "missed($1)"; fi
}

mkdir -p "$bd"
log "building the base $(git -C "$src" rev-parse --short HEAD) (Release, target xo)"
build_at "$base" || exit 1
declare -A V
results=()
cell() { V["$1,$2"]=$3; }
for k in $KINDS; do
    git -C "$src" checkout --quiet --detach "$base"
    echo "planted check: $k" >>"$src/docs/perf.md"
    gitc commit --quiet -am "planted check ($k): docs only" || exit 1
    docs=$(git -C "$src" rev-parse HEAD)
    spec=$(plant "$k") || { echo "planting $k failed"; exit 1; }
    filter=${spec% *} dev=${spec##* }
    gitc commit --quiet -am "planted check ($k): the slowdown" || exit 1
    pl=$(git -C "$src" rev-parse HEAD)
    echo "/* planted check: $k */" >>"$src/suites/test_perf_workflow.c"
    gitc commit --quiet -am "planted check ($k): tests only" || exit 1
    tests=$(git -C "$src" rev-parse HEAD)
    log "$k: building docs, plant, tests"
    for c in "$docs" "$pl" "$tests"; do build_at "$c" || exit 1; done
    cmp -s "$bd/$docs/build/cli/xo.versions" "$bd/$pl/build/cli/xo.versions" &&
        log "$k: the plant left every unit's version as it was (its verdicts will be lowered)"
    cmp -s "$bd/$base/build/cli/xo.versions" "$bd/$docs/build/cli/xo.versions" ||
        log "$k: the docs commit changed a unit's version"
    db=$tmp/$k.sqlite
    log "$k: recording $filter on $dev ($RUNS runs at each of 4 commits)"
    for c in "$base" "$docs" "$pl" "$tests"; do
        for r in $(seq 1 "$RUNS"); do
            XO_SOURCE_DIR=$bd/$c "$bd/$c/build/cli/xo" perf record --db "$db" --device "$dev" \
                --quick --filter "$filter" --no-progress >>"$tmp/$k.record.log" 2>&1 ||
                { tail -5 "$tmp/$k.record.log"; exit 1; }
        done
    done
    x=$bd/$tests/build/cli/xo
    # compare
    XO_SOURCE_DIR=$bd/$pl "$x" perf compare --db "$db" --filter "$filter" "$docs" "$pl" >"$tmp/$k.cmp" 2>&1
    rc=$?
    cell "$k" compare "$(word "$rc" "$tmp/$k.cmp")"
    for pair in "docs $base $docs" "tests $pl $tests"; do
        set -- $pair
        XO_SOURCE_DIR=$bd/$3 "$x" perf compare --db "$db" --filter "$filter" "$2" "$3" >"$tmp/$k.cmp.$1" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then cell "$k/$1" compare "not blamed"; else
            cell "$k/$1" compare "BLAMED($rc)"; tail -8 "$tmp/$k.cmp.$1" | sed 's/^/    /'; fi
    done
    # continuous, reusing the builds
    log "$k: continuous"
    XO_SOURCE_DIR=$src "$x" perf continuous --db "$tmp/$k.cont.sqlite" --build-dir "$bd" \
        --device "$dev" --filter "$filter" --quick --rounds 2 --max-rounds 4 "$docs" "$pl" \
        >"$tmp/$k.cont" 2>&1
    rc=$?
    cell "$k" continuous "$(word "$rc" "$tmp/$k.cont")"
    XO_SOURCE_DIR=$src "$x" perf continuous --db "$tmp/$k.contd.sqlite" --build-dir "$bd" \
        --device "$dev" --filter "$filter" --quick --rounds 2 --max-rounds 4 "$base" "$docs" \
        >"$tmp/$k.contd" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then cell "$k/docs" continuous "not blamed"; else
        cell "$k/docs" continuous "BLAMED($rc)"; tail -8 "$tmp/$k.contd" | sed 's/^/    /'; fi
    # bisect over base..tests
    log "$k: bisect"
    XO_SOURCE_DIR=$src "$x" perf bisect --db "$tmp/$k.bis.sqlite" --build-dir "$bd" \
        --device "$dev" --filter "$filter" --quick --rounds 2 --max-rounds 4 \
        --good "$base" --bad "$tests" --json >"$tmp/$k.bis.json" 2>"$tmp/$k.bis.err"
    got=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print(d.get("outcome"), d.get("first_bad", {}).get("sha", "-"))' "$tmp/$k.bis.json" 2>/dev/null)
    case $got in
    "found $pl") cell "$k" bisect "SLOWER (named)"; cell "$k/docs" bisect "not blamed"
        cell "$k/tests" bisect "not blamed" ;;
    "found $docs") cell "$k" bisect "missed"; cell "$k/docs" bisect "BLAMED" ;;
    "found $tests") cell "$k" bisect "missed"; cell "$k/tests" bisect "BLAMED" ;;
    *) cell "$k" bisect "missed(${got:-no json})"; tail -8 "$tmp/$k.bis.err" | sed 's/^/    /' ;;
    esac
    # detect over the record store
    XO_SOURCE_DIR=$bd/$tests "$x" perf detect --db "$db" --json >"$tmp/$k.det.json" 2>"$tmp/$k.det.err"
    read -r dp dd dt < <(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
ch = d.get("changes", [])
def at(sha, reg, states=("confirmed",)):
    return any(c["commit"] == sha and c.get("state") in states and
               (c["direction"] == "regression" or not reg) for c in ch)
plant = 1 if at(sys.argv[2], True) else 2 if at(sys.argv[2], True, ("detected",)) else 0
print(plant, int(at(sys.argv[3], False)), int(at(sys.argv[4], False)))' \
        "$tmp/$k.det.json" "$pl" "$docs" "$tests" 2>/dev/null || echo "x x x")
    case $dp in
    1) cell "$k" detect SLOWER ;;
    2) cell "$k" detect "detected only" ;; # the step at the plant, not confirmed
    *) cell "$k" detect "missed"; head -c 1500 "$tmp/$k.det.json"; echo ;;
    esac
    [ "$dd" = 0 ] && cell "$k/docs" detect "not blamed" || cell "$k/docs" detect "BLAMED"
    [ "$dt" = 0 ] && cell "$k/tests" detect "not blamed" || cell "$k/tests" detect "BLAMED"
    log "$k: done: compare ${V["$k,compare"]}, continuous ${V["$k,continuous"]}, bisect ${V["$k,bisect"]}, detect ${V["$k,detect"]}; docs: compare ${V["$k/docs,compare"]}, continuous ${V["$k/docs,continuous"]}, detect ${V["$k/docs,detect"]}; tests: compare ${V["$k/tests,compare"]}, detect ${V["$k/tests,detect"]}"
done

# the table: rows the kinds, then docs and tests over all kinds' histories
label() { case $1 in c) echo .c ;; inc) echo .inc ;; h) echo .h ;; cl) echo .cl ;;
    opsdef) echo ops.def ;; flag) echo "flag (CMake)" ;; *) echo "$1" ;; esac; }
table=$tmp/table.txt
bad=0
{
    printf '%-14s %-16s %-16s %-16s %-16s\n' "file kind" compare continuous bisect detect
    for k in $KINDS; do
        printf '%-14s' "$(label "$k")"
        for t in compare continuous bisect detect; do
            v=${V["$k,$t"]:-"-"}
            printf ' %-16s' "$v"
            case $v in SLOWER*) ;; *) bad=$((bad + 1)) ;; esac
        done
        echo
    done
    for row in docs tests; do
        printf '%-14s' "$row only"
        for t in compare continuous bisect detect; do
            v="not blamed" seen=0
            for k in $KINDS; do
                w=${V["$k/$row,$t"]:-}
                [ -n "$w" ] && seen=1
                [ -n "$w" ] && [ "$w" != "not blamed" ] && v=$w
            done
            [ $seen = 0 ] && v="-"
            printf ' %-16s' "$v"
            case $v in "not blamed" | -) ;; *) bad=$((bad + 1)) ;; esac
        done
        echo
    done
} >"$table"
echo
cat "$table"
[ -n "$OUT_TABLE" ] && cp "$table" "$OUT_TABLE"
secs=$(($(date +%s) - start))
if [ $bad -eq 0 ]; then
    echo "planted check: every cell right ($secs s, load $(cut -d' ' -f1-3 /proc/loadavg))"
    exit 0
fi
echo "planted check: $bad cell(s) wrong ($secs s, load $(cut -d' ' -f1-3 /proc/loadavg))"
exit 1
