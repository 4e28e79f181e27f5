#!/bin/sh
# ops_padding_keys.sh XO WANT - the ops suites/ops.cmake found with a padding
# key (WANT, comma-separated, in ops.def order) are exactly the ops whose
# canonical line in `xo check --list` has a padding key; exit 1 naming the
# difference. The op tests are made per padding from that list, so an op
# that lost its place on it would lose its padding=same/causal tests.
set -eu
xo=$1
want=$2
got=$("$xo" check --list | awk '$1 != "" && / padding=/ { printf "%s%s", sep, $1; sep = "," }')
if [ "$got" != "$want" ]; then
	echo "ops_padding_keys: suites/ops.cmake found '$want', xo check --list has '$got'" >&2
	exit 1
fi
echo "ops with a padding key: $got"
