# btrace's own SIGTERM, SIGHUP and SIGINT (outside a trace) still detach
# cleanly: the target keeps running, untraced, to the right result; so do
# the other signals whose default would end btrace holding the target
# (under the recorder the target then died on its ring's guard page), and
# SIGPIPE does not end it at all.
. "$(dirname "$0")/sess_common.bash"

ROUNDS=100000
want=$("$TARGETS/sess_checksum" $ROUNDS 0 | tail -n 1)
start_target sum "$TARGETS/sess_checksum" $ROUNDS 2000
log=$WORK/log

# SIGTERM while tracing (the first trace, before any stop).
"$BTRACE" attach "$TPID" </dev/null >"$log" 2>&1 &
bt=$!
PIDS+=("$bt")
wait_for "$log" 'attached to process'
sleep 0.1
kill -TERM "$bt"
wait "$bt"
st=$?
cat "$log"
[ $st = 143 ] || fail "btrace exit status $st after SIGTERM, not 143"
grep -q "SIGTERM: detaching from process $TPID" "$log" || fail "no detach message"
not_traced "$TPID"

# The others while tracing: SIGQUIT (Ctrl-\\), SIGUSR1, SIGALRM, SIGXCPU
# (a CPU limit); and SIGPIPE, ignored, before a SIGTERM.
for sig in QUIT:131 USR1:138 ALRM:142 XCPU:152 PIPE:143; do
	"$BTRACE" attach "$TPID" </dev/null >"$log" 2>&1 &
	bt=$!
	PIDS+=("$bt")
	wait_for "$log" 'attached to process'
	sleep 0.1
	kill -"${sig%:*}" "$bt"
	[ "${sig%:*}" = PIPE ] && { sleep 0.2; kill -TERM "$bt"; }
	wait "$bt"
	st=$?
	cat "$log"
	[ $st = "${sig#*:}" ] ||
		fail "btrace exit status $st after SIG${sig%:*}, not ${sig#*:}"
	grep -q "detaching from process $TPID" "$log" || fail "no detach message"
	not_traced "$TPID"
done

# SIGHUP while waiting for commands on a pipe that stays open.
mkfifo "$WORK/cmds"
sleep 30 >"$WORK/cmds" &
PIDS+=($!)
"$BTRACE" attach --break sess_round_end "$TPID" <"$WORK/cmds" >"$log" 2>&1 &
bt=$!
PIDS+=("$bt")
wait_for "$log" 'breakpoint 1'
sleep 0.1
kill -HUP "$bt"
wait "$bt"
st=$?
cat "$log"
[ $st = 129 ] || fail "btrace exit status $st after SIGHUP, not 129"
not_traced "$TPID"

# SIGINT while waiting for commands (not in a continue): detach and exit.
"$BTRACE" attach --break sess_round_end "$TPID" <"$WORK/cmds" >"$log" 2>&1 &
bt=$!
PIDS+=("$bt")
wait_for "$log" 'breakpoint 1'
kill -INT "$bt"
wait "$bt"
st=$?
cat "$log"
[ $st = 130 ] || fail "btrace exit status $st after SIGINT, not 130"
grep -q "detached from process $TPID" "$log" || fail "not detached"
not_traced "$TPID"

python3 "$TESTDIR/e2e/sess_codecheck.py" "$TPID" || fail "code bytes changed"
kill -USR1 "$TPID"
wait "$TPID" || fail "target exit status $?"
got=$(tail -n 1 "$WORK/sum.out")
[ "$got" = "$want" ] || fail "checksum $got, untraced $want"
