#!/usr/bin/env bash
# --backend: an explicit backend this machine lacks fails before the
# program starts, with doctor's reason, exit 1, nothing left running;
# auto takes the first usable of pt, bts, soft and says which and why;
# an option the backend cannot honour is refused, whatever the machine.
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

# --help names every backend of the registry, as doctor lists them.
names=$(python3 -c '
import json, sys
print(" ".join(json.load(open(sys.argv[1]))["backends"]))' "$work/doctor.json")
for c in run attach gdbserver; do
	line=$("$BTRACE" $c --help | grep -- '--backend NAME')
	for b in auto $names; do
		echo "$line" | grep -qw "$b" || fail "$c --help does not name backend $b"
	done
done

# An option the backend cannot honour is refused on every machine, before
# the program starts: one line naming it, exit 2.  The registry says that
# only the soft backend's record and fast modes have module filters and
# triggers (single-stepping and the hardware record everything).
refused() {	# what, then btrace's arguments
	local what=$1
	shift
	rm -f "$work/ran"
	"$BTRACE" "$@" >"$work/out" 2>"$work/err"
	rc=$?
	[ $rc = 2 ] || fail "$*: exit $rc, want 2 (stderr '$(cat "$work/err")')"
	[ "$(wc -l <"$work/err")" = 1 ] || fail "$*: stderr is not one line: $(cat "$work/err")"
	grep -qF -- "$what" "$work/err" ||
		fail "$*: stderr '$(cat "$work/err")' does not say '$what'"
	[ ! -e "$work/ran" ] || fail "$*: the program ran"
}
prog=(-- /bin/sh -c "touch '$work/ran'")
nrefused=0
for opt in "--only compute" "--exclude libc*" "--from fib" "--until sieve"; do
	for b in "--backend soft --soft-mode step" "--soft-mode step" \
		 "--backend pt" "--backend bts"; do
		case $b in
		*step) what="--soft-mode step cannot honour ${opt%% *} (record or fast can)" ;;
		*) what="${b} cannot honour ${opt%% *} (--backend soft can, with --soft-mode record or fast)" ;;
		esac
		refused "$what" run $b $opt "${prog[@]}"
		nrefused=$((nrefused + 1))
	done
done
refused "--soft-mode is for --backend soft, not pt" run --backend pt \
	--soft-mode fast "${prog[@]}"
refused "--soft-mode is for --backend soft, not bts" attach --backend bts \
	--soft-mode step 1
sleep 60 &
victim=$!
refused "--soft-mode step cannot honour --until" attach --soft-mode step \
	--until main $victim
grep -q "^TracerPid:[[:space:]]*0$" /proc/$victim/status ||
	{ kill $victim; fail "a refused attach traced the process"; }
kill $victim
wait $victim 2>/dev/null
refused "--soft-mode step cannot honour --from" gdbserver --soft-mode step \
	--from main 127.0.0.1:0 /bin/sh -c "touch '$work/ran'"

# The modes that honour them still do: --until stops at sieve.
for m in record fast; do
	"$BTRACE" run --backend soft --soft-mode $m --until sieve --last 1 -- \
		"$TARGETS/compute" 5 >"$work/out" 2>"$work/err"
	grep -q "^stop: breakpoint 1" "$work/out" ||
		fail "--soft-mode $m --until: no stop at sieve: $(cat "$work/out")"
	grep -q "call .*-> 0x[0-9a-f]*  sieve " "$work/out" ||
		fail "--soft-mode $m --until: the last branch is not the call of sieve"
done
"$BTRACE" run --soft-mode fast --only compute --last 1 -- \
	"$TARGETS/compute" 5 >"$work/out" 2>"$work/err"
rc=$?
[ $rc = 20 ] || fail "--only with the fast mode: exit $rc, want compute's 20"
echo "explicit unavailable backends checked: $tried; auto took $want;" \
	"refused option/backend pairs: $nrefused"
