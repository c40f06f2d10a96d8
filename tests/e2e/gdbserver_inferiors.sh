#!/usr/bin/env bash
# Several processes in one extended-remote connection (GDB's inferiors):
# inferior 1 runs gdbsrv_leaf to a breakpoint with record btrace; then
# add-inferior, run recursion in inferior 2 with its own record btrace to
# a breakpoint; inferior 1 goes on to its next stop; each inferior's call
# history is its own program's, the second read again after the first
# ran; inferior 3 attaches to a running process and detaches (it runs on
# untraced); kill ends the other two.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/gdbserver.sh"

LEAF=$TARGETS/gdbsrv_leaf
REC=$TARGETS/recursion
REC_SRC=$TESTDIR/targets/recursion.c
REC_MAIN=$(grep -n 'return descend(5);' "$REC_SRC" | cut -d: -f1)
REC_STORE=$(grep -n 'slot is NULL' "$REC_SRC" | cut -d: -f1)

# funcs FILE SECTION: the function names of a call history, one line.
funcs() {
	section "$1" "$2" | grep -E "^[0-9]+"$'\t''[A-Za-z_]' | cut -f2 | tr '\n' ' '
}

"$TARGETS/sleeper" 2>"$work/sleeper.err" &
sp=$!
PIDS+=($sp)
for i in $(seq 1 100); do grep -q ready "$work/sleeper.err" && break; sleep 0.05; done

timeout 300 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
	-ex "target extended-remote | $BTRACE gdbserver --multi -" \
	-ex "set remote exec-file $LEAF" -ex "file $LEAF" \
	-ex "break middle" -ex run -ex "record btrace" \
	-ex add-inferior -ex "inferior 2" -ex "file $REC" \
	-ex "set remote exec-file $REC" -ex "break recursion.c:$REC_MAIN" -ex run \
	-ex "record btrace" -ex "break recursion.c:$REC_STORE" -ex continue \
	-ex 'echo @@INF\n' -ex "info inferiors" \
	-ex 'echo @@H2\n' -ex "record function-call-history 1,50" \
	-ex 'echo @@C1\n' -ex "inferior 1" -ex continue \
	-ex 'echo @@H1\n' -ex "record function-call-history 1,50" \
	-ex 'echo @@R1\n' -ex "info record" \
	-ex 'echo @@H2B\n' -ex "inferior 2" -ex "record function-call-history 1,50" \
	-ex 'echo @@R2\n' -ex "info record" \
	-ex 'echo @@ATT\n' -ex add-inferior -ex "inferior 3" -ex "file $TARGETS/sleeper" \
	-ex "attach $sp" -ex bt -ex detach \
	-ex "shell grep TracerPid /proc/$sp/status" \
	-ex 'echo @@KILL\n' -ex "kill inferiors 1 2" -ex "info inferiors" \
	-ex 'echo @@@\n' >"$work/inf.out" 2>&1 </dev/null
gdb_clean "$work/inf.out"

[ "$(grep -c '^Process .* created; pid = ' "$work/inf.out")" = 2 ] ||
	{ cat "$work/inf.out"; fail "not two processes started by run"; }
section "$work/inf.out" INF >"$work/inf"
[ "$(grep -Ec '^[* ] [12] +process [0-9]+ ' "$work/inf")" = 2 ] ||
	{ cat "$work/inf.out"; fail "not two live inferiors"; }

want="main descend descend descend descend descend descend "
got=$(funcs "$work/inf.out" H2)
[ "$got" = "$want" ] || { cat "$work/inf.out"; fail "inferior 2's history is '$got', not '$want'"; }
expect "$work/inf.out" '^Thread 1\.1 "gdbsrv_leaf" hit Breakpoint 1, middle \(p=0x0, v=2\)' \
	"inferior 1 did not go on to its second middle()"
