# Shared by the attach and session tests (sourced; not a test itself): the
# e2e setup (lib/common.sh) and helpers for programs that run meanwhile.
. "$TESTDIR/e2e/lib/common.sh"
WORK=$work

# recorder_maps PID: what the recorder maps into process PID, one line a
# mapping: the tables and rings (memfds named btrace, from 0x600000000000)
# and the zones (anonymous, executable).
recorder_maps() {
	grep -E 'btrace|^6000[0-9a-f]{8}-|^[0-9a-f]+-[0-9a-f]+ ..x. 00000000 00:00 0 *$' \
		"/proc/$1/maps"
}

# rec_threads_check NAME: end the rec_threads started as NAME (SIGUSR1),
# its sum that of an untraced run of as many rounds; sets ROUNDS.
rec_threads_check() {
	local want
	kill -USR1 "$TPID"
	wait "$TPID" || fail "rec_threads exit status $?"
	set -- $(tail -n 1 "$WORK/$1.out")
	ROUNDS=$1
	want=$("$TARGETS/rec_threads" sum "$1" 0 | tail -n 1)
	[ "$2" = "$want" ] || fail "rec_threads: sum $2 after $1 rounds, untraced $want"
}

# start_target NAME ARGS...: run a target in the background with its
# output in $WORK/NAME.out; waits for its "ready" line; sets $TPID.
start_target() {
	local name=$1 i
	shift
	"$@" >"$WORK/$name.out" 2>&1 &
	TPID=$!
	PIDS+=("$TPID")
	for i in $(seq 1 200); do
		grep -q ready "$WORK/$name.out" 2>/dev/null && return 0
		sleep 0.01
	done
	fail "$name did not start"
}

# wait_for FILE PATTERN [TENTHS]: until FILE contains PATTERN.
wait_for() {
	local i
	for i in $(seq 1 "${3:-100}"); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "--- $1:" >&2
	cat "$1" >&2
	fail "no '$2' in $1"
}

# not_traced PID: no tracer, and no thread left stopped.
not_traced() {
	local t st
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$1/status" ||
		fail "$1 still traced: $(grep TracerPid /proc/$1/status)"
	for t in /proc/$1/task/*; do
		st=$(awk '/^State:/ { print $2 }' "$t/status" 2>/dev/null)
		case $st in
		t | T) fail "thread ${t##*/} of $1 left stopped ($st)" ;;
		esac
		grep -q '^TracerPid:[[:space:]]*0$' "$t/status" 2>/dev/null ||
			[ ! -e "$t/status" ] || fail "thread ${t##*/} still traced"
	done
}
