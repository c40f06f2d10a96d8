# A multi-threaded target: every thread is attached, threads created after
# the attach are followed (a breakpoint in a function only new threads run
# stops one of them), each thread has its own history, and after the
# detach the program runs on to its normal end.
. "$(dirname "$0")/sess_common.bash"

start_target thr "$TARGETS/sess_threads" 4
log=$WORK/log
# A late worker made just before the attach may reach the breakpoint
# after it on a loaded machine: that stop shows nothing of following new
# threads, and the attach is made again (the next late worker is new).
for try in 1 2 3; do
	before=" $(ls /proc/$TPID/task | tr '\n' ' ')"
	"$BTRACE" attach --batch --break sess_late_worker -ex threads -ex info \
		"$TPID" >"$log" 2>&1 || { cat "$log"; fail "btrace attach"; }
	cat "$log"
	stop_tid=$(sed -n 's/.*breakpoint 1.* in thread \([0-9]*\).*/\1/p; s/^breakpoint 1, thread \([0-9]*\).*/\1/p' "$log" | head -n 1)
	[ -n "$stop_tid" ] || fail "no breakpoint stop"
	case "$before" in
	*" $stop_tid "*) echo "thread $stop_tid existed before the attach: again" ;;
	*) break ;;
	esac
	[ $try = 3 ] && fail "thread $stop_tid existed before the attach, three times"
done
# threads lists the new thread and the workers (at least 4 threads).
[ "$(grep -cE '^[* ] [0-9]+' "$log")" -ge 4 ] || fail "threads did not list every thread"
grep -qE "^\* $stop_tid" "$log" || fail "the stopped thread is not current"
not_traced "$TPID"

# Each worker's own history, through 'thread TID'.
worker=$(for t in /proc/$TPID/task/*; do
	[ "${t##*/}" != "$TPID" ] && echo "${t##*/}"
done | head -n 1)
"$BTRACE" attach --batch -ex "thread $worker" -ex 'calls 30' -ex 'last 40' \
	"$TPID" >"$log" 2>&1 &
bt=$!
PIDS+=("$bt")
wait_for "$log" 'attached to process'
sleep 0.3
kill -INT "$bt"
wait "$bt" || { cat "$log"; fail "btrace attach (worker)"; }
cat "$log"
grep -q "current thread is $worker" "$log" || fail "thread $worker not selected"
grep -qE 'sess_worker_[ab]|spin' "$log" || fail "no worker function in the history of $worker"
not_traced "$TPID"
wait "$TPID" || fail "target exit status $?"
