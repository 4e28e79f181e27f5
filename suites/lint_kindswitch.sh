#!/bin/sh
# lint_kindswitch.sh ROOT | --self-test - what is layer-kind-specific comes
# from include/xo/layers.def or a per-kind table entry (the runtime's
# families in model/layer_*.c, keras.c's classes[], spec.c's spec_kinds[]),
# where a kind without its entry does not compile or fails
# model.layer_tables, not from a switch over the kinds. A C function under
# ROOT's model/, cli/ or perfdb/ that names more than MAX kinds in case
# labels ("case XO_LAYER_...") is named as FILE:LINE:FUNCTION on stdout and
# the exit status is 1: such a switch is a second list of the kinds, the
# one a new kind forgets. MAX is 3, the largest family's kinds that share
# one set of code paths (simple_rnn, lstm, gru). Exit 0 when clean, 2 on bad
# arguments. --self-test plants a switch over 4 kinds in a temporary tree
# and checks that it is named, and that a switch over 3 passes.

MAX=3

scan() {
	# $1: the tree. Output FILE:LINE:FUNCTION per function over MAX labels.
	(cd "$1" && for f in model/*.c cli/*.c perfdb/*.c; do
		[ -f "$f" ] || continue
		awk -v F="$f" -v MAX="$MAX" '
			/^[A-Za-z_].*\(/ && !/;[[:space:]]*$/ { name = $0; line = NR }
			/^\{/ { n = 0; infn = 1 }
			infn && /case[[:space:]]+XO_LAYER_[A-Z_0-9]+[[:space:]]*:/ {
				n += gsub(/case[[:space:]]+XO_LAYER_[A-Z_0-9]+[[:space:]]*:/, "&")
			}
			/^\}/ && infn {
				if (n > MAX) {
					sub(/\(.*/, "", name); sub(/.*[ *]/, "", name)
					printf "%s:%d:%s (%d kinds)\n", F, line, name, n
				}
				infn = 0
			}' "$f"
	done)
}

check() {
	hits=$(scan "$1")
	if [ -n "$hits" ]; then
		printf '%s\n' "$hits"
		echo "lint_kindswitch: a switch over more than $MAX layer kinds: make it a table entry (docs/adding-a-layer.md)" >&2
		return 1
	fi
	return 0
}

plant() {
	# $1: the tree, $2: the number of case labels in one function
	mkdir -p "$1/model"
	{
		echo "int f(int k);"
		echo "int f(int k)"
		echo "{"
		echo "	switch (k) {"
		i=0
		while [ "$i" -lt "$2" ]; do
			echo "	case XO_LAYER_K$i:"
			i=$((i + 1))
		done
		echo "		return 1;"
		echo "	}"
		echo "	return 0;"
		echo "}"
	} >"$1/model/planted.c"
}

self_test() {
	t=$(mktemp -d) || exit 2
	ok=1
	plant "$t" $((MAX + 1))
	case $(scan "$t") in
	"model/planted.c:2:f ($((MAX + 1)) kinds)") ;;
	*) ok=0 ;;
	esac
	plant "$t" "$MAX"
	[ -z "$(scan "$t")" ] || ok=0
	rm -rf "$t"
	if [ $ok = 1 ]; then
		echo "lint_kindswitch self-test: ok"
		return 0
	fi
	echo "lint_kindswitch self-test: FAILED"
	return 1
}

if [ "$#" -eq 1 ] && [ "$1" = "--self-test" ]; then
	self_test
	exit $?
fi
if [ "$#" -ne 1 ] || [ ! -d "$1/model" ]; then
	echo "usage: lint_kindswitch.sh ROOT | --self-test" >&2
	exit 2
fi
check "$1"
exit $?
