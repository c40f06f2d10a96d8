#!/usr/bin/env bash
# btrace gdbserver behaving as GDB's own gdbserver does, as GDB sees it:
# `set record btrace bts buffer-size` honoured and reported; GDB's
# `disconnect` and a second `target remote`: the process still stopped
# and recording, `monitor exit` ends the server (--once: the first
# disconnect does).
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
echo ok
