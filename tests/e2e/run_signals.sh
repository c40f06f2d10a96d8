#!/usr/bin/env bash
# btrace run on the other fatal signals: SIGILL (ud2), SIGTRAP (the
# program's own int3, not one of btrace's steps) and SIGBUS, each shown at
# the instruction that raised it and passed on with the status a shell
# sees without btrace.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/fatal

for how in ill:SIGILL:die_ill:ud2 trap:SIGTRAP:die_trap: bus:SIGBUS:die_bus:mov; do
	IFS=: read -r mode sig fn insn <<<"$how"
	native=$(native_status "$prog" "$mode")
	btrace_json --last 3 -- "$prog" "$mode"
	expect_rc "$native"
	no_leftovers "$prog"
	python3 - "$work/out.json" "$sig" "$fn" "$insn" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
sig, fn, insn = sys.argv[2:5]
c.expect_stop(doc, "signal", signal=sig, func_name=fn)
stop = doc["stop"]
assert stop["src"] and stop["src"].startswith("fatal.c:"), stop
assert (stop["insn"] or "").startswith(insn), stop
if sig == "SIGBUS":
    assert stop["addr"] not in (None, "0x0"), stop
br = c.stopped_thread(doc)
assert any(b["kind"] == "call" and c.func(b["to_sym"]) == fn
           for b in br) or c.func(br[-1]["to_sym"]) == fn, br
PY
done
