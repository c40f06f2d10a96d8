#!/usr/bin/env bash
# btrace gdbserver under GDB's target extended-remote: --multi with no
# program, run to a breakpoint with record btrace and its call history,
# the program ends and runs again in the same connection, attach to a
# running process, detach (it runs on untraced), attach again and kill;
# extended mode with the command line's program (no --multi); TCP; bad
# run and attach get GDB's errors and a line on btrace's stderr.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/gdbserver.sh"

SQ_LINE=$(line_of MARK_SQUARE\ )

# xgdb OUT STUB-ARGS PROGRAM GDB-ARGS...: GDB on "target extended-remote |
# btrace gdbserver STUB-ARGS"; GDB's and the stub's output into OUT.
xgdb() {
	local out=$1 stub=$2 prog=$3
	shift 3
	timeout 300 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
		-ex "target extended-remote | $BTRACE gdbserver $stub" "$@" \
		"$prog" >"$out" 2>&1 </dev/null
}

# 1. --multi: run to a breakpoint, record btrace, the history; the
#    program exits; run again (same connection); kill.
xgdb "$work/run.out" "--multi -" "$GS_PROG" \
	-ex "set remote exec-file $GS_PROG" -ex "handle SIGUSR1 nostop noprint" \
	-ex "break sum_squares" -ex run -ex "record btrace" -ex finish \
	-ex "record function-call-history" -ex "info record" -ex "record stop" \
	-ex continue -ex run -ex 'p n' -ex kill -ex "info inferiors"
gdb_clean "$work/run.out"
[ "$(grep -c '^Process .*gdbsrv_dyn created; pid = ' "$work/run.out")" = 2 ] ||
	{ cat "$work/run.out"; fail "not two processes started by run"; }
[ "$(grep -Ec '^Breakpoint 1, sum_squares \(n=4\)' "$work/run.out")" = 2 ] ||
	{ cat "$work/run.out"; fail "not stopped at sum_squares in both runs"; }
expect "$work/run.out" "^[0-9]+"$'\t'"square$" "no square in the function-call history"
expect "$work/run.out" "^[0-9]+"$'\t'"sum_squares$" "no sum_squares in the function-call history"
expect "$work/run.out" "^Recording format: Branch Trace Store\.$" "record btrace is not BTS"
expect "$work/run.out" "^sum 30 total 61 handled 1$" "the first run's result is wrong"
expect "$work/run.out" "^\[Inferior 1 \(process [0-9]+\) exited normally\]" "the first run did not exit"
expect "$work/run.out" '^\$[0-9]+ = 4$' "the second run is not at sum_squares(4)"
expect "$work/run.out" "^\[Inferior 1 \(process [0-9]+\) killed\]" "kill"
expect "$work/run.out" '^\* 1 +<null> ' "a process is left after kill"
no_leftovers "$GS_PROG"

# 2. attach to a running process, detach: it runs on untraced; attach
#    again and kill it.
"$TARGETS/sleeper" 2>"$work/sleeper.err" &
sp=$!
PIDS+=($sp)
for i in $(seq 1 100); do grep -q ready "$work/sleeper.err" && break; sleep 0.05; done
xgdb "$work/att.out" "--multi -" "$TARGETS/sleeper" \
	-ex "attach $sp" -ex bt -ex "record btrace" -ex "info record" -ex detach \
	-ex "shell grep TracerPid /proc/$sp/status" -ex "attach $sp" -ex bt -ex kill
gdb_clean "$work/att.out"
[ "$(grep -c "^Attached; pid = $sp$" "$work/att.out")" = 2 ] ||
	{ cat "$work/att.out"; fail "not attached twice"; }
