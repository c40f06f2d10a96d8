# Shared by the attach and session tests (sourced; not a test itself): the
# e2e setup (lib/common.sh) and helpers for programs that run meanwhile.
. "$TESTDIR/e2e/lib/common.sh"
WORK=$work

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
