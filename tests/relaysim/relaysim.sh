# relaysim.sh: shell helpers for integration tests that need upstream relays.
# Source it from bash; it defines functions only and starts nothing by itself.
#   relaysim_start CONFIG       start in the background, wait for the ready line
#   relaysim_url NAME           ws:// or wss:// URL of relay NAME
#   relaysim_q COMMAND ...      any query.mjs command (stats, truth, kick, ...)
#   relaysim_stop               SIGTERM and wait; returns relaysim's status
# After relaysim_start: RELAYSIM_PID, RELAYSIM_READY (the ready line's file)
# and RELAYSIM_ERR (its stderr). RELAYSIM_CA may name a CA file for https.
# The caller owns cleanup: call relaysim_stop from its EXIT trap.

RELAYSIM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# relaysim_start CONFIG [TIMEOUT_S]: first start may generate and sign the
# dataset (tens of seconds for 20k events), later starts read the cache.
relaysim_start() {
	local cfg=$1 timeout=${2:-300} i
	local dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/relaysim.XXXXXX") || return 1
	RELAYSIM_READY=$dir/ready
	RELAYSIM_ERR=$dir/err
	node "$RELAYSIM_DIR/relaysim.mjs" --config "$cfg" >"$RELAYSIM_READY" 2>"$RELAYSIM_ERR" &
	RELAYSIM_PID=$!
	for ((i = 0; i < timeout * 10; i++)); do
		grep -q '"ready":true' "$RELAYSIM_READY" 2>/dev/null && return 0
		kill -0 "$RELAYSIM_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "relaysim did not start:" >&2
	cat "$RELAYSIM_ERR" >&2
	return 1
}

relaysim_q() {
	node "$RELAYSIM_DIR/query.mjs" --ready "$RELAYSIM_READY" \
	    ${RELAYSIM_CA:+--ca "$RELAYSIM_CA"} "$@"
}

relaysim_url() {
	relaysim_q url "$1"
}

relaysim_stop() {
	local st=0
	[ -n "${RELAYSIM_PID:-}" ] || return 0
	kill -TERM "$RELAYSIM_PID" 2>/dev/null
	wait "$RELAYSIM_PID" || st=$?
	RELAYSIM_PID=
	return $st
}
