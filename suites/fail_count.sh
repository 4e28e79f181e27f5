# suites/fail_count.sh - sourced by the suites' shell checks that go on after
# a failed check and count them: fail MSG prints "FAIL: MSG" and counts it in
# $fails; fail_count_exit NAME MSG ends the script, "NAME: MSG" when nothing
# failed, exit 1 when anything did.
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
fail_count_exit() {
    [ "$fails" = 0 ] && echo "$1: $2"
    exit $((fails > 0))
}
