#!/bin/sh
# lint_listswitch.sh ROOT | --self-test - what is specific to one entry of
# a list (an op of include/xo/ops.def, a layer kind of include/xo/layers.def)
# comes from that entry or from a table built from the list (where an entry
# without its row does not compile), not from a switch over the entries: such
# a switch is a second copy of the list, the one a new entry forgets. For
# each list below, a C function in the list's folders that names more than
# its MAX entries in case labels is named as FILE:LINE:FUNCTION (N WORD) on
# stdout and the exit status is 1; 0 when clean, 2 on bad arguments.
#   ops:   "case XO_OP_..." in core/, reference/, kernels/, suites/harness*;
#          MAX 12, a third of the 37 ops: a family's switch (the 7 poolings,
#          the 3 recurrent ops) passes, one over every op does not.
#   kinds: "case XO_LAYER_..." in model/, cli/, perfdb/; MAX 3, the largest
#          family whose kinds share one set of code paths (simple_rnn, lstm,
#          gru).
# --self-test plants, for each list, a switch over MAX + 1 entries in its
# folders and checks that exactly it is named, and that MAX passes.

# one row a list: WORD MAX LABEL-PREFIX FOLDER-GLOBS...
LISTS='ops 12 XO_OP_[a-z_0-9] core/*.c reference/*.c kernels/*.c suites/harness*.c
kinds 3 XO_LAYER_[A-Z_0-9] model/*.c cli/*.c perfdb/*.c'

scan() {
	# $1: the tree. Output FILE:LINE:FUNCTION (N WORD) per function over MAX.
	printf '%s\n' "$LISTS" | while read -r word max label globs; do
		(cd "$1" && for f in $globs; do
			[ -f "$f" ] || continue
			awk -v F="$f" -v MAX="$max" -v W="$word" -v L="case[[:space:]]+${label}+[[:space:]]*:" '
				/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ { name = $0; line = NR }
				/^\{/ { n = 0; infn = 1 }
				infn && $0 ~ L { n += gsub(L, "&") }
				/^\}/ && infn {
					if (n > MAX) {
						sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
						printf "%s:%d:%s (%d %s)\n", F, line, name, n, W
					}
					infn = 0
				}' "$f"
		done)
	done
}

check() {
	hits=$(scan "$1")
	if [ -n "$hits" ]; then
		printf '%s\n' "$hits"
		echo "lint_listswitch: $(printf '%s\n' "$hits" | wc -l) function(s) switch over a list; give each entry a row in a table built from the list instead (docs/adding-an-op.md, docs/adding-a-layer.md)" >&2
		return 1
	fi
	return 0
}

plant() {
	# $1 file, $2 function, $3 label prefix, $4 number of case labels
	{
		printf 'static int %s(int e)\n{\n\tswitch (e) {\n' "$2"
		i=0
		while [ "$i" -lt "$4" ]; do
			printf '\tcase %s%d:\n' "$3" "$i"
			i=$((i + 1))
		done
		printf '\t\treturn 1;\n\tdefault:\n\t\treturn 0;\n\t}\n}\n'
	} >>"$1"
}

self_test() {
	t=$(mktemp -d) || exit 2
	trap 'rm -rf "$t"' EXIT
	mkdir -p "$t/core" "$t/suites" "$t/model" "$t/perfdb"
	# at MAX each list passes, and a list's labels elsewhere are not counted
	plant "$t/core/a.c" family XO_OP_ 12
	plant "$t/model/m.c" family XO_LAYER_ 3
	plant "$t/perfdb/p.c" elsewhere XO_OP_ 30
	plant "$t/core/b.c" elsewhere XO_LAYER_ 30
	check "$t" >/dev/null 2>&1 || { echo "self-test: a switch at MAX failed" >&2; exit 1; }
	printf '/* x */\n' >"$t/suites/harness_x.c"
	plant "$t/suites/harness_x.c" every XO_OP_ 13
	printf '/* x */\n' >"$t/model/n.c"
	plant "$t/model/n.c" kinds XO_LAYER_ 4
	out=$(check "$t" 2>/dev/null) && { echo "self-test: a switch over a list passed" >&2; exit 1; }
	want='suites/harness_x.c:2:every (13 ops)
model/n.c:2:kinds (4 kinds)'
	[ "$out" = "$want" ] || { echo "self-test: named '$out', want '$want'" >&2; exit 1; }
	echo "self-test: ok"
	exit 0
}

case "$#:${1-}" in
1:--self-test) self_test ;;
1:*) [ -d "$1" ] || { echo "lint_listswitch: $1: not a directory" >&2; exit 2; }
	check "$1"; exit $? ;;
*) echo "usage: lint_listswitch.sh ROOT | --self-test" >&2; exit 2 ;;
esac
