#!/usr/bin/env bash
# Time along the history (targets/timed: work() computes, nap() sleeps
# 200 ms, each timing itself with clock_gettime, then crash()): under the
# recorder and the fast mode, the timeline is on the trace's time and
# work's and nap's durations are within 20% of what the program measured;
# each thread's events in time order, the last one crash; JSON's ts and
# duration, text --time and calls' durations; the times survive --save
# and btrace show.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3
prog=$TARGETS/timed
check="python3 $TESTDIR/e2e/lib/timeline_check.py"

# $1: soft mode, $2: work's rounds (the fast mode stops at each)
timed_run() {
	"$BTRACE" run --backend soft --soft-mode "$1" --buffer-size 4M \
		--timeline "$work/$1.json" --save "$work/$1.trace" \
		-- "$prog" "$2" >"$work/$1.out" 2>"$work/err"
	rc=$?
	expect_rc 139
	work_ns=$(sed -n 's/^work: \([0-9]*\) ns$/\1/p' "$work/$1.out")
	nap_ns=$(sed -n 's/^nap: \([0-9]*\) ns$/\1/p' "$work/$1.out")
	[ -n "$work_ns" ] && [ -n "$nap_ns" ] || { cat "$work/$1.out"; fail "$1: no times from the program"; }
	$check durations "$work/$1.json" "$work_ns" "$nap_ns" || fail "$1: the timeline's durations"
	no_leftovers "$prog"
}
timed_run record 50000
timed_run fast 300

# The saved trace: the same timeline, the same times in JSON.
"$BTRACE" show --timeline "$work/show.json" "$work/record.trace" >/dev/null 2>"$work/err" ||
	{ cat "$work/err"; fail "show failed"; }
# (the times; the vDSO's functions are named by the saved symbols there)
python3 - "$work/record.json" "$work/show.json" <<'PY' || exit 1
import json, sys
a, b = ([(e["ph"], e["tid"], e["ts"], e.get("dur")) for e in
         json.load(open(p))["traceEvents"] if e["ph"] != "M"]
        for p in sys.argv[1:3])
assert a == b, "the saved trace's timeline differs"
PY
"$BTRACE" show --json --calls --last 100 "$work/record.trace" >"$work/calls.json" ||
	fail "show --json --calls failed"
"$BTRACE" show --json --last 40 "$work/record.trace" >"$work/branches.json" ||
	fail "show --json failed"
python3 - "$work/calls.json" "$work/branches.json" <<'PY' || exit 1
import json, sys
calls = json.load(open(sys.argv[1]))["threads"][0]["calls"]
br = json.load(open(sys.argv[2]))["threads"][0]["branches"]
ts = [b["ts"] for b in br]
assert all(isinstance(t, int) and t > 0 for t in ts), ts
assert ts == sorted(ts), "branches' ts not in order: %r" % ts
segs = [c for c in calls if "gap" not in c]
assert all(isinstance(c["ts"], int) and isinstance(c["duration"], int)
           for c in segs), segs
for a, b in zip(segs, segs[1:]):
    assert a["ts"] + a["duration"] == b["ts"], (a, b)
sleep = [c for c in segs if c["func"] in ("__clock_nanosleep", "clock_nanosleep")]
assert sleep and sleep[-1]["duration"] > 150e6, sleep
assert segs[-1]["func"] == "crash", segs[-1]
PY

# Text: --time's column before the stop, durations in the call history.
"$BTRACE" show --no-color --time --last 4 "$work/record.trace" >"$work/time.txt" ||
	fail "show --time failed"
grep -Eq '^  +-[0-9]+\.[0-9]{3} ms  +-1  ' "$work/time.txt" ||
	{ cat "$work/time.txt"; fail "no time column"; }
"$BTRACE" show --no-color --calls --last 100 "$work/record.trace" >"$work/calls.txt" ||
	fail "show --calls failed"
grep -Eq 'clock_nanosleep  \(.*, 2[0-9]{2}\.[0-9]{3} ms\)' "$work/calls.txt" ||
	{ cat "$work/calls.txt"; fail "no sleep's duration in the call history"; }
exit 0
