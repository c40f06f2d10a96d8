#!/usr/bin/env bash
# The recorder with threads that start, exit and crash (rec_threads):
# - a crash in the last of sixteen threads: the stop, its thread and its
#   history are right, and that history equals single-stepping's branch for
#   branch (the others wait on each other's ends: their paths are timing's);
# - 50 attach/detach cycles on a program that starts and joins eight
#   threads a round: while attached, the code in memory equals the files
#   (the recorder never writes the program's code); afterwards nobody is
#   traced or stopped; then 50 more in the fast mode; at the end the sum
#   equals an untraced run's.
. "$(dirname "$0")/sess_common.bash"
prog=$TARGETS/rec_threads

"$BTRACE" run --json --last 16 --soft-mode record -- "$prog" crash \
	>"$WORK/crash.json" 2>"$WORK/crash.err"
rc=$?
[ $rc = 139 ] || { cat "$WORK/crash.err"; fail "crash run exits $rc, not 139"; }
python3 - "$WORK/crash.json" <<'PY' || fail "crash history"
import json, sys
doc = json.load(open(sys.argv[1]))
stop = doc["stop"]
assert stop["signal"] == "SIGSEGV" and stop["sym"].startswith("rec_crash_here"), stop
assert stop["tid"] != doc["pid"], stop
th = [t for t in doc["threads"] if t["tid"] == stop["tid"]][0]
last = th["branches"][-1]
assert last["kind"] == "call" and last["to_sym"] == "rec_crash_here", last
PY
out=$(timeout 300 "$TOOLS/softdiff" -S -m record -- "$prog" crash 2>&1) ||
	{ echo "$out"; fail "recorder and single-step differ"; }
echo "$out"

# cycles MODE: 50 attach/detach cycles in that mode; the recorder's code
# checked while attached (the fast mode's int3s are in the program's code).
cycles() {
	local mode=$1 i log bt t0=$(date +%s%N)

	for i in $(seq 1 50); do
		log=$WORK/attach.$mode.$i
		"$BTRACE" attach --batch --soft-mode "$mode" -ex 'threads' "$TPID" \
			>"$log" 2>&1 &
		bt=$!
		PIDS+=("$bt")
		wait_for "$log" 'attached to process'
		sleep 0.0$((i % 10))
		if [ "$mode" = record ]; then
			python3 "$TESTDIR/e2e/sess_codecheck.py" "$TPID" >"$WORK/code.$i" 2>&1 ||
				{ cat "$WORK/code.$i"; fail "cycle $i: code differs while attached"; }
		fi
		kill -INT "$bt"
		wait "$bt" || { cat "$log"; fail "$mode cycle $i: btrace failed"; }
		grep -q "detached from process $TPID" "$log" ||
			{ cat "$log"; fail "$mode cycle $i: not detached"; }
		kill -0 "$TPID" 2>/dev/null || { cat "$log"; wait "$TPID"; fail "$mode cycle $i: target gone (status $?)"; }
		not_traced "$TPID"
	done
	echo "50 attach/detach cycles ($mode) in $((($(date +%s%N) - t0) / 1000000)) ms"
}

start_target rt "$prog" sum 0 2000
cycles record
# threads stepping over one int3 at once (a thread start)
cycles fast
kill -USR1 "$TPID"
wait "$TPID" || fail "target exit status $?"
read -r rounds got < <(tail -n 1 "$WORK/rt.out")
want=$("$prog" sum "$rounds" 0 | tail -n 1)
echo "$rounds rounds: untraced $want; attached 100 times $got"
[ "$got" = "$want" ] || fail "sum differs"
