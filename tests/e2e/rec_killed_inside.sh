#!/usr/bin/env bash
# A process that ends while the recorder runs a system call in one of its
# threads (a zone's mmap, a look at SIGSEGV's action: what entering the
# translation may need), as when another thread's exit_group or a SIGKILL
# comes at that moment.  The thread's end is reaped inside that system
# call; before, btrace went on with it as if it still ran: it crashed
# (the thread's state freed with its end) or waited forever for a report
# that would never come (an exit held for the others): 3 crashes and 2
# hangs in about 2,000 runs of rec_lookup_threads on a loaded machine,
# and one such hang ran make check's rec_lookup.sh out of its time.
# BTRACE_TEST_SYSCALL_KILL=N sends the SIGKILL as the Nth such system
# call in a thread other than the first begins: each run must end in the
# kill's report (or, where the run had fewer, as untraced), never a crash
# or a hang, and leave nothing running.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/rec_lookup_threads

kills=0
for args in "4 2 6" "0 4 6"; do
	want=$("$prog" $args) || fail "$prog $args fails untraced"
	# which call is the Nth, and whether the kernel reports the end
	# before the step's stop or instead of it, varies: each one thrice
	for n in 1 1 1 2 2 2 3 3 3 4 4 4 5 5 6 8; do
		BTRACE_TEST_SYSCALL_KILL=$n timeout --verbose -k 5 60 "$BTRACE" \
			run --soft-mode record --last 1 -- "$prog" $args >"$work/out" \
			2>"$work/err"
		rc=$?
		grep -q '^timeout: sending signal' "$work/err" && rc=124
		case $rc in
		137)
			grep -q '^stop: killed by SIGKILL in thread' "$work/out" || {
				cat "$work/out" "$work/err"
				fail "[$args] kill $n: no report of the kill"; }
			kills=$((kills + 1)) ;;
		0)
			[ "$(sed '/^last 1 branches of thread/,$d' "$work/out")" = "$want" ] || {
				cat "$work/out" "$work/err"
				fail "[$args] kill $n: exited, output not the untraced one"; } ;;
		124) fail "[$args] kill $n: btrace still waits after 60 s" ;;
		*)
			cat "$work/out" "$work/err"
			fail "[$args] kill $n: btrace exited $rc" ;;
		esac
		no_leftovers "$prog"
	done
done
# the first few system calls of each set come before any exit
[ $kills -ge 6 ] || fail "only $kills runs were killed inside a system call"
echo "ok: $kills runs killed inside the recorder's system calls, each reported"
