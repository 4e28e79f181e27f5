#!/bin/sh
# pg_cluster.sh - runs a command against a throwaway PostgreSQL cluster: initdb
# into a temporary directory, a server listening only on a Unix socket in that
# directory (no TCP port, no root), one database "xo"; the command gets its
# URI in XO_TEST_PG. The cluster is stopped and removed afterwards, and the
# command's exit status returned.
#
#   sh suites/pg_cluster.sh COMMAND [ARG...]
#
# initdb refuses to run as root: as root, the cluster belongs to the
# "postgres" user (Debian's package creates it) or else "nobody", through
# runuser or setpriv. Where no server can be started (no PostgreSQL
# installed, no such user) the reason is printed and the exit status is 77,
# ctest's SKIP_RETURN_CODE, unless XO_REQUIRE_POSTGRES=1 (CI), which makes
# it a failure. XO_PG_BINDIR names the server's bin directory when it is not
# /usr/lib/postgresql/*/bin or on PATH.
set -u

skip() {
    echo "pg_cluster: no PostgreSQL server: $*" >&2
    if [ "${XO_REQUIRE_POSTGRES:-0}" = 1 ]; then
        echo "pg_cluster: XO_REQUIRE_POSTGRES=1, so this is a failure" >&2
        exit 1
    fi
    echo "pg_cluster: SKIP (set XO_REQUIRE_POSTGRES=1 to fail instead)" >&2
    exit 77
}

[ $# -gt 0 ] || { echo "usage: pg_cluster.sh COMMAND [ARG...]" >&2; exit 2; }

bindir=${XO_PG_BINDIR:-}
if [ -z "$bindir" ]; then
    for d in /usr/lib/postgresql/*/bin; do
        [ -x "$d/initdb" ] && bindir=$d # the glob sorts: the newest version wins
    done
fi
if [ -z "$bindir" ] && command -v initdb >/dev/null 2>&1; then
    bindir=$(dirname "$(command -v initdb)")
fi
[ -n "$bindir" ] && [ -x "$bindir/initdb" ] && [ -x "$bindir/pg_ctl" ] ||
    skip "initdb/pg_ctl not found (Debian: apt-get install postgresql)"

# A Unix socket path is limited to 107 bytes: a long TMPDIR falls back to /tmp.
base=${TMPDIR:-/tmp}
[ ${#base} -le 60 ] || base=/tmp
dir=$(mktemp -d "$base/xo-pg-XXXXXX") || skip "cannot create a temporary directory in $base"

as=""
if [ "$(id -u)" = 0 ]; then
    user=""
    for u in postgres nobody; do
        id -u "$u" >/dev/null 2>&1 && { user=$u; break; }
    done
    [ -n "$user" ] || { rm -rf "$dir"; skip "running as root and no postgres or nobody user for initdb"; }
    if command -v runuser >/dev/null 2>&1; then
        as="runuser -u $user --"
    elif command -v setpriv >/dev/null 2>&1; then
        as="setpriv --reuid=$user --regid=$(id -g "$user") --clear-groups"
    else
        rm -rf "$dir"
        skip "running as root and neither runuser nor setpriv to drop to $user"
    fi
    chown "$user" "$dir"
fi

cleanup() {
    $as "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
    rm -rf "$dir"
}

# trust on a socket only this user (or root) can reach: the directory is 0700
initdb_args="-U xo --auth=trust -E UTF8 --no-sync"
# The cluster starts as a copy of one initdb made once per server version
# and owner in XO_PG_TEMPLATE (default $base/xo-pg-template-UID, where the
# cluster's owner can reach it when that is not us; ours, mode 0711, or not
# used): a copy takes ~0.1 s where initdb took ~3 s of every test's wall
# time. The template is made under a lock, in a temporary folder renamed
# into place, and no server ever runs on it. XO_PG_TEMPLATE= (empty) runs
# initdb each time.
template_root=${XO_PG_TEMPLATE-$base/xo-pg-template-$(id -u)}
template=""
if [ -n "$template_root" ] && [ ! -L "$template_root" ]; then
    mkdir -p -m 0711 "$template_root" 2>/dev/null
    # never one another user made (or can write): /tmp is everyone's
    [ -O "$template_root" ] && [ -z "$(find "$template_root" -maxdepth 0 -perm /022 2>/dev/null)" ] ||
        template_root=""
fi
# a template is whole when initdb's last files are there; one that is not (a
# tmp cleaner's leftovers, a folder without data) is removed and made again
template_ok() {
    [ -f "$1/data/PG_VERSION" ] && [ -f "$1/data/global/pg_control" ] && [ -d "$1/data/base" ]
}
if [ -n "$template_root" ] && command -v flock >/dev/null 2>&1; then
    key=$("$bindir/initdb" --version 2>/dev/null | tr -c 'A-Za-z0-9.\n' '_' | head -n 1)_${user:-$(id -un)}
    template=$template_root/$key
    if ! template_ok "$template"; then
        (
            flock 9 || exit 1
            template_ok "$template" && exit 0
            rm -rf "$template" "$template_root"/.new-*
            tmp=$(mktemp -d "$template_root/.new-XXXXXX") || exit 1
            [ -z "$as" ] || chown "$user" "$tmp"
            if $as "$bindir/initdb" -D "$tmp/data" $initdb_args >"$tmp/initdb.log" 2>&1 &&
                mv -T "$tmp" "$template"; then
                exit 0
            fi
            rm -rf "$tmp"
            exit 1
        ) 9>"$template_root/.lock" || template=""
    fi
fi
# this cluster's own initdb (no template, or one that did not start); a
# failure skips the test with initdb's last line
own_initdb() {
    $as "$bindir/initdb" -D "$dir/data" $initdb_args >"$dir/initdb.log" 2>&1 && return 0
    local why
    why=$(tail -n 1 "$dir/initdb.log")
    rm -rf "$dir"
    skip "initdb failed: $why"
}
from_template=0
if [ -n "$template" ] && template_ok "$template" && cp -a "$template/data" "$dir/data" 2>/dev/null; then
    from_template=1
else
    own_initdb
fi
# fsync off: the cluster is thrown away; the tests kill clients, never the server
start_server() {
    $as "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-k $dir -c listen_addresses= -c fsync=off -c max_connections=50" start >/dev/null 2>&1
}
started=0
start_server && started=1
if [ $started = 0 ] && [ $from_template = 1 ]; then
    # a template that copies whole and does not start: drop it (the next
    # run makes another) and start this one from its own initdb
    (flock 9 && rm -rf "$template") 9>"$template_root/.lock"
    $as "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
    rm -rf "$dir/data"
    own_initdb
    start_server && started=1
fi
if [ $started = 0 ]; then
    why=$(tail -n 1 "$dir/server.log" 2>/dev/null)
    cleanup
    skip "the server did not start: $why"
fi
trap cleanup EXIT
trap 'exit 130' INT TERM
if ! "$bindir/createdb" -h "$dir" -U xo xo >/dev/null 2>"$dir/createdb.log"; then
    why=$(tail -n 1 "$dir/createdb.log")
    skip "createdb failed: $why"
fi

XO_TEST_PG="postgresql:///xo?host=$dir&user=xo"
export XO_TEST_PG
"$@"
