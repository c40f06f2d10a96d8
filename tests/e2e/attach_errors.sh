# Attach failures: one clear line and exit status 1 for no such process, a
# zombie, a process already traced, and missing permission.
. "$(dirname "$0")/sess_common.bash"

expect() {	# pattern, btrace arguments...
	local pat=$1 st
	shift
	${RUNAS:-} "$BTRACE" "$@" >"$WORK/out" 2>"$WORK/err"
	st=$?
	cat "$WORK/err"
	[ $st = 1 ] || fail "'$*': exit status $st, not 1"
	[ "$(wc -l <"$WORK/err")" = 1 ] || fail "'$*': not one line"
	grep -q -- "$pat" "$WORK/err" || fail "'$*': no '$pat'"
}

pid=4000000
while kill -0 $pid 2>/dev/null; do pid=$((pid + 1)); done
expect "cannot attach to $pid: no such process" attach --batch $pid

"$TARGETS/attach_zombie" 20 >"$WORK/z" &
PIDS+=($!)
wait_for "$WORK/z" '[0-9]'
zpid=$(head -n 1 "$WORK/z")
for i in $(seq 1 100); do	# until the child has really exited
	[ "$(awk '/^State:/ { print $2 }' /proc/$zpid/status)" = Z ] && break
	sleep 0.01
done
expect "cannot attach to $zpid: .*zombie" attach --batch "$zpid"

start_target victim "$TARGETS/sess_checksum" 100000 2000
"$BTRACE" attach "$TPID" </dev/null >"$WORK/first" 2>&1 &
first=$!
PIDS+=("$first")
wait_for "$WORK/first" 'attached to process'
expect "cannot attach to $TPID: already traced by another debugger (pid $first)" \
	attach --batch "$TPID"
kill -INT "$first"
wait "$first"
not_traced "$TPID"

# Credentials: an unprivileged btrace cannot trace a root process.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$BTRACE"; then
	RUNAS="setpriv --reuid=65534 --regid=65534 --clear-groups"
	expect "cannot attach to $TPID: operation not permitted (credentials: the process runs as uid 0, btrace as uid 65534)" \
		attach --batch "$TPID"
	RUNAS=
	not_traced "$TPID"
else
	echo "(credentials case skipped: needs root, setpriv and a btrace others may run)"
fi
