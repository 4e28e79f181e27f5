#!/bin/sh
# lint_noissue.sh ROOT | --self-test - source speaks of code, not of its
# history: a reference to a tracker entry ("issue N", "issue #N") in a C
# file, header, .inc, OpenCL kernel, shell, Python or CMake file under ROOT
# is named as FILE:LINE on stdout and the exit status is 1. Why a line of
# code exists is stated in its own terms; which ticket asked for it belongs
# in the commit that made it. Exit 0 when clean, 2 on bad arguments.
# --self-test plants a reference in a temporary tree and checks that it is
# found by file and line, and that a clean tree passes.

scan() {
	# $1: the tree. Build trees and VCS metadata are not source. Output:
	# FILE:LINE:TEXT for each hit, paths relative to the tree.
	(cd "$1" && grep -rnIiE 'issue[[:space:]]*#?[0-9]' \
		--include='*.c' --include='*.h' --include='*.inc' --include='*.cl' \
		--include='*.sh' --include='*.py' --include='*.cmake' \
		--include='CMakeLists.txt' \
		--exclude-dir='build*' --exclude-dir='.git' --exclude-dir='_deps' \
		--exclude-dir='.venv*' --exclude-dir='venv' . ) |
		sed 's|^\./||' |
		while IFS= read -r hit; do
			f=${hit%%:*}
			case "$f" in suites/lint_noissue.sh) continue ;; esac
			printf '%s\n' "$hit"
		done
}

check() {
	hits=$(scan "$1")
	if [ -n "$hits" ]; then
		printf '%s\n' "$hits"
		echo "lint_noissue: $(printf '%s\n' "$hits" | wc -l) tracker reference(s) in source; state the contract or the reason instead" >&2
		return 1
	fi
	return 0
}

self_test() {
	t=$(mktemp -d) || exit 2
	trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/model" "$t/build/x"
	printf '/* clean */\nint a;\n' > "$t/model/a.c"
	printf '# plain\n' > "$t/build/x/b.sh"
	printf 'x\n/* see Issue #7 */\n' > "$t/build/x/c.c"
	check "$t" >/dev/null 2>&1 || { echo "self-test: a clean tree failed" >&2; exit 1; }
	printf 'int b;\n\n/* the writer (issue 12 item 3) */\n' > "$t/model/b.c"
	printf '#!/bin/sh\n# Issue #4: x\n' > "$t/model/c.sh"
	out=$(check "$t" 2>/dev/null) && { echo "self-test: a planted reference passed" >&2; exit 1; }
	printf '%s\n' "$out" | grep -q '^model/b\.c:3:' ||
		{ echo "self-test: model/b.c:3 not named" >&2; exit 1; }
	printf '%s\n' "$out" | grep -q '^model/c\.sh:2:' ||
		{ echo "self-test: model/c.sh:2 not named" >&2; exit 1; }
	[ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] ||
		{ echo "self-test: build tree scanned" >&2; exit 1; }
	echo "self-test: ok"
	exit 0
}

case "$#:${1-}" in
1:--self-test) self_test ;;
1:*) [ -d "$1" ] || { echo "lint_noissue: $1: not a directory" >&2; exit 2; }
	check "$1"; exit $? ;;
*) echo "usage: lint_noissue.sh ROOT | --self-test" >&2; exit 2 ;;
esac
