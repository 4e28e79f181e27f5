#!/usr/bin/env bash
# suites/perfdb_cli.sh CASE XO - `xo perf` on hostile or careless input:
# each case expects exit 2, exactly one line on stderr naming the
# cause, and no store changed or created that should not be. Run by ctest
# (suites/perfdb.cmake) in a fresh directory per case.
set -u
case_name=$1
XO=$2
XO_SRC=${3:-}
fails=0

# expect2 PATTERN CMD...: exit 2, one stderr line, matching PATTERN, and no
# SQL text in it (messages name the file and the reason).
expect2() {
    local pat=$1 rc lines
    shift
    timeout 20 "$@" >out.txt 2>err.txt
    rc=$?
    lines=$(wc -l <err.txt)
    echo "\$ ${*}  -> exit $rc: $(cat err.txt)"
    if [ $rc -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$pat" err.txt ||
        grep -q -E 'PRAGMA|SELECT|INSERT|UPDATE|CREATE' err.txt; then
        echo "FAILED: expected exit 2 and one line matching '$pat'"
        fails=$((fails + 1))
    fi
}

check() {
    if ! eval "$1"; then
        echo "FAILED: $1"
        fails=$((fails + 1))
    fi
}

# A small store with one complete run of ref relu (about a second).
make_store() {
    rm -f "$1" "$1"-wal "$1"-shm
    "$XO" perf record --db "$1" --filter '^op/relu/fwd/.*/ref$' --no-progress >/dev/null ||
        { echo "FAILED: recording $1"; exit 1; }
}

peer_json() { # peer_json BATCH SAMPLES [EXTRA MEMBERS]
    printf '{%s"results":[{"benchmark":"predict","batch":%s,"samples_s":[%s]}]}' \
        "${3:-}" "$1" "$2"
}

case $case_name in
schema)
    # user_version outside the migration table: refused, not an out-of-bounds
    # read; version 0 on a populated store: SQLite's reason, the file named.
    make_store good.sqlite
    cp good.sqlite neg.sqlite
    sqlite3 neg.sqlite 'PRAGMA user_version = -5'
    cp neg.sqlite neg.before
    expect2 'neg.sqlite: schema version -5' "$XO" perf compare --db neg.sqlite run:1
    expect2 'neg.sqlite: schema version -5' "$XO" perf record --db neg.sqlite \
        --filter '^op/relu/fwd/.*/ref$' --no-progress
    expect2 'neg.sqlite: schema version -5' "$XO" perf detect --db neg.sqlite
    check 'cmp -s neg.sqlite neg.before'
    cp good.sqlite zero.sqlite
    sqlite3 zero.sqlite 'PRAGMA user_version = 0'
    expect2 'zero.sqlite: migrating schema version 0 to 1 failed: table commits already exists' \
        "$XO" perf compare --db zero.sqlite run:1
    expect2 'zero.sqlite: .*table commits already exists' \
        "$XO" perf import --db zero.sqlite --peer p --json <(peer_json 8 1e-4)
    check 'test "$(sqlite3 zero.sqlite "SELECT count(*) FROM runs")" -eq 1'
    ;;
writefail)
    # a record whose write fails mid-run (a trigger aborts
    # every result insert, as a full disk would) stores nothing of the run:
    # exit 2, one line naming the store and the cause, and no run row, not
    # even an incomplete one (the two-transaction writer before schema 6 left
    # one), no new result; the store takes the next record once the fault is
    # gone.
    rm -f w.sqlite w.sqlite-wal w.sqlite-shm
    "$XO" perf record --db w.sqlite --device ref --filter '^op/relu/fwd/.*/ref$' --no-progress \
        >/dev/null || { echo "FAILED: recording w.sqlite"; exit 1; }
    sqlite3 w.sqlite "CREATE TRIGGER planted BEFORE INSERT ON results
        BEGIN SELECT RAISE(ABORT, 'planted failure'); END"
    expect2 'w.sqlite: storing a result: planted failure' "$XO" perf record --db w.sqlite \
        --device ref --filter '^op/relu/fwd/.*/ref$' --no-progress
    check 'test "$(sqlite3 w.sqlite "SELECT count(*) FROM runs")" -eq 1'
    check 'test "$(sqlite3 w.sqlite "SELECT count(*) FROM results")" -eq 1'
    sqlite3 w.sqlite 'DROP TRIGGER planted'
    "$XO" perf record --db w.sqlite --device ref --filter '^op/relu/fwd/.*/ref$' --no-progress \
        >/dev/null || { echo "FAILED: recording w.sqlite after the fault"; exit 1; }
    check 'test "$(sqlite3 w.sqlite "SELECT count(*) FROM runs WHERE state = '"'complete'"'")" -eq 2'
    ;;
nullstate)
    # The store is outside input too: a crafted file (schema edited, a NULL
    # where xo writes text) is refused, not a crash.
    make_store null.sqlite
    sqlite3 null.sqlite "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql =
        replace(sql, 'state TEXT NOT NULL DEFAULT ''complete''', 'state TEXT')
        WHERE name = 'runs';"
    sqlite3 null.sqlite 'UPDATE runs SET state = NULL'
    expect2 'null.sqlite: run 1 is incomplete' "$XO" perf compare --db null.sqlite run:1
    ;;
