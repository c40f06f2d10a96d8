# Attach to and detach from a long-running computation 50 times, stopping
# at a breakpoint or by SIGINT in turn: it must end with the checksum of an
# untraced run, and its code in memory must equal its files afterwards.
. "$(dirname "$0")/sess_common.bash"

ROUNDS=100000
want=$("$TARGETS/sess_checksum" $ROUNDS 0 | tail -n 1)
start_target sum "$TARGETS/sess_checksum" $ROUNDS 2000
t0=$(date +%s%N)
for i in $(seq 1 50); do
	log=$WORK/attach.$i
	if [ $((i % 2)) = 1 ]; then
		"$BTRACE" attach --batch --break sess_round_end -ex 'last 3' \
			"$TPID" >"$log" 2>&1 || { cat "$log"; fail "cycle $i"; }
		grep -q 'breakpoint 1' "$log" || { cat "$log"; fail "cycle $i: no breakpoint stop"; }
		grep -q 'sess_round_end' "$log" || { cat "$log"; fail "cycle $i: no symbol"; }
	else
		"$BTRACE" attach --batch -ex 'last 3' "$TPID" >"$log" 2>&1 &
		bt=$!
		PIDS+=("$bt")
		wait_for "$log" 'attached to process'
		sleep 0.02
		kill -INT "$bt"
		wait "$bt" || { cat "$log"; fail "cycle $i: btrace failed"; }
		grep -q 'interrupted' "$log" || { cat "$log"; fail "cycle $i: not interrupted"; }
	fi
	grep -q "detached from process $TPID" "$log" || { cat "$log"; fail "cycle $i: not detached"; }
	not_traced "$TPID"
done
echo "50 attach/detach cycles in $((($(date +%s%N) - t0) / 1000000)) ms"
python3 "$TESTDIR/e2e/sess_codecheck.py" "$TPID" || fail "code bytes changed"
kill -USR1 "$TPID"
wait "$TPID" || fail "target exit status $?"
got=$(tail -n 1 "$WORK/sum.out")
echo "untraced: $want; attached 50 times: $got"
[ "$got" = "$want" ] || fail "checksum differs"
