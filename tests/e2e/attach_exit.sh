# A target that exits while attached: the stop says so, continue lets the
# exit complete with the program's own status.  A target killed while
# attached: btrace reports it and ends without hanging.
. "$(dirname "$0")/sess_common.bash"

start_target exit "$TARGETS/attach_exit" 300
log=$WORK/log
"$BTRACE" attach --batch -ex 'last 5' -ex continue "$TPID" >"$log" 2>&1 ||
	{ cat "$log"; fail "btrace attach"; }
cat "$log"
grep -q 'stop: exit with status 7' "$log" || fail "exit not shown"
grep -q 'exited with status 7' "$log" || fail "exit not completed"
wait "$TPID"
st=$?
[ $st = 7 ] || fail "the target's exit status is $st, not 7"

start_target kill "$TARGETS/sess_checksum" 100000 2000
"$BTRACE" attach --batch -ex 'last 3' -ex info "$TPID" >"$log" 2>&1 &
bt=$!
PIDS+=("$bt")
wait_for "$log" 'attached to process'
sleep 0.1
kill -9 "$TPID"
gone_within "$bt" || fail "btrace hangs after the target was killed"
wait "$bt"
echo "btrace exit status $?"
cat "$log"
grep -q 'killed by SIGKILL' "$log" || fail "kill not reported"
