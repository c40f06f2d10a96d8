#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The single-step backend's branch records, with their block sizes, equal
# the branches derived from an independent PTRACE_SINGLESTEP trace of the
# same program (tests/tools/steptrace.c), branch for branch; the stop and
# the program's fate are the real ones.
. "$TESTDIR/e2e/lib/common.sh"
tmp=$work
fail=0

# Both tracers must see the same execution: glibc's string functions branch
# on where the environment strings lie, so the same environment (no $_
# naming each tool) and no address-space randomization.
same="env -i PATH=/usr/bin:/bin setarch -R"

check() {	# target, expected stop line prefix, expected wstatus
	local t=$1 stop=$2 ws=$3
	$same "$TOOLS/steptrace" -o "$tmp/$t.step" -- "$TARGETS/$t" &
	$same "$TOOLS/captrace" -- "$TARGETS/$t" >"$tmp/$t.cap" || {
		echo "FAIL $t: captrace failed"; fail=1; wait; return; }
	wait
	if ! grep -q "^stop $stop\( \|$\)" "$tmp/$t.cap"; then
		echo "FAIL $t: expected stop '$stop', got: $(grep '^stop' "$tmp/$t.cap")"
		fail=1
	fi
	if ! grep -qx "wstatus $ws" "$tmp/$t.cap"; then
		echo "FAIL $t: expected wstatus $ws, got: $(grep '^wstatus' "$tmp/$t.cap")"
		fail=1
	fi
	if ! python3 "$TESTDIR/e2e/capture_steptrace.py" "$tmp/$t.step" "$tmp/$t.cap" "$TARGETS/$t"; then
		echo "FAIL $t: records differ from steptrace"
		fail=1
	fi
}

check exit_status "exit tid=[0-9]* sig=0 status=3" 0x300
check crash_null "signal tid=[0-9]* sig=11 status=0 pc=0x[0-9a-f]* addr=0x0" 0xb
check sighandler "signal tid=[0-9]* sig=11" 0xb
# The handler was entered as an interrupt branch and left by rt_sigreturn.
grep -q " interrupt [0-9]* 0$" "$tmp/sighandler.cap" ||
	{ echo "FAIL sighandler: no interrupt branch into the handler"; fail=1; }
grep -q " sysret [0-9]* 4$" "$tmp/sighandler.cap" ||
	{ echo "FAIL sighandler: no sigreturn branch"; fail=1; }

# Signals at fixed instructions: int3, SIGSEGV left by siglongjmp, raise(),
# a blocked signal delivered by sigprocmask; exits 5 when all handlers ran.
check cap_sigsync "exit tid=[0-9]* sig=0 status=5" 0x500

# execve: the trace goes on into the new program (it exits 4), the exec a
# branch from the syscall instruction to the new first instruction.
check cap_exec "exit tid=[0-9]* sig=0 status=4" 0x400
grep -q " sysret [0-9]* 0$" "$tmp/cap_exec.cap" ||
	{ echo "FAIL cap_exec: no branch across execve"; fail=1; }

# Asynchronous ones cannot be compared run to run: timer signals in a busy
# loop and in nanosleep, SIGCHLD of a fork, a thread.  The program must
# end as it does untraced (7).
"$TARGETS/cap_signals"; want=$?
"$TOOLS/captrace" -- "$TARGETS/cap_signals" >"$tmp/sig.cap"
grep -q "^stop exit tid=[0-9]* sig=0 status=$want " "$tmp/sig.cap" &&
	grep -qx "wstatus 0x${want}00" "$tmp/sig.cap" ||
	{ echo "FAIL cap_signals: want exit $want, got $(grep -E '^(stop|wstatus)' "$tmp/sig.cap")"; fail=1; }

# fork with a breakpoint in the code the child runs: a child not followed
# gets the memory without our int3 (it would die of SIGTRAP: exit 105);
# followed (-f), the child stops at it and both go on.
child_at=$(nm "$TARGETS/cap_fork" | awk '$3 == "child_work" { print "0x" $1 }')
"$TOOLS/captrace" -b "$child_at" -c 2 -- "$TARGETS/cap_fork" >"$tmp/fork.cap"
grep -q "^stop exit tid=[0-9]* sig=0 status=6 " "$tmp/fork.cap" ||
	{ echo "FAIL cap_fork: $(grep '^stop' "$tmp/fork.cap")"; fail=1; }
"$TOOLS/captrace" -f -b "$child_at" -c 2 -- "$TARGETS/cap_fork" >"$tmp/forkf.cap"
if [ "$(grep -c '^stop' "$tmp/forkf.cap")" != 2 ] ||
   ! grep -q "^stop break tid=[0-9]* .* pc=$(printf '0x%x' "$child_at") " "$tmp/forkf.cap" ||
   ! grep -q "^stop exit tid=[0-9]* sig=0 status=6 " "$tmp/forkf.cap"; then
	echo "FAIL cap_fork -f:"; grep '^stop' "$tmp/forkf.cap"; fail=1
fi

# A thread crashes while another spins and main waits: the stop is the
# crashing thread's, its last branch the call into crash_here.
"$TOOLS/captrace" -- "$TARGETS/thread_crash" >"$tmp/thr.cap"
crash=$(nm "$TARGETS/thread_crash" | awk '$3 == "crash_here" { print "0x" $1 }' | sed 's/0x0*/0x/')
tid=$(sed -n 's/^stop signal tid=\([0-9]*\) sig=11 .*/\1/p' "$tmp/thr.cap")
last=$(awk -v t="$tid" '$1 == "thread" { on = ($2 == t) } on && /^0x/ { l = $2 " " $3 } END { print l }' "$tmp/thr.cap")
nthreads=$(grep -c '^thread ' "$tmp/thr.cap")
if [ -z "$tid" ] || [ "$tid" = "$(sed -n 's/^thread \([0-9]*\) .*/\1/p' "$tmp/thr.cap" | head -1)" ] ||
   [ "$last" != "$crash call" ] || [ "$nthreads" != 3 ] || ! grep -qx "wstatus 0xb" "$tmp/thr.cap"; then
	echo "FAIL thread_crash: tid '$tid', last branch '$last' (want '$crash call'), $nthreads threads"
	grep -E '^(stop|thread|wstatus)' "$tmp/thr.cap"
	fail=1
fi
exit $fail
