#!/usr/bin/env bash
# GDB's non-stop mode through btrace gdbserver, with record btrace on
# targets/gdbsrv_threads (two workers that wait for the debugger's flag):
# one thread stops at a breakpoint while the others run; its call history
# (the program's control flow, not the scheduler's) while the other
# worker runs, and replayed while they run; that thread continued on its
# own while the other stops at its breakpoint with its own history; a
# running thread stopped (vCont;t, "Thread N stopped.") whose history
# ends where it stands; then every thread continued to the exit.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/gdbserver.sh"

PROG=$TARGETS/gdbsrv_threads

# nsgdb OUT GDB-ARGS...: GDB in non-stop mode on the stub over stdio.
nsgdb() {
	local out=$1
	shift
	timeout 300 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
		-ex "set non-stop on" -ex "target remote | $BTRACE gdbserver - $PROG" \
		"$@" "$PROG" >"$out" 2>&1 </dev/null
}

# funcs FILE SECTION N: the last N function names of a call history.
funcs() {
	section "$1" "$2" | grep -E "^[0-9]+"$'\t''[A-Za-z_]' | cut -f2 | tail -n "$3" |
		tr '\n' ' '
}

nsgdb "$work/ns.out" \
	-ex "break spawned" -ex continue -ex "record btrace" \
	-ex "break alpha_mark" -ex "break beta_mark" \
	-ex "set var go_a = 1" -ex continue \
	-ex 'echo @@T1\n' -ex "info threads" \
	-ex 'echo @@A\n' -ex "thread 2" -ex "record function-call-history -" \
	-ex 'echo @@REPLAY\n' -ex "record goto begin" -ex "info record" \
	-ex "record goto end" \
	-ex 'echo @@T2\n' -ex "set var go_b = 1" -ex continue -ex "info threads" \
	-ex 'echo @@B\n' -ex "thread 3" -ex "record function-call-history -" \
	-ex 'echo @@INT\n' -ex "thread 2" -ex interrupt -ex "delete 3" \
	-ex "thread 3" -ex continue \
	-ex 'echo @@A2\n' -ex "thread 2" -ex "bt 2" \
	-ex "record function-call-history -" \
	-ex 'echo @@END\n' -ex "set var go_a = 2" -ex "continue -a" \
	-ex 'echo @@@\n'
gdb_clean "$work/ns.out"

expect "$work/ns.out" '^Thread 1 "gdbsrv_threads" hit Breakpoint 1, spawned \(\)' \
	"main did not stop at spawned"
expect "$work/ns.out" '^Thread 2 "gdbsrv_threads" hit Breakpoint 2, alpha_mark \(s=9\)' \
	"alpha's thread did not stop at alpha_mark"

# While thread 2 is stopped, 1 and 3 run.
section "$work/ns.out" T1 >"$work/t1"
expect "$work/t1" '^\* 1 .*\(running\)$' "main not running while alpha's thread is stopped"
expect "$work/t1" '^  2 .* alpha_mark \(s=9\)' "alpha's thread not shown at alpha_mark"
expect "$work/t1" '^  3 .*\(running\)$' "beta's thread not running while alpha's is stopped"

want="alpha alpha_work alpha_leaf alpha_work alpha_leaf alpha_work alpha_leaf alpha_work alpha alpha_mark "
got=$(funcs "$work/ns.out" A 10)
[ "$got" = "$want" ] || { cat "$work/ns.out"; fail "alpha's history ends '$got', not '$want'"; }
section "$work/ns.out" A | grep -q beta && { cat "$work/ns.out"; fail "beta in alpha's history"; }

# Thread 2 replays while the others run.
section "$work/ns.out" REPLAY >"$work/replay"
expect "$work/replay" "^Replay in progress\.  At instruction 1\.$" "no replay of alpha's thread"
expect "$work/replay" "for thread 2 " "the record is not thread 2's"

# Thread 2 continued alone; beta's thread stops at its mark.
section "$work/ns.out" T2 >"$work/t2"
expect "$work/t2" '^Thread 3 "gdbsrv_threads" hit Breakpoint 3, beta_mark \(s=15\)' \
	"beta's thread did not stop at beta_mark"
expect "$work/t2" '^\* 2 .*\(running\)$' "alpha's thread not running after its continue"
expect "$work/t2" '^  3 .* beta_mark \(s=15\)' "beta's thread not shown at beta_mark"
want="beta beta_work beta_leaf beta_work beta_leaf beta_work beta beta_mark "
got=$(funcs "$work/ns.out" B 8)
[ "$got" = "$want" ] || { cat "$work/ns.out"; fail "beta's history ends '$got', not '$want'"; }
section "$work/ns.out" B | grep -q alpha && { cat "$work/ns.out"; fail "alpha in beta's history"; }

# A running thread stopped on its own: its history ends where it stands,
# in the function of its frame #0 (or of #1, when it stands on the first
# instruction of #0: GDB counts that one as the current, not as history).
expect "$work/ns.out" '^Thread 2 "gdbsrv_threads" stopped\.$' "interrupt did not stop thread 2"
section "$work/ns.out" A2 >"$work/a2"
frames=$(grep -E '^#[01] ' "$work/a2" | sed -E 's/^#[01] +(0x[0-9a-f]+ in )?([A-Za-z_0-9]+) .*/\2/' |
	sort -u | tr '\n' ' ')
last=$(funcs "$work/ns.out" A2 1)
[ -n "$last" ] && case " $frames" in *" $last"*) true ;; *) false ;; esac ||
	{ cat "$work/ns.out"; fail "thread 2's history ends in '$last', its frames are '$frames'"; }

# Every thread continued: the program ends as it would.
section "$work/ns.out" END >"$work/end"
expect "$work/end" "^alpha and beta done 9 15$" "the program's output"
expect "$work/end" '^\[Inferior 1 \(process [0-9]+\) exited normally\]' "no exit in non-stop"
no_leftovers "$PROG"
echo "ok"