want="middle leaf_store middle main middle "
got=$(funcs "$work/inf.out" H1)
[ "$got" = "$want" ] || { cat "$work/inf.out"; fail "inferior 1's history is '$got', not '$want'"; }
want="main descend descend descend descend descend descend "
got=$(funcs "$work/inf.out" H2B)
[ "$got" = "$want" ] || { cat "$work/inf.out"; fail "inferior 2's history after inferior 1 ran is '$got'"; }
section "$work/inf.out" R1 | grep -q "in 5 functions (0 gaps) for thread 1\.1 " ||
	{ cat "$work/inf.out"; fail "inferior 1's record"; }
section "$work/inf.out" R2 | grep -q "in 7 functions (0 gaps) for thread 2\.1 " ||
	{ cat "$work/inf.out"; fail "inferior 2's record"; }

section "$work/inf.out" ATT >"$work/att"
expect "$work/att" "^Attached; pid = $sp$" "inferior 3 did not attach"
expect "$work/att" "in wait_forever \(\) at .*sleeper.c" "inferior 3: no backtrace"
expect "$work/att" "^\[Inferior 3 \(process $sp\) detached\]" "inferior 3 not detached"
expect "$work/att" "^TracerPid:[[:space:]]+0$" "still traced after detach"
kill -0 $sp || fail "the attached process did not run on"

section "$work/inf.out" KILL >"$work/kill"
expect "$work/kill" '^  1 +<null> ' "inferior 1 not killed"
expect "$work/kill" '^  2 +<null> ' "inferior 2 not killed"
no_leftovers "$LEAF"
no_leftovers "$REC"

# Non-stop: gdbsrv_threads in inferior 1 (alpha's thread at its mark, the
# others running), recursion in inferior 2.
THR=$TARGETS/gdbsrv_threads
timeout 300 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
	-ex "set non-stop on" -ex "target extended-remote | $BTRACE gdbserver --multi -" \
	-ex "set remote exec-file $THR" -ex "file $THR" \
	-ex "break spawned" -ex run -ex "record btrace" -ex "break alpha_mark" \
	-ex "set var go_a = 1" -ex continue \
	-ex add-inferior -ex "inferior 2" -ex "file $REC" \
	-ex "set remote exec-file $REC" -ex "break recursion.c:$REC_MAIN" -ex run \
	-ex "record btrace" -ex "break recursion.c:$REC_STORE" -ex continue \
	-ex 'echo @@NT\n' -ex "info threads" \
	-ex 'echo @@NH2\n' -ex "record function-call-history 1,50" \
	-ex 'echo @@NH1\n' -ex "thread 1.2" -ex "record function-call-history -" \
	-ex 'echo @@NKILL\n' -ex "kill inferiors 1 2" -ex "info inferiors" \
	-ex 'echo @@@\n' >"$work/ns.out" 2>&1 </dev/null
gdb_clean "$work/ns.out"
section "$work/ns.out" NT >"$work/nt"
expect "$work/nt" '^  1\.1 .*\(running\)$' "non-stop: inferior 1's main not running"
expect "$work/nt" '^  1\.2 .* alpha_mark \(s=9\)' "non-stop: alpha's thread not at alpha_mark"
expect "$work/nt" '^  1\.3 .*\(running\)$' "non-stop: beta's thread not running"
expect "$work/nt" '^\* 2\.1 .* descend \(depth=0\)' "non-stop: inferior 2 not at its breakpoint"
want="main descend descend descend descend descend descend "
got=$(funcs "$work/ns.out" NH2)
[ "$got" = "$want" ] || { cat "$work/ns.out"; fail "non-stop: inferior 2's history is '$got'"; }
want="alpha alpha_work alpha_leaf alpha_work alpha_leaf alpha_work alpha_leaf alpha_work alpha alpha_mark "
got=$(funcs "$work/ns.out" NH1 | tr ' ' '\n' | tail -n 10 | tr '\n' ' ')
[ "$got" = "$want" ] || { cat "$work/ns.out"; fail "non-stop: inferior 1's alpha history ends '$got'"; }
section "$work/ns.out" NKILL >"$work/nkill"
expect "$work/nkill" '^[* ] 1 +<null> ' "non-stop: inferior 1 not killed"
expect "$work/nkill" '^[* ] 2 +<null> ' "non-stop: inferior 2 not killed"
no_leftovers "$THR"
no_leftovers "$REC"
echo "ok"
