# btrace run -i: the same session on a launched program, commands from
# stdin; continue lets the exit complete with the program's status.
. "$(dirname "$0")/sess_common.bash"

log=$WORK/log
printf 'last 3\ncalls 3\ninsn 3\ninfo\ncontinue\n' |
	"$BTRACE" run -i -- "$TARGETS/attach_exit" 20 >"$log" 2>&1
st=$?
cat "$log"
[ $st = 0 ] || fail "btrace run -i exit status $st"
grep -q 'stop: exit with status 7' "$log" || fail "no exit stop"
[ "$(grep -cE '^ +-1 .*_exit' "$log")" -ge 3 ] || fail "last/calls: no _exit at the end"
grep -qE '^  0x[0-9a-f]+ +_exit\+' "$log" || fail "insn: no _exit"
grep -q 'launched, exiting' "$log" || fail "info: not a launched target"
grep -q 'exited with status 7' "$log" || fail "continue did not let it exit"

# The program starts with the signal dispositions btrace was given, not
# what the session ignores (SIGPIPE): a pipeline's writer must still die
# of SIGPIPE when its reader leaves.
want=$(grep '^SigIgn' /proc/self/status)
got=$("$BTRACE" run --ex continue -- grep '^SigIgn' /proc/self/status 2>/dev/null |
	grep '^SigIgn')
[ "$got" = "$want" ] || fail "ignored signals under run -i: '$got', without btrace '$want'"
