#!/usr/bin/env bash
# btrace gdbserver behaving as GDB's own gdbserver does, as GDB sees it:
# the newest block ends at the pc, also when the thread stopped on a
# branch's target; `set record btrace bts buffer-size` honoured and
# reported; GDB's
# `disconnect` and a second `target remote`: the process still stopped
# and recording, `monitor exit` ends the server (--once: the first
# disconnect does); the first stepi after launch moves, as from gdbserver.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/gdbserver.sh"

LEAF=$TARGETS/gdbsrv_leaf

# 1. bts buffer-size 1: a page, as gdbserver rounds it; `info record`
#    reports it before and after the trace filled it.
gsgdb "$work/size.out" "$LEAF" -ex "break middle" -ex continue \
	-ex "set record btrace bts buffer-size 1" -ex "record btrace bts" \
	-ex 'echo @@INFO1\n' -ex "info record" -ex continue \
	-ex 'echo @@INFO2\n' -ex "info record" -ex 'echo @@END\n' -ex kill
gdb_clean "$work/size.out"
[ "$(section "$work/size.out" INFO1 | grep -c '^Buffer size: 4kB\.$')" = 1 ] ||
	{ cat "$work/size.out"; fail "info record: the buffer is not the page asked for"; }
[ "$(section "$work/size.out" INFO2 | grep -c '^Buffer size: 4kB\.$')" = 1 ] ||
	{ cat "$work/size.out"; fail "info record: the buffer size changed"; }
no_leftovers "$LEAF"

# 2. disconnect, then a second GDB on the same socket: the same stop, the
#    recording still on (GDB says so and reads its history), the process
#    runs on to its crash; monitor exit ends the stub.
"$BTRACE" gdbserver "unix:$work/sock" "$LEAF" 2>"$work/stub.err" &
stub=$!
PIDS+=($stub)
for i in $(seq 1 100); do [ -S "$work/sock" ] && break; sleep 0.1; done
rgdb() {
	local out=$1
	shift
	timeout 120 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
		-ex "target remote $work/sock" "$@" "$LEAF" >"$out" 2>&1 </dev/null
}
rgdb "$work/r1.out" -ex "break middle" -ex continue -ex "record btrace" \
	-ex continue -ex 'p/x $pc' -ex disconnect
