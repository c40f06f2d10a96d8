#!/usr/bin/env bash
# btrace run on a call chain that ends in a NULL store: the right stop, the
# exit status a shell would see without btrace, the call chain in the
# branches (run_truth_full.sh checks every branch against steptrace).
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/crash_null

native=$(native_status "$prog")
[ "$native" = 139 ] || fail "crash_null exits $native natively"
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
