#!/usr/bin/env bash
# ci_selftest_due.sh WORK - ci/selftest_due.sh's xo_mutgen_selftest_due on
# a real git repository made in WORK: the mutation tool's suites are due
# when a first-parent commit within 24 h of HEAD touches a file they
# exercise (the tool, ci/lib.sh, the perf store's store/report files, their
# own; a merge's second parent counted through the merge), or
# XO_MUTGEN_SELFTEST=1; not when only older commits or other files did
# (ci/test.sh, the model fingerprint in perfdb/modelid.c, model/, suites/);
# and not when the watched files' content is one whose pass the record in
# XO_CACHE_DIR holds (xo_mutgen_selftest_record), due again once one of
# them changes. Exit 0 pass, 1 fail.
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$1
fail=0
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
# the record of passes: this test's own, empty at the start
export XO_CACHE_DIR=$work/.cache
git init -q . || exit 1
now=$(date -u +%s)
# commit FILE AGE_S: a commit that adds FILE, committed AGE_S seconds ago
commit() {
    mkdir -p "$(dirname "$1")" && echo "$RANDOM" >>"$1" && git add "$1" &&
        GIT_COMMITTER_DATE="@$((now - $2)) +0000" GIT_AUTHOR_DATE="@$((now - $2)) +0000" \
            git -c user.name=t -c user.email=t@localhost -c commit.gpgsign=false \
            commit -qm "$1"
}
# want WHAT due|not: the function's answer for this tree
want() {
    local got
    got=$(unset XO_MUTGEN_SELFTEST; source "$root/ci/selftest_due.sh" >/dev/null 2>&1
          cd "$work" && xo_mutgen_selftest_due && echo due || echo not)
    [ "$got" = "$2" ] || { echo "FAIL $1: $got, want $2"; fail=1; }
}
commit README 300000
want "the first commit alone" due
commit ci/mutgen.py 200000
commit model/a.c 3600
want "ci/ touched two days ago, model/ today" not
commit perfdb/modelid.c 5000
commit ci/test.sh 4000
want "ci/test.sh and perfdb/modelid.c today" not
commit perfdb/store.c 7200
want "perfdb/store.c today" due
commit model/b.c 60
want "perfdb/store.c within the day, model/ since" due
# every file a ci.mutgen.* suite reads is watched: ci.mutgen.context's
# fixture folder too
for f in suites/mutgen_context/before.c suites/ci_mutgen.sh ci/reach.py; do
    (source "$root/ci/selftest_due.sh" >/dev/null 2>&1; grep -qE "$XO_MUTGEN_SELFTEST_PATHS" <<<"$f") ||
        { echo "FAIL $f is not watched"; fail=1; }
done
# a later tree whose day holds only product code and tests
commit suites/test_x.c $((-90000)) # a day later than now
commit model/d.c $((-90100))
want "a day of suites/ and model/ only" not
# ... then a branch touching suites/mutgen.cmake merged into it
git checkout -q -b side HEAD~1 && commit suites/mutgen.cmake $((-90200)) &&
    git checkout -q - &&
    GIT_COMMITTER_DATE="@$((now + 90300)) +0000" git -c user.name=t -c user.email=t@localhost \
        -c commit.gpgsign=false merge -q --no-edit side
want "suites/mutgen.cmake through a merge within the day" due
# a pass of this content recorded: not due; the other content of a day
# later change: due again
(source "$root/ci/selftest_due.sh" >/dev/null 2>&1; cd "$work" && xo_mutgen_selftest_record) ||
    { echo "FAIL record"; fail=1; }
want "the same content passed here" not
commit ci/mutgen.py $((-90400))
want "ci/mutgen.py changed after the recorded pass" due
got=$(source "$root/ci/selftest_due.sh" >/dev/null 2>&1; cd "$work" && XO_MUTGEN_SELFTEST=1 \
      xo_mutgen_selftest_due && echo due || echo not)
[ "$got" = due ] || { echo "FAIL XO_MUTGEN_SELFTEST=1: $got"; fail=1; }
[ $fail = 0 ] && echo "PASS selftest_due"
exit $fail