gdb_clean "$work/r1.out"
pc=$(sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p' "$work/r1.out")
[ -n "$pc" ] || { cat "$work/r1.out"; fail "the first GDB did not stop in middle"; }
kill -0 $stub 2>/dev/null || { cat "$work/stub.err"; fail "the stub ended with GDB's disconnect"; }
rgdb "$work/r2.out" -ex 'p/x $pc' -ex 'echo @@CALLS\n' \
	-ex "record function-call-history" -ex 'echo @@END\n' -ex "record stop" \
	-ex continue -ex "monitor exit"
gdb_clean "$work/r2.out"
expect "$work/r2.out" "^\\\$1 = $pc\$" "the second GDB is not at the first one's stop"
expect "$work/r2.out" "^Target is recording using Branch Trace Store\.$" "the recording did not outlive the connection"
section "$work/r2.out" CALLS | grep -q "	leaf_store$" ||
	{ cat "$work/r2.out"; fail "no history after the reconnection"; }
expect "$work/r2.out" "received signal SIGSEGV" "the process did not run on to its crash"
for i in $(seq 1 100); do kill -0 $stub 2>/dev/null || break; sleep 0.1; done
kill -0 $stub 2>/dev/null && fail "monitor exit did not end the stub"
wait $stub
[ -e "$work/sock" ] && fail "the unix socket was left behind"
no_leftovers "$LEAF"

# 3. --once: GDB's disconnect ends the stub, and the process it launched.
"$BTRACE" gdbserver --once "unix:$work/sock" "$LEAF" 2>"$work/once.err" &
stub=$!
PIDS+=($stub)
for i in $(seq 1 100); do [ -S "$work/sock" ] && break; sleep 0.1; done
rgdb "$work/once.out" -ex "break middle" -ex continue -ex disconnect
for i in $(seq 1 100); do kill -0 $stub 2>/dev/null || break; sleep 0.1; done
kill -0 $stub 2>/dev/null && fail "--once: the stub outlived GDB's disconnect"
wait $stub
no_leftovers "$LEAF"

# 4. A crash at a function's first instruction (leaf_store has no
#    prologue), live and post-mortem: the newest block is that one
#    instruction, begun by the call, ending at the pc, as gdbserver's
#    first block.  GDB counts it as the current instruction, not history
#    (gdb/btrace.c skips a last function segment of only it): the call
#    history ends with the caller, as with gdbserver.
LEAFPC=$(nm "$LEAF" | awk '$3 == "leaf_store" { print "0x" $1 }' | sed 's/^0x0*/0x/')
newest() {	# FILE: the first block of the last btrace document read
	grep -ao '<btrace version="1.0">\\n<block begin="0x[0-9a-f]*" end="0x[0-9a-f]*"' "$1" |
		tail -n 1 | sed 's/.*begin="\(0x[0-9a-f]*\)" end="\(0x[0-9a-f]*\)"/\1 \2/'
}
gsgdb "$work/leaf.out" "$LEAF" -ex "break main" -ex continue -ex "record btrace" \
	-ex continue -ex "set debug remote 1" -ex 'echo @@CALLS\n' \
	-ex "record function-call-history" -ex 'echo @@END\n' -ex "set debug remote 0" \
	-ex bt -ex "monitor save $work/leaf.trace" -ex kill
gdb_clean "$work/leaf.out"
expect "$work/leaf.out" "^#0  $(printf '0x%016x' "$LEAFPC") in leaf_store \\(\\)" "the crash is not at leaf_store's first instruction"
[ "$(newest "$work/leaf.out")" = "$LEAFPC $LEAFPC" ] ||
	{ newest "$work/leaf.out"; fail "live: the newest block is not leaf_store's first instruction"; }
[ "$(section "$work/leaf.out" CALLS | grep -av '^\[remote\]' | tail -n 1 | cut -f 2)" = middle ] ||
	{ section "$work/leaf.out" CALLS; fail "live: the call history does not end as GDB ends it"; }
timeout 300 gdb -nx -batch -ex "set sysroot /" \
	-ex "target remote | $BTRACE gdbserver --trace $work/leaf.trace -" \
	-ex "record btrace" -ex "set debug remote 1" -ex 'echo @@CALLS\n' \
	-ex "record function-call-history" -ex 'echo @@END\n' "$LEAF" >"$work/pm.out" 2>&1 </dev/null
gdb_clean "$work/pm.out"
[ "$(newest "$work/pm.out")" = "$LEAFPC $LEAFPC" ] ||
	{ newest "$work/pm.out"; fail "post-mortem: the newest block is not leaf_store's first instruction"; }
[ "$(section "$work/pm.out" CALLS | grep -av '^\[remote\]' | tail -n 1 | cut -f 2)" = middle ] ||
	{ section "$work/pm.out" CALLS; fail "post-mortem: the call history does not end as GDB ends it"; }
no_leftovers "$LEAF"

# The first stepi from the program's first instruction executes it (the
# launch leaves execve before GDB sees the process), and rax is execve's 0.
gsgdb "$work/stepi.out" "$LEAF" -ex 'p/x $pc' -ex stepi -ex 'p/x $pc' \
	-ex 'p $rax' -ex kill
gdb_clean "$work/stepi.out"
pc1=$(sed -n 's/^\$1 = \(0x[0-9a-f]*\)$/\1/p' "$work/stepi.out")
pc2=$(sed -n 's/^\$2 = \(0x[0-9a-f]*\)$/\1/p' "$work/stepi.out")
[ -n "$pc1" ] && [ -n "$pc2" ] && [ "$pc1" != "$pc2" ] ||
	{ cat "$work/stepi.out"; fail "the first stepi did not move ($pc1, $pc2)"; }
expect "$work/stepi.out" '^\$3 = 0$' "rax at the first instruction is not execve's 0"
no_leftovers "$LEAF"
echo ok
