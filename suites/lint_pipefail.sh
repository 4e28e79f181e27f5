#!/bin/sh
# lint_pipefail.sh ROOT | --self-test - under `set -o pipefail` a pipeline
# into a reader that stops early (`grep -q`, `grep -m N`, `grep -l`, `head`)
# fails at random: the reader exits at its first match, the writer's next
# write gets SIGPIPE, and the pipeline's status is the writer's 141 although
# the match was found. How often depends on scheduling (a loaded machine
# makes it likelier), so such a test or stage is a flake, not a check. Read
# the writer's whole output first instead: `grep -q P <<<"$(cmd)"`.
# Files scanned: every bash script under ci/, scripts/, suites/, fuzz/, .ci/
# that sets pipefail, and ci/lib.sh (sourced by those). A pipe inside
# $(...) is not flagged: the project assigns such output and does not test
# the substitution's status.
# Output: FILE:LINE per hit on stdout, exit 1; 0 when clean; 2 on bad use.

scan() {
	(cd "$1" && for f in ci/*.sh scripts/*.sh suites/*.sh fuzz/*.sh .ci/run; do
		[ -f "$f" ] || continue
		# this file's self-test plants the forms it looks for
		[ "$f" = suites/lint_pipefail.sh ] && continue
		[ "$f" = ci/lib.sh ] || grep -qE '^[[:space:]]*set .*pipefail' "$f" || continue
		awk -v F="$f" '
			/^[[:space:]]*#/ { next }
			{
				line = $0
				sub(/[[:space:]]#.*/, "", line)
				if (line ~ /(^|[^|])\|[[:space:]]*(grep[[:space:]]+(-[A-Za-z]*[qlm]|--quiet|--max-count)|head([[:space:]]|$))/ &&
				    line !~ /\$\([^)]*\|[[:space:]]*(grep|head)[^)]*\)/)
					printf "%s:%d\n", F, NR
			}' "$f"
	done)
}

check() {
	hits=$(scan "$1")
	if [ -n "$hits" ]; then
		printf '%s\n' "$hits"
		echo "lint_pipefail: $(printf '%s\n' "$hits" | wc -l) pipe(s) into an early-exiting reader under pipefail; read the whole output first: grep -q P <<<\"\$(cmd)\"" >&2
		return 1
	fi
	return 0
}

self_test() {
	t=$(mktemp -d) || exit 2
	trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/ci" "$t/scripts" "$t/suites"
	# clean forms: the here-string, a pipe inside $(...), a comment, a
	# script without pipefail
	cat >"$t/ci/ok.sh" <<'EOF'
set -u -o pipefail
grep -q '^x ' <<<"$(printf '%s\n' a b)" && echo y
n=$(ls | head -n 1)
[ -n "$n" ] || grep -qx y <<<"$n"
# printf x | grep -q x is how not to do it
EOF
	printf 'printf x | grep -q x\n' >"$t/scripts/nopf.sh"
	check "$t" >/dev/null 2>&1 || { echo "self-test: a clean tree was flagged" >&2; exit 1; }
	cat >"$t/ci/bad.sh" <<'EOF'
set -u -o pipefail
printf '%s\n' a b | grep -q "^b" || exit 2
ls | grep -qv x
ls | head -n 1 >/dev/null && echo x
EOF
	printf 'f() { cat *.icd | grep -qi nvidia; }\n' >"$t/ci/lib.sh"
	out=$(check "$t" 2>/dev/null) && { echo "self-test: a pipe into grep -q passed" >&2; exit 1; }
	want='ci/bad.sh:2
ci/bad.sh:3
ci/bad.sh:4
ci/lib.sh:1'
	[ "$out" = "$want" ] || {
		echo "self-test: named '$out', want '$want'" >&2
		exit 1
	}
	echo "self-test: clean forms pass; the four planted pipes are named, nothing else"
}

case "${1:-}" in
--self-test) self_test ;;
"" | -*) echo "usage: lint_pipefail.sh ROOT | --self-test" >&2; exit 2 ;;
*) [ -d "$1" ] || { echo "lint_pipefail: no folder '$1'" >&2; exit 2; }
	check "$1" ;;
esac