nullname)
    # The same class in the analysis: a NULL benchmark name in a crafted
    # store reached regexec and strcmp in compare and detect (SIGSEGV). Now
    # a NULL text column reads as "": no crash, an answer or a clean refusal.
    make_store nn.sqlite
    "$XO" perf record --db nn.sqlite --filter '^op/relu/fwd/.*/ref$' --no-progress >/dev/null ||
        { echo "FAILED: recording nn.sqlite"; exit 1; }
    sqlite3 nn.sqlite "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql =
        replace(sql, 'name TEXT NOT NULL UNIQUE', 'name TEXT UNIQUE') WHERE name = 'benchmarks';"
    sqlite3 nn.sqlite 'UPDATE benchmarks SET name = NULL'
    check '[ "$(sqlite3 nn.sqlite "SELECT count(*) FROM benchmarks WHERE name IS NULL")" -ge 1 ]'
    for cmd in "compare --filter x run:1 run:2" "compare run:1 run:2" "detect --filter x" "detect"; do
        # shellcheck disable=SC2086
        timeout 20 "$XO" perf $cmd --db nn.sqlite >out.txt 2>err.txt
        rc=$?
        echo "\$ xo perf $cmd -> exit $rc"
        check "[ $rc -le 2 ]"
    done
    ;;
readonly)
    # A store in a directory (and file) the reader cannot write: compare and
    # advise work. As root, permissions do not bind: run them as nobody, from
    # a directory under /tmp with a copy of xo (the build tree may sit where
    # nobody cannot reach, e.g. under /root).
    work=$(mktemp -d "${TMPDIR:-/tmp}/xo-readonly.XXXXXX") || exit 1
    trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
    chmod 755 "$work"
    cp "$XO" "$work/xo"
    mkdir -p "$work/ro"
    make_store "$work/ro/s.sqlite"
    chmod 555 "$work/ro"
    chmod 444 "$work/ro/s.sqlite"
    as=()
    if [ "$(id -u)" = 0 ]; then
        as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    fi
    (cd "$work" && "${as[@]}" ./xo perf compare --db ro/s.sqlite run:1 run:1) >out.txt 2>err.txt
    rc=$?
    cat out.txt err.txt
    check "[ $rc -le 1 ] && grep -q 'op/relu/fwd/n512_l27_c16/ref' out.txt"
    (cd "$work" && "${as[@]}" ./xo perf advise --db ro/s.sqlite) >out.txt 2>err.txt
    cat out.txt err.txt
    # no model was measured: exit 2 with the reason, not a write error
    check "! grep -q -i 'readonly\|read-only' err.txt"
    check 'test ! -e "$work/ro/s.sqlite-wal" && test ! -e "$work/ro/s.sqlite-shm"'
    ;;
notafile)
    # --db that is a directory, a FIFO or a device: refused before SQLite
    # opens it (a FIFO would block it forever; /dev/null must stay a device).
    mkdir -p adir
    rm -f fifo
    mkfifo fifo
    expect2 'adir: is a directory' "$XO" perf compare --db adir run:1
    expect2 'adir: is a directory' "$XO" perf record --db adir --no-progress
    expect2 'fifo: not a regular file' "$XO" perf compare --db fifo run:1
    expect2 'fifo: not a regular file' "$XO" perf import --db fifo --peer p \
        --json <(peer_json 8 1e-4)
    expect2 '/dev/null: not a regular file' "$XO" perf import --db /dev/null --peer p \
        --json <(peer_json 8 1e-4)
    check 'test -c /dev/null'
    ;;
options)
    # --threshold NaN/Inf/negative, and a --model spec that does not parse
    # (with and without --list): one line, exit 2, nothing created.
    rm -f opt.sqlite
    for t in nan NaN inf -1 1e9 ''; do
        expect2 "--threshold $t" "$XO" perf compare --db opt.sqlite --threshold "$t" run:1
    done
    printf 'input 29 1\nconv1d filters=0 kernel_size=3\n' >bad.model
    expect2 'bad.model:2' "$XO" perf record --db opt.sqlite --model bad.model --no-progress
    expect2 'bad.model:2' "$XO" perf record --model bad.model --list
    expect2 'missing.model' "$XO" perf record --model missing.model --list
    # A valid spec declaring more parameters than the documented limit is
    # refused before anything is allocated, whatever the kernel's overcommit.
    printf 'input 100000000 1\nconv1d filters=1000 kernel_size=3\nflatten\ndense units=2\n' \
        >huge.model
    expect2 'huge.model: .*parameters, more than the limit' "$XO" perf record --model huge.model --list
    # Few parameters, activations of 373 GiB at batch 1 (planned): refused from the
    # planned sizes before anything is allocated (XO_MODEL_MEMORY_MAX, half
    # the machine's memory by default), on any kernel overcommit setting
    printf 'input 100000000 1\nconv1d filters=1000 kernel_size=1\nglobal_max_pooling1d\ndense units=1\n' \
        >wide.model
    expect2 'wide.model: its activations need 373 GiB for 1 samples' "$XO" perf record --model wide.model --list
    check 'test ! -e opt.sqlite'
    ;;
