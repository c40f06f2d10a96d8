#!/usr/bin/env bash
# GDB's own `record btrace` through btrace gdbserver (the software
# backend here): the format GDB picks, the call and instruction history
# against `btrace show` of the same run (monitor save), reverse-step,
# reverse-next, reverse-finish, record goto, a crash reached while
# recording, delta reads, and a ring that wrapped between two reads
# (E.Overflow., then GDB reads everything again).
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/gdbserver.sh"

SQ=$(line_of MARK_SQUARE\ )
SQRET=$(line_of MARK_SQUARE_RET)
CALLSQ=$(line_of MARK_CALL_SQUARE)
SUMRET=$(line_of MARK_SUM_RET)
FOR=$((CALLSQ - 1))
SUMSTART=$(grep -n 'int s = 0, i;' "$GS_SRC" | cut -d: -f1)

# 1. Record from sum_squares to its return; histories; going backwards.
gsgdb "$work/rec.out" "$GS_PROG" -ex "handle SIGUSR1 nostop noprint" \
	-ex "break sum_squares" -ex continue -ex "record btrace" \
	-ex "break $SUMRET" -ex continue -ex "info record" \
	-ex 'echo @@CALLS\n' -ex "record function-call-history" \
	-ex 'echo @@INSNS\n' -ex "record instruction-history" \
	-ex 'echo @@END\n' -ex 'p/x $pc' \
	-ex "monitor save $work/rec.trace" \
	-ex 'echo @@RS1\n' -ex reverse-step -ex 'echo @@RS2\n' -ex reverse-step \
	-ex 'echo @@RS3\n' -ex reverse-step -ex 'echo @@RS4\n' -ex reverse-step \
	-ex 'echo @@RF\n' -ex reverse-finish -ex 'echo @@RN1\n' -ex reverse-next \
	-ex 'echo @@RN2\n' -ex reverse-next -ex 'echo @@GB\n' \
	-ex "record goto begin" -ex 'echo @@GE\n' -ex "record goto end" \
	-ex 'echo @@STOP\n' -ex "record stop" -ex continue
gdb_clean "$work/rec.out"
expect "$work/rec.out" "^Recording format: Branch Trace Store\.$" "GDB did not record in BTS format"
expect "$work/rec.out" "^Recorded [0-9]+ instructions in 9 functions \(0 gaps\)" "info record: not 9 function segments"
expect "$work/rec.out" "^saved the trace of process [0-9]+ to " "monitor save"

# The call history: GDB's whole list is the tail of btrace show's.
section "$work/rec.out" CALLS | awk -F'\t' '{ print $2 }' >"$work/gdb.calls"
"$BTRACE" show --calls --last 1000 "$work/rec.trace" >"$work/show.calls" ||
	fail "btrace show --calls failed"
awk '$1 ~ /^-[0-9]+$/ { print $2 }' "$work/show.calls" | tail -n "$(wc -l <"$work/gdb.calls")" >"$work/show.tail"
[ "$(wc -l <"$work/gdb.calls")" = 9 ] || { cat "$work/gdb.calls"; fail "GDB's call history is not 9 segments"; }
diff "$work/gdb.calls" "$work/show.tail" >"$work/calls.diff" ||
	{ cat "$work/calls.diff"; fail "GDB's function-call-history differs from btrace show --calls"; }
grep -qx square "$work/gdb.calls" || fail "no square in the call history"

