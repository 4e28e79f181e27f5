#!/bin/sh
# lint_opswitch.sh ROOT | --self-test - what is op-specific comes from
# include/xo/ops.def or a per-op entry next to the op's family (a table built
# from ops.def, where an op without its entry does not compile), not from a
# switch over the ops. A C function under ROOT's core/, reference/,
# kernels/ or suites/harness* that names more than MAX ops in case labels
# ("case XO_OP_...") is named as FILE:LINE:FUNCTION on stdout and the exit
# status is 1: such a switch is a second list of the ops, the one a new op
# forgets. MAX is 12, a third of the 37 ops: a family's switch (the 7
# poolings, the 3 recurrent ops) passes, one over every op does not. Exit 0
# when clean, 2 on bad arguments. --self-test plants a switch over 13 ops
# in a temporary tree and checks that it is named, and that a switch over
# 12 passes.

MAX=12

scan() {
	# $1: the tree. Output FILE:LINE:FUNCTION per function over MAX labels.
	(cd "$1" && for f in core/*.c reference/*.c kernels/*.c suites/harness*.c; do
		[ -f "$f" ] || continue
		awk -v F="$f" -v MAX="$MAX" '
			/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ { name = $0; line = NR }
			/^\{/ { n = 0; infn = 1 }
			infn && /case[[:space:]]+XO_OP_[a-z_0-9]+[[:space:]]*:/ {
				n += gsub(/case[[:space:]]+XO_OP_[a-z_0-9]+[[:space:]]*:/, "&")
			}
			/^\}/ && infn {
				if (n > MAX) {
					sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
					printf "%s:%d:%s (%d ops)\n", F, line, name, n
				}
				infn = 0
			}' "$f"
	done)
}

check() {
	hits=$(scan "$1")
	if [ -n "$hits" ]; then
		printf '%s\n' "$hits"
		echo "lint_opswitch: $(printf '%s\n' "$hits" | wc -l) function(s) switch over more than $MAX ops; give each op an entry in a table built from ops.def instead" >&2
		return 1
	fi
	return 0
}

plant() {
	# $1 file, $2 function, $3 number of case labels
	{
		printf 'static int %s(enum xo_op op)\n{\n\tswitch (op) {\n' "$2"
		i=0
		while [ "$i" -lt "$3" ]; do
			printf '\tcase XO_OP_op%d:\n' "$i"
			i=$((i + 1))
		done
		printf '\t\treturn 1;\n\tdefault:\n\t\treturn 0;\n\t}\n}\n'
	} >>"$1"
}

self_test() {
	t=$(mktemp -d) || exit 2
	trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/core" "$t/suites" "$t/model"
	plant "$t/core/a.c" family "$MAX"
	plant "$t/model/m.c" elsewhere 30
	check "$t" >/dev/null 2>&1 || { echo "self-test: a family switch failed" >&2; exit 1; }
	printf '/* x */\n' >"$t/suites/harness_x.c"
	plant "$t/suites/harness_x.c" every $((MAX + 1))
	out=$(check "$t" 2>/dev/null) && { echo "self-test: a switch over every op passed" >&2; exit 1; }
	printf '%s\n' "$out" | grep -q '^suites/harness_x\.c:2:every ' ||
		{ echo "self-test: suites/harness_x.c:2 every not named ($out)" >&2; exit 1; }
	[ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] ||
		{ echo "self-test: more than the planted function named" >&2; exit 1; }
	echo "self-test: ok"
	exit 0
}

case "$#:${1-}" in
1:--self-test) self_test ;;
1:*) [ -d "$1" ] || { echo "lint_opswitch: $1: not a directory" >&2; exit 2; }
	check "$1"; exit $? ;;
*) echo "usage: lint_opswitch.sh ROOT | --self-test" >&2; exit 2 ;;
esac
