#!/usr/bin/env bash
# btrace gdbserver ended by a signal while GDB has the process running
# under the recorder (record btrace, continue): it lets the process go as
# at GDB's going, and the process runs on to the right result, none of
# the recorder's memory left in it.  Before, SIGTERM ended btrace where it
# stood and the process died at its next exit from the translation
# (SIGTRAP).
. "$(dirname "$0")/sess_common.bash"
need_cmd gdb

start_target thr "$TARGETS/rec_threads" sum 0 500
timeout 120 gdb -nx -batch -ex "set sysroot /" \
	-ex "target remote | $BTRACE gdbserver --attach $TPID -" \
	-ex "record btrace" -ex continue >"$WORK/gdb.out" 2>&1 &
PIDS+=($!)
bt=
for i in $(seq 1 100); do
	bt=$(pgrep -f "^$BTRACE gdbserver --attach $TPID" | head -n 1)
	[ -n "$bt" ] && [ -n "$(recorder_maps "$TPID")" ] && break
	sleep 0.1
done
[ -n "$bt" ] || { cat "$WORK/gdb.out"; fail "no btrace gdbserver, or it records nothing"; }
sleep 0.5	# the threads in the translation
kill -TERM "$bt"
gone_within "$bt" || fail "btrace gdbserver still there after SIGTERM"
not_traced "$TPID"
[ -z "$(recorder_maps "$TPID")" ] || fail "the recorder's memory left in the process"
sleep 0.5	# running on, untraced
rec_threads_check thr
echo "SIGTERM to btrace gdbserver: process let go, $ROUNDS rounds, sum as untraced"