# The instruction history: GDB's last ten are btrace show's last ten
# before the stop's pc (GDB does not list the instruction at pc).
pc=$(sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p' "$work/rec.out")
section "$work/rec.out" INSNS | awk '{ print $2 }' | sed 's/^0x0*/0x/' >"$work/gdb.insns"
"$BTRACE" show --insn --last 4 "$work/rec.trace" | awk '/^  0x/ { print $1 }' |
	grep -vx "$pc" | tail -n 10 >"$work/show.insns"
[ "$(wc -l <"$work/gdb.insns")" = 10 ] || { cat "$work/gdb.insns"; fail "GDB listed no 10 instructions"; }
diff "$work/gdb.insns" "$work/show.insns" >"$work/insns.diff" ||
	{ cat "$work/insns.diff"; fail "GDB's instruction-history differs from btrace show --insn"; }

# Backwards: each command lands on the line it should.
expect_line() {		# section, line, what
	section "$work/rec.out" "$1" | grep -Eq "^$2"$'\t' ||
		{ section "$work/rec.out" "$1"; fail "$3: not at line $2"; }
}
expect_line RS1 "$FOR" "reverse-step from the return"
section "$work/rec.out" RS2 | grep -q "^square (x=<unavailable>) at .*gdbsrv_dyn.c:$((SQRET + 1))$" ||
	{ section "$work/rec.out" RS2; fail "reverse-step did not enter square at its end"; }
expect_line RS3 "$SQRET" "reverse-step in square"
expect_line RS4 "$SQ" "reverse-step to square's first line"
section "$work/rec.out" RF | grep -q "in sum_squares (n=<unavailable>) at .*gdbsrv_dyn.c:$CALLSQ$" ||
	{ section "$work/rec.out" RF; fail "reverse-finish did not return to the call"; }
expect_line RN1 "$CALLSQ" "reverse-next to the start of the call's line"
expect_line RN2 "$FOR" "reverse-next over the loop"
section "$work/rec.out" GB | grep -q "^#0  sum_squares (n=<unavailable>) at .*gdbsrv_dyn.c:$SUMSTART$" ||
	{ section "$work/rec.out" GB; fail "record goto begin"; }
section "$work/rec.out" GE | grep -q "^#0  sum_squares (n=4) at .*gdbsrv_dyn.c:$SUMRET$" ||
	{ section "$work/rec.out" GE; fail "record goto end"; }
expect "$work/rec.out" "^\[Inferior 1 \(process [0-9]+\) exited normally\]" "the program did not run to its end after record stop"
no_leftovers "$GS_PROG"

# 2. Recording until a crash: GDB sees the SIGSEGV, its call history ends
#    in store called from main, as btrace show's of the same run.
gsgdb "$work/crash.out" "$GS_PROG crash" -ex "handle SIGUSR1 nostop noprint" \
	-ex "break $(line_of MARK_PRINT)" -ex continue -ex "record btrace" \
	-ex continue -ex 'echo @@CALLS\n' -ex "record function-call-history" \
	-ex 'echo @@END\n' -ex "monitor save $work/crash.trace" \
	-ex 'echo @@BACK\n' -ex reverse-step -ex reverse-step -ex 'echo @@END\n' \
	-ex kill
gdb_clean "$work/crash.out"
expect "$work/crash.out" "^(Program|Thread 1 .*) received signal SIGSEGV, Segmentation fault" "no SIGSEGV while recording"
section "$work/crash.out" CALLS | awk -F'\t' '{ print $2 }' >"$work/gdb.calls"
[ "$(tail -n 2 "$work/gdb.calls" | tr '\n' ' ')" = "main store " ] ||
	{ cat "$work/gdb.calls"; fail "the call history does not end with main calling store"; }
"$BTRACE" show --calls --last 100 "$work/crash.trace" | awk '$1 ~ /^-[0-9]+$/ { print $2 }' |
	tail -n 2 >"$work/show.tail"
diff <(tail -n 2 "$work/gdb.calls") "$work/show.tail" ||
	fail "the crash's call history differs from btrace show --calls"
section "$work/crash.out" BACK | head -n 1 | grep -Eq "^$(line_of MARK_STORE)"$'\t' ||
	{ section "$work/crash.out" BACK; fail "reverse-step from the fault: not at the start of its line"; }
section "$work/crash.out" BACK | tail -n 1 | grep -Eq "^$(line_of MARK_CRASH_CALL)"$'\t' ||
	{ section "$work/crash.out" BACK; fail "reverse-step did not go back to the call"; }
no_leftovers "$GS_PROG"

# 3. Delta reads: after the first read GDB asks only for what is new;
#    stepping keeps the trace whole.
gsgdb "$work/delta.out" "$GS_PROG" -ex "handle SIGUSR1 nostop noprint" \
	-ex "break sum_squares" -ex continue -ex "record btrace" \
	-ex "info record" -ex "stepi 3" -ex next -ex next -ex step -ex step \
	-ex "set debug remote 1" -ex "info record" -ex "set debug remote 0" \
	-ex kill
gdb_clean "$work/delta.out"
grep -aq 'qXfer:btrace:read:delta' "$work/delta.out" || fail "GDB made no delta read"
grep -aq 'Packet received: E\.' "$work/delta.out" && fail "a delta read failed"
expect "$work/delta.out" "^square \(x=2\) at .*gdbsrv_dyn.c:$SQ" "step did not enter square"
expect "$work/delta.out" "^Recorded [0-9]+ instructions in 4 functions \(0 gaps\)" "the stepped trace is not sum_squares, square, sum_squares, square"

# 4. A ring that wraps between two reads: E.Overflow. for the delta, then
#    GDB reads everything there is, and has a trace that ends right.
gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
	-ex "target remote | $BTRACE gdbserver --buffer-size 4096 - $GS_PROG" \
	-ex "handle SIGUSR1 nostop noprint" -ex "break main" -ex continue \
	-ex "record btrace" -ex "stepi" -ex "break $(line_of MARK_PRINT)" \
	-ex continue -ex "set debug remote 1" \
	-ex 'echo @@CALLS\n' -ex "record function-call-history" -ex 'echo @@END\n' \
	-ex "set debug remote 0" -ex kill "$GS_PROG" >"$work/ovf.out" 2>&1 </dev/null
gdb_clean "$work/ovf.out"
grep -aq 'Packet received: E\.Overflow\.' "$work/ovf.out" || fail "no E.Overflow. after the ring wrapped"
grep -aq 'qXfer:btrace:read:new' "$work/ovf.out" || fail "GDB did not read anew after the overflow"
[ "$(section "$work/ovf.out" CALLS | grep -av remote | tail -n 1 | cut -f 2)" = main ] ||
	{ cat "$work/ovf.out"; fail "the trace read after the overflow does not end in main"; }
echo ok