import)
    # Every number from the peer file range-checked; names restricted; the
    # note without control bytes; nothing stored unless the file is valid.
    rm -f imp.sqlite*
    "$XO" perf import --db imp.sqlite --peer good --json <(peer_json 8 1e-4,2e-4) ||
        { echo "FAILED: a valid import"; exit 1; }
    for b in 1e300 -1 0 8.5 '"8"' 1e400 NaN Infinity 16777217 null; do
        expect2 'batch\|not valid JSON' "$XO" perf import --db imp.sqlite --peer p \
            --json <(peer_json "$b" 1e-4)
    done
    for t in 0 -1e-4 1e300 1e400 NaN '"1e-4"' '[]' 5e-324; do
        expect2 'samples_s\|not valid JSON' "$XO" perf import --db imp.sqlite --peer p \
            --json <(peer_json 8 "1e-4,$t")
    done
    expect2 'samples_s' "$XO" perf import --db imp.sqlite --peer p --json <(peer_json 8 '')
    expect2 'note' "$XO" perf import --db imp.sqlite --peer p \
        --json <(peer_json 8 1e-4 '"note":"a\u001b[31m\nb",')
    expect2 'model' "$XO" perf import --db imp.sqlite --peer p \
        --json <(peer_json 8 1e-4 '"model":"x\"; system(\"id\")",')
    expect2 'duplicate' "$XO" perf import --db imp.sqlite --peer p \
        --json <(peer_json 8 1e-4 '"model":"a","model":"b",')
    expect2 'repeats' "$XO" perf import --db imp.sqlite --peer p \
        --json <(printf '{"results":[%s,%s]}' \
                 '{"benchmark":"predict","batch":8,"samples_s":[1e-4]}' \
                 '{"benchmark":"predict","batch":8.0,"samples_s":[2e-4]}')
    expect2 "peer name" "$XO" perf import --db imp.sqlite --peer 'a"b' \
        --json <(peer_json 8 1e-4)
    expect2 "peer name" "$XO" perf import --db imp.sqlite --peer "$(printf 'a\nb')" \
        --json <(peer_json 8 1e-4)
    mkdir -p jdir
    expect2 'jdir: is a directory' "$XO" perf import --db imp.sqlite --peer p --json jdir
    expect2 'not valid JSON' "$XO" perf import --db imp.sqlite --peer p --json <(printf '')
    # the valid import is all there is; nothing non-finite or huge stored
    check 'test "$(sqlite3 imp.sqlite "SELECT count(*) FROM runs")" -eq 1'
    check 'test "$(sqlite3 imp.sqlite "SELECT count(*) FROM results WHERE NOT
        (median > 0 AND median < 1e5 AND max < 1e5)")" -eq 0'
    check 'test "$(sqlite3 imp.sqlite "SELECT max(batch) FROM benchmarks")" -eq 8'
    ;;
bisect)
    # bisect's bad input, before anything is built or stored
    expect2 'needs --good REV and --bad REV' "$XO" perf bisect --good HEAD
    expect2 "--metric cycles: need time or instructions" "$XO" perf bisect --good a --bad b \
        --metric cycles
    expect2 "--metric time,instructions: need time or instructions$" "$XO" perf compare \
        --metric time,instructions run:1
    expect2 "--metric 'instructions': need time or instructions (or time,instructions" \
        "$XO" perf record --metric "'instructions'"
    expect2 'report does not take --metric' "$XO" perf report --metric time --out x
    expect2 'budget nan' "$XO" perf bisect --good a --bad b --budget nan
    expect2 'budget 5%' "$XO" perf bisect --good a --bad b --budget 5%
    expect2 'budget 0' "$XO" perf continuous --budget 0 HEAD
    expect2 'max-rounds 0' "$XO" perf bisect --good a --bad b --max-rounds 0
    expect2 'compare does not take --max-rounds' "$XO" perf compare --max-rounds 3 run:1
    expect2 'wrong number of arguments' "$XO" perf bisect --good a --bad b extra
    if git -C "$XO_SRC" rev-parse --verify -q HEAD~1 >/dev/null 2>&1; then
        export XO_SOURCE_DIR=$XO_SRC
        expect2 'no-such-rev' "$XO" perf bisect --good no-such-rev --bad HEAD
        expect2 "'-x': not a revision" "$XO" perf bisect --good -x --bad HEAD
        expect2 'same commit' "$XO" perf bisect --good HEAD --bad HEAD
        expect2 'not on the first-parent line' "$XO" perf bisect --good HEAD --bad HEAD~1
    fi
    check 'test ! -e perf.sqlite'
    ;;
*)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
[ $fails -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
