#!/usr/bin/env bash
# The fast software backend runs the instruction at a conditional's taken
# target from a slot in scratch memory (displaced execution); the recorder
# runs it from its translation.  A fault there must look to the program
# and to the user as it does without btrace: the signal frame holds the
# store's own address (the program checks that itself and exits 0), the
# handler's entry comes from it, and the stop of an unhandled fault shows
# it.  In the fast mode the slot must really have run.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/displaced_fault
at=$(nm "$prog" | awk '$3 == "fault_at" { print "0x" $1 }' | sed 's/^0x0*/0x/')
[ -n "$at" ] || fail "no fault_at in $prog"

native=$(native_status "$prog")
[ "$native" = 0 ] || fail "displaced_fault exits $native natively"
for mode in fast record; do
btrace_json --last 200 --backend soft --soft-mode $mode -- "$prog"
expect_rc 0
python3 - "$work/out.json" "$at" $mode <<'PY' || exit 1
import sys, btcheck as c
doc, at, mode = c.load(sys.argv[1]), sys.argv[2], sys.argv[3]
c.expect_stop(doc, "exit", status=0)
assert mode != "fast" or doc["stats"]["displaced"] >= 1, doc["stats"]
br = c.stopped_thread(doc)
into = [b for b in br if b["kind"] == "conditional" and b["to"] == at]
entry = [b for b in br if b["kind"] == "interrupt" and b["from"] == at]
assert into and entry, (len(into), len(entry))
PY

native=$(native_status "$prog" crash)
[ "$native" = 139 ] || fail "displaced_fault crash exits $native natively"
btrace_json --last 4 --backend soft --soft-mode $mode -- "$prog" crash
expect_rc 139
no_leftovers "$prog"
python3 - "$work/out.json" "$at" <<'PY' || exit 1
import sys, btcheck as c
doc, at = c.load(sys.argv[1]), sys.argv[2]
c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="fault_at")
assert doc["stop"]["pc"] == at, (doc["stop"], at)
c.expect_last(c.stopped_thread(doc), "conditional", "store", "fault_at")
PY
done