expect "$work/att.out" "in wait_forever \(\) at .*sleeper.c" "attach: no backtrace"
expect "$work/att.out" "^Active record target: record-btrace" "attach: no record btrace"
expect "$work/att.out" "^\[Inferior 1 \(process $sp\) detached\]" "no detach"
expect "$work/att.out" "^TracerPid:[[:space:]]+0$" "still traced after detach"
expect "$work/att.out" "^\[Inferior 1 \(process $sp\) killed\]" "kill after the second attach"
gone_within $sp 50 || fail "the attached process survived kill"
wait $sp 2>/dev/null

# 3. No --multi: extended mode with the command line's program; after
#    it exits, run starts it again.
xgdb "$work/prog.out" "- $GS_PROG" "$GS_PROG" \
	-ex "handle SIGUSR1 nostop noprint" -ex continue -ex "break square" -ex run \
	-ex "info frame" -ex kill
gdb_clean "$work/prog.out"
expect "$work/prog.out" "^\[Inferior 1 \(process [0-9]+\) exited normally\]" "the command line's program did not exit"
expect "$work/prog.out" "^Breakpoint 1, square \(x=1\) at .*gdbsrv_dyn.c:$SQ_LINE" "run again: no breakpoint"
[ "$(grep -c '^Process .*gdbsrv_dyn created; pid = ' "$work/prog.out")" = 2 ] ||
	{ cat "$work/prog.out"; fail "run did not start the program again"; }
no_leftovers "$GS_PROG"

# 4. TCP: the stub serves run after run; when GDB goes away it waits for
#    the next (as gdbserver without --once), whose monitor exit ends it.
"$BTRACE" gdbserver --multi :0 >"$work/tcp.err" 2>&1 &
stub=$!
PIDS+=($stub)
for i in $(seq 1 100); do grep -q "Listening on port" "$work/tcp.err" && break; sleep 0.1; done
port=$(sed -n 's/^Listening on port \([0-9]*\)$/\1/p' "$work/tcp.err")
[ -n "$port" ] || { cat "$work/tcp.err"; fail "no port"; }
timeout 120 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
	-ex "target extended-remote 127.0.0.1:$port" \
	-ex "set remote exec-file $GS_PROG" -ex "handle SIGUSR1 nostop noprint" \
	-ex run -ex run "$GS_PROG" >"$work/tcp.out" 2>&1 </dev/null
sleep 0.3
kill -0 $stub 2>/dev/null || { cat "$work/tcp.err"; fail "the --multi stub did not wait for the next GDB"; }
timeout 120 gdb -nx -batch -ex "target extended-remote 127.0.0.1:$port" \
	-ex "monitor exit" >"$work/exit.out" 2>&1 </dev/null
gone_within $stub || fail "monitor exit did not end the --multi stub"
wait $stub
gdb_clean "$work/tcp.out"
[ "$(grep -Ec '^\[Inferior 1 \(process [0-9]+\) exited normally\]' "$work/tcp.out")" = 2 ] ||
	{ cat "$work/tcp.out" "$work/tcp.err"; fail "TCP: not two runs to the end"; }

# 5. Bad run and attach: GDB's errors, one line each on btrace's stderr,
#    and the stub serves on.
xgdb "$work/bad.out" "--multi -" "$GS_PROG" \
	-ex "set remote exec-file $work/missing" -ex run \
	-ex "attach 999999" -ex "set remote exec-file $GS_PROG" \
	-ex "handle SIGUSR1 nostop noprint" -ex run
expect "$work/bad.out" "^btrace: cannot run '$work/missing': program not found$" "no reason for the missing program"
expect "$work/bad.out" "^Running \"$work/missing\" on the remote target failed" "GDB: run of a missing program"
expect "$work/bad.out" "^btrace: cannot attach to 999999: no such process$" "no reason for the bad pid"
expect "$work/bad.out" "^Attaching to process 999999 failed" "GDB: attach to a bad pid"
expect "$work/bad.out" "^\[Inferior 1 \(process [0-9]+\) exited normally\]" "no run after the errors"
no_leftovers "$GS_PROG"
echo "ok"
