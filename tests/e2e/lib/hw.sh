# SPDX-License-Identifier: MIT
# Sourced by tests/e2e/hw_*.sh with $backend set: skip (77) with doctor's
# reason where that hardware backend cannot trace, else the run helpers.
why=$("$BTRACE" doctor --json | python3 -c '
import json, sys
b = json.load(sys.stdin)["backends"][sys.argv[1]]
print("" if b["usable"] else b["why"])' "$backend") || {
	echo "FAIL: btrace doctor --json"
	exit 1
}
if [ -n "$why" ]; then
	echo "no $backend backend on this machine: $why"
	exit 77
fi
. "$TESTDIR/e2e/lib/common.sh"

# The crash_null chain through $backend, every branch checked against an
# independent single-step trace of the same program.
hw_crash_null() {
	local prog=$TARGETS/crash_null
	btrace_json --last 24 --backend "$backend" -- "$prog"
	expect_rc 139
	no_leftovers "$prog"
	"$TOOLS/steptrace" -- "$prog" >"$work/trace" 2>"$work/trace.err"
	no_leftovers "$prog"
	python3 - "$work/out.json" "$work/trace" "$prog" "$backend" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
assert doc["backend"] == sys.argv[4], doc["backend"]
c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="store_value")
br = c.stopped_thread(doc)
c.expect_last(br, "call", "walk", "store_value")
steps = c.read_steptrace(sys.argv[2])
lengths = c.insn_lengths(sys.argv[3])
assert c.check_lengths(steps, lengths) > 1000
truth = c.taken_branches(steps, lengths)
print("%d branches match the single-step trace" %
      c.expect_ground_truth(br, truth))
PY
}

# A thread created under tracing gets its own event: its crash shows its
# own branches.
hw_thread_crash() {
	local prog=$TARGETS/thread_crash
	btrace_json --last 16 --backend "$backend" -- "$prog"
	expect_rc 139
	no_leftovers "$prog"
	python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="crash_here")
assert doc["stop"]["tid"] != doc["pid"], doc["stop"]
br = c.stopped_thread(doc)
c.expect_last(br, "call", "crasher", "crash_here")
assert not any(c.func(b["from_sym"]) in ("spinner", "main") for b in br), br
PY
}
