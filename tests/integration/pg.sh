# pg.sh — a throwaway PostgreSQL 15 for the uplink tests (sourced after
# lib.sh, not run). It lives in its own temporary directory, listens on
# 127.0.0.1 and a free high port only, and is stopped and removed on exit.
#
# initdb refuses to run as root, so as root every server command runs as
# the postgres user (runuser) on a directory chowned to it; as any other
# user they run as that user. TCP logins need a password (scram-sha-256),
# so a test can try a wrong one; the test role owns its own database.
#
#   pg_available        0 when the server binaries and a usable user exist
#   pg_init             initdb + start + role/database; sets PG_PORT, PG_URL,
#                       PG_URL_BADPW, PG_URL_NOHOST
#   pg_server_stop      stop the server (fast shutdown: sessions are cut)
#   pg_server_start     start it again on the same port and data
#   pg_sql SQL          run SQL as the test role, print unaligned rows
#   PG_FAST=1           fsync off (tests); unset keeps the durable defaults

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
PG_ROLE=cbtest
PG_PASSWORD='s3cret-pw'
PG_DB=cbtest
PG_DIR=

pg_as() {
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

pg_available() {
	[ -x "$PG_BIN/initdb" ] && [ -x "$PG_BIN/pg_ctl" ] && [ -x "$PG_BIN/psql" ] ||
		return 1
	if [ "$(id -u)" -eq 0 ]; then
		id postgres >/dev/null 2>&1 && command -v runuser >/dev/null
	fi
}

pg_free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

pg_server_start() {
	local opts="-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR"
	[ -n "${PG_FAST:-}" ] && opts="$opts -c fsync=off -c synchronous_commit=off"
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" \
		-o "$opts" -w -t 60 start >/dev/null
}

pg_server_stop() {
	[ -n "$PG_DIR" ] && [ -f "$PG_DIR/data/postmaster.pid" ] || return 0
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 60 stop >/dev/null
}

pg_cleanup() {
	[ -n "$PG_DIR" ] || return 0
	pg_server_stop || pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate \
		stop >/dev/null 2>&1 || true
	rm -rf "$PG_DIR"
	PG_DIR=
}

# psql over the Unix socket as the superuser (trust), for setup.
pg_admin() {
	pg_as "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR" -p "$PG_PORT" \
		-U postgres -d postgres "$@"
}

pg_sql() {
	PGPASSWORD=$PG_PASSWORD "$PG_BIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 \
		-h 127.0.0.1 -p "$PG_PORT" -U "$PG_ROLE" -d "$PG_DB" -c "$1"
}

pg_init() {
	PG_DIR=$(mktemp -d /tmp/cachebox-pg.XXXXXX)
	chmod 755 "$PG_DIR"
	[ "$(id -u)" -eq 0 ] && chown postgres:postgres "$PG_DIR"
	PG_PORT=$(pg_free_port)
	pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres -E UTF8 \
		--locale=C --auth-local=trust --auth-host=scram-sha-256 \
		>"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log"; return 1; }
	pg_server_start || { cat "$PG_DIR/server.log"; return 1; }
	pg_admin -c "CREATE ROLE $PG_ROLE LOGIN PASSWORD '$PG_PASSWORD'" \
		-c "CREATE DATABASE $PG_DB OWNER $PG_ROLE" >/dev/null
	PG_URL="postgres://$PG_ROLE:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB?sslmode=disable"
	PG_URL_BADPW="postgres://$PG_ROLE:wrong-pw@127.0.0.1:$PG_PORT/$PG_DB?sslmode=disable"
	# A free port: nothing listens there.
	PG_URL_NOHOST="postgres://$PG_ROLE:$PG_PASSWORD@127.0.0.1:$(pg_free_port)/$PG_DB?sslmode=disable"
}
