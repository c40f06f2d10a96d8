#!/usr/bin/env bash
# The recorder binds the program's threads and the tracer to one CPU while
# its stops come in bursts (lib/tracer/pin.c), and the program never sees
# it: targets/pin_mask prints each way a program looks at its CPU mask.
# - BTRACE_PIN=1 (a pin at every stop where one may be, so that what is
#   checked does not depend on timing), a cold code cache: its first read
#   of /proc/self/status shows one CPU of its mask (the pin is real);
#   sched_getaffinity, a fork child (what it inherited), a second thread
#   after stops of both threads see the whole mask; its own
#   sched_setaffinity holds, through later stops; the same with
#   --follow-fork (the child traced too).
# - The default (pins where stops come close), twice, and BTRACE_PIN=0:
#   every line but the first as in an untraced run.
# (attach_release.sh: a process attached to, pinned, has its mask back
# after each detach.)
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3
python3 -c 'import os, sys; sys.exit(len(os.sched_getaffinity(0)) < 2)' ||
	skip "one CPU to run on: nothing to bind to"
fails=0

"$TARGETS/pin_mask" >"$work/native" || fail "untraced run failed"

# check NAME pinned|any: the lines of $work/NAME but the first as the
# untraced run's; the first, with pinned, one CPU of the mask
check() {
	diff <(grep -v '^first ' "$work/native") <(grep -v '^first ' "$work/$1") ||
		{ echo "FAIL $1: the program saw the binding"; fails=$((fails + 1)); }
	[ "$2" = pinned ] || return 0
	python3 - "$work/native" "$work/$1" <<'PY' || fails=$((fails + 1))
import sys
def cpus(l):
    s = set()
    for part in l.split(","):
        a, _, b = part.partition("-")
        s.update(range(int(a), int(b or a) + 1))
    return s
first = lambda f: [l.split()[1] for l in open(f) if l.startswith("first ")][0]
mask, seen = cpus(first(sys.argv[1])), cpus(first(sys.argv[2]))
if len(seen) != 1 or not seen <= mask:
    sys.exit("FAIL %s: first look %s: not bound to one CPU of %s" %
             (sys.argv[2], sorted(seen), sorted(mask)))
PY
}

# run NAME PIN [OPTION...]: pin_mask under the recorder, cold, BTRACE_PIN=PIN
run() {
	local name=$1 pin=$2
	shift 2
	rm -rf "$work/cache"
	BTRACE_PIN=$pin "$BTRACE" run --soft-mode record --code-cache "$work/cache" \
		-o "$work/$name.report" "$@" -- "$TARGETS/pin_mask" \
		>"$work/$name" 2>"$work/$name.err" ||
		{ cat "$work/$name.err"; echo "FAIL $name: exit $?"; fails=$((fails + 1)); }
}

run always 1
check always pinned
run follow 1 --follow-fork
check follow pinned
run auto1 ""
check auto1 any
run auto2 ""
check auto2 any
run off 0
check off any
cmp -s <(head -n 1 "$work/native") <(head -n 1 "$work/off") ||
	{ echo "FAIL off: first look $(head -n 1 "$work/off")"; fails=$((fails + 1)); }
[ $fails = 0 ] || exit 1
echo "pin_mask: bound to CPU $(sed -n 's/^first //p' "$work/always") of $(sed -n 's/^first //p' "$work/native"), unseen"
