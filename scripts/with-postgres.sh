#!/usr/bin/env bash
# with-postgres.sh CMD [ARG...] runs CMD against a throwaway PostgreSQL
# cluster: initdb in a temporary directory, the server on a free loopback
# port, CMD with LONGRUN_POSTGRES_URL=postgres://longrun:PASSWORD@127.0.0.1:PORT
# (no database: each user of it picks its own), then the cluster stopped
# and its directory removed, whether CMD passed, failed or was interrupted.
# The exit status is CMD's.
#
# PostgreSQL refuses to run as root, so under root (CI, containers) the
# cluster runs as the unprivileged user nobody (LONGRUN_POSTGRES_USER
# overrides), through runuser or setpriv; as a normal user it runs as you.
#
# The binaries: LONGRUN_POSTGRES_BIN, else the newest
# /usr/lib/postgresql/*/bin (Debian's postgresql package), else initdb on
# PATH. When no cluster can be started this says so in a loud line and
# exits 0, so `make test` goes on with the rest; with
# LONGRUN_REQUIRE_POSTGRES=1 (.ci/run sets it) it fails instead.
set -euo pipefail

if [ "$#" -eq 0 ]; then
	echo "usage: $0 CMD [ARG...]" >&2
	exit 2
fi

loud() { printf '\n!!! make test: %s\n\n' "$*" >&2; }
give_up() {
	loud "PostgreSQL could not be started ($*): the e2e tests against Temporal on PostgreSQL DO NOT RUN. Install the postgresql package (.ci/run does)."
	if [ "${LONGRUN_REQUIRE_POSTGRES:-}" = 1 ]; then
		exit 1
	fi
	exit 0
}

bin=${LONGRUN_POSTGRES_BIN:-}
if [ -z "$bin" ]; then
	bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
fi
if [ -z "$bin" ] && command -v initdb >/dev/null 2>&1; then
	bin=$(dirname "$(command -v initdb)")
fi
if [ -z "$bin" ] || [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
	give_up "no initdb and pg_ctl found; set LONGRUN_POSTGRES_BIN"
fi

# as runs a command as the cluster's owner.
as() { "$@"; }
if [ "$(id -u)" -eq 0 ]; then
	owner=${LONGRUN_POSTGRES_USER:-nobody}
	id "$owner" >/dev/null 2>&1 || give_up "running as root and there is no user $owner to run it as"
	if command -v runuser >/dev/null 2>&1; then
		as() { runuser -u "$owner" -- "$@"; }
	elif command -v setpriv >/dev/null 2>&1; then
		as() { setpriv --reuid="$owner" --regid="$(id -g "$owner")" --clear-groups -- "$@"; }
	else
		give_up "running as root with neither runuser nor setpriv to drop to $owner"
	fi
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/longrun-pg-XXXXXX")
data=$dir/data
started=0
cleanup() {
	if [ "$started" = 1 ]; then
		as "$bin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ "$(id -u)" -eq 0 ]; then
	chown "$owner" "$dir"
	# A root-only TMPDIR (/root/tmp) is out of the owner's reach.
	if ! as test -w "$dir"; then
		rm -rf "$dir"
		dir=$(mktemp -d /tmp/longrun-pg-XXXXXX)
		data=$dir/data
		chown "$owner" "$dir"
	fi
fi
chmod 700 "$dir"

# Password auth over TCP, so other users of a shared machine cannot use
# the cluster; the socket lives in the private directory.
password=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$password" >"$dir/pw"
[ "$(id -u)" -ne 0 ] || chown "$owner" "$dir/pw"
if ! (cd "$dir" && as "$bin/initdb" -D "$data" -U longrun --pwfile="$dir/pw" \
	--auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C >"$dir/initdb.log" 2>&1); then
	tail -n 20 "$dir/initdb.log" >&2
	give_up "initdb failed"
fi
rm -f "$dir/pw"

# A free loopback port: try a few random ones; pg_ctl -w fails when the
# port is taken. fsync is off: this cluster is thrown away, and the tests
# kill Temporal, not PostgreSQL. Each devserver keeps a pool per service
# and store, and several run at once, hence max_connections.
port=""
for _ in 1 2 3 4 5 6 7 8; do
	try=$((20000 + RANDOM % 40000))
	if (cd "$dir" && as "$bin/pg_ctl" -D "$data" -l "$dir/postgres.log" -w -t 60 \
		-o "-h 127.0.0.1 -p $try -k $dir -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
		start >/dev/null 2>&1); then
		port=$try
		started=1
		break
	fi
done
if [ -z "$port" ]; then
	tail -n 20 "$dir/postgres.log" >&2 || true
	give_up "pg_ctl start failed on eight ports"
fi

echo "with-postgres: PostgreSQL $("$bin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port (data in $data, removed afterwards)"
export LONGRUN_POSTGRES_URL="postgres://longrun:$password@127.0.0.1:$port?sslmode=disable"
set +e
"$@"
status=$?
set -e
exit "$status"
