#!/usr/bin/env bash
# btrace run on a call chain that ends in a NULL store: the right stop, the
# exit status a shell would see without btrace, the call chain in the
# branches, and every branch equal to an independent single-step trace.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/crash_null

native=$(native_status "$prog")
[ "$native" = 139 ] || fail "crash_null exits $native natively"
# 24 branches reach back into the C library's start-up.  Further back, on
# CPUs with AVX-512, glibc's string functions run EVEX instructions that
# capstone 4 cannot decode, and the software backend misreads them.
btrace_json --last 24 --backend soft -- "$prog"
expect_rc "$native"
no_leftovers "$prog"

python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="store_value",
              src="crash_null.c:12")
assert doc["backend"] == "soft", doc["backend"]
assert doc["pid"] == doc["stop"]["tid"]
assert doc["stop"]["addr"] == "0x0", doc["stop"]
br = c.stopped_thread(doc)
assert len(br) == 24, len(br)
c.expect_sequence(br, [
    ("call", "process", "walk"), ("call", "walk", "store_value"),
    ("return", "store_value", "walk"), ("return", "walk", "process"),
    ("call", "process", "walk"), ("conditional", "walk", "walk"),
    ("call", "walk", "store_value")])
c.expect_last(br, "call", "walk", "store_value")
last = br[-1]
assert last["insn"].startswith("call"), last
assert last["from_src"] == "crash_null.c:21", last
assert last["to_src"] == "crash_null.c:11", last
assert doc["stats"]["branches"] >= 24 and doc["stats"]["instructions"] > 0
PY

# Ground truth: the same run, every instruction's pc.
[ -x "$TOOLS/steptrace" ] || fail "no $TOOLS/steptrace"
"$TOOLS/steptrace" -- "$prog" >"$work/trace" 2>"$work/trace.err"
no_leftovers "$prog"
python3 - "$work/out.json" "$work/trace" "$prog" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
steps = c.read_steptrace(sys.argv[2])
lengths = c.insn_lengths(sys.argv[3])
assert c.check_lengths(steps, lengths) > 1000
truth = c.taken_branches(steps, lengths)
n = c.expect_ground_truth(c.stopped_thread(doc), truth)
print("%d branches match the single-step trace" % n)
PY
