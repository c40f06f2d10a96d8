#!/usr/bin/env bash
# --backend: an explicit backend this machine lacks fails before the
# program starts, with doctor's reason, exit 1, nothing left running;
# auto takes the first usable of pt, bts, soft and says which and why.
. "$TESTDIR/e2e/lib/common.sh"

"$BTRACE" doctor --json >"$work/doctor.json"
verdict() {	# backend -> "usable" or its reason
	python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["backends"][sys.argv[2]]
print("usable" if b["usable"] else b["why"])' "$work/doctor.json" "$1"
}

tried=0
for b in pt bts; do
	why=$(verdict $b)
	[ "$why" = usable ] && continue
	tried=$((tried + 1))
	"$BTRACE" run --backend $b -- /bin/sh -c "touch '$work/ran'; sleep 30" \
		>"$work/out" 2>"$work/err"
	rc=$?
	[ $rc = 1 ] || fail "--backend $b: exit $rc, want 1"
	[ ! -e "$work/ran" ] || fail "--backend $b: the program ran"
	grep -qF "backend '$b' is not available here: $why" "$work/err" ||
		fail "--backend $b: stderr is '$(cat "$work/err")', want doctor's '$why'"
	pgrep -f "touch '$work/ran'" >/dev/null && fail "--backend $b left a process"
done

# attach: refused the same way, the process left untouched.
sleep 60 &
victim=$!
for b in pt bts; do
	why=$(verdict $b)
	[ "$why" = usable ] && continue
	"$BTRACE" attach --backend $b $victim </dev/null >"$work/out" 2>"$work/err"
	rc=$?
	[ $rc = 1 ] || { kill $victim; fail "attach --backend $b: exit $rc, want 1"; }
	grep -qF "backend '$b' is not available here: $why" "$work/err" ||
		{ kill $victim; fail "attach --backend $b: stderr is '$(cat "$work/err")'"; }
	grep -q "^TracerPid:[[:space:]]*0$" /proc/$victim/status ||
		{ kill $victim; fail "attach --backend $b left the process traced"; }
	grep -q "^State:[[:space:]]*S" /proc/$victim/status ||
		{ kill $victim; fail "attach --backend $b left the process stopped"; }
done
kill $victim
wait $victim 2>/dev/null

# auto: the first usable one, named on stderr with the others' reasons.
want=soft
for b in pt bts; do
	[ "$(verdict $b)" = usable ] && { want=$b; break; }
done
"$BTRACE" run --last 1 -- "$TARGETS/exit_status" >"$work/out" 2>"$work/err"
rc=$?
[ $rc = 3 ] || fail "auto: exit $rc, want the program's 3"
grep -q "^btrace: using the $want backend" "$work/err" ||
	fail "auto: stderr is '$(cat "$work/err")', want the $want backend named"
for b in pt bts; do
	[ $b = "$want" ] && break
	# The fact behind the verdict, before its remedy (after "; ").
	grep -qF "$b: $(verdict $b | sed "s/; .*//")" "$work/err" ||
		fail "auto: no reason given for passing over $b"
done
echo "explicit unavailable backends checked: $tried; auto took $want"
