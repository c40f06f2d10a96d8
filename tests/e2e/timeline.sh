#!/usr/bin/env bash
# --timeline and --svg on a program of known call structure (targets/
# timeline.c: main -> a -> b twice, c crashes; a worker thread's w_outer
# calls w_inner three times): every thread's events in time order, nested,
# named, the last one the crashing c, the stop marked; the same from the
# saved trace with btrace show; a history whose start was overwritten;
# attach --timeline at a breakpoint.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3
prog=$TARGETS/timeline
check="python3 $TESTDIR/e2e/lib/timeline_check.py"

# Instructions for time: the short calls are as wide as their work (in
# real time main's wait for the worker dwarfs them: timeline_time.sh).
"$BTRACE" run --backend soft --timeline "$work/run.json" --svg "$work/run.svg" \
	--timeline-clock instructions \
	--last 12 --save "$work/t.trace" -- "$prog" >"$work/out" 2>"$work/err"
rc=$?
expect_rc 139
grep -q "timeline written to $work/run.json" "$work/err" || fail "no 'written' message"
grep -q "flame chart written to $work/run.svg" "$work/err" || fail "no 'written' message (svg)"
grep -q "SIGSEGV" "$work/out" || fail "the report is gone"
$check crash "$work/run.json" || exit 1
$check svg "$work/run.svg" a b @c w_inner || exit 1
no_leftovers "$prog"

# The saved trace gives the same timeline and the same picture.
"$BTRACE" show --timeline "$work/show.json" --svg "$work/show.svg" --last 12 \
	--timeline-clock instructions "$work/t.trace" >/dev/null 2>"$work/err" || { cat "$work/err"; fail "show failed"; }
$check same "$work/run.json" "$work/show.json" || exit 1
$check svg "$work/show.svg" a b @c w_inner || exit 1

# A ring too small for the whole run: the history starts inside main
# (and deeper), returns lead out of frames entered before it.
"$BTRACE" run --backend soft --buffer-size 4K --timeline "$work/small.json" \
	--timeline-clock instructions \
	-- "$prog" >/dev/null 2>"$work/err"
rc=$?
expect_rc 139
$check window "$work/small.json" || exit 1

# Options: a file that cannot be written is an error of show; an empty
# name is refused.
"$BTRACE" show --timeline "$work/no/such/dir.json" "$work/t.trace" >/dev/null 2>"$work/err" &&
	fail "show succeeded without writing its timeline"
grep -q "cannot write '$work/no/such/dir.json'" "$work/err" || { cat "$work/err"; fail "no error message"; }
"$BTRACE" show --timeline "" "$work/t.trace" >/dev/null 2>"$work/err"
[ $? = 2 ] || fail "--timeline '' accepted"

# attach: the timeline of every thread at the first stop (a breakpoint
# in a function the main thread's new workers run).
start_target() {
	"$@" >"$work/target.out" 2>&1 &
	PIDS+=("$!")
	for _ in $(seq 200); do grep -q ready "$work/target.out" && return 0; sleep 0.01; done
	fail "$1 did not start"
}
start_target "$TARGETS/sess_threads" 4
"$BTRACE" attach --backend soft --batch --break sess_late_worker \
	--timeline "$work/att.json" "${PIDS[0]}" >/dev/null 2>"$work/err"
[ -s "$work/att.json" ] || { cat "$work/err"; fail "attach --timeline wrote nothing"; }
$check json "$work/att.json" stop || exit 1
grep -q '"stop: breakpoint 1"' "$work/att.json" || fail "attach: not the breakpoint's stop"
# the thread that hit it: its last call (the workers, busy or asleep in
# nanosleep, may have no branch since the attach on a loaded machine)
grep -q '"name": "sess_late_worker"' "$work/att.json" || fail "attach: no sess_late_worker"
exit 0
