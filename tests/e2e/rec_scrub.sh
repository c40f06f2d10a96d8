#!/usr/bin/env bash
# A program that writes over every anonymous read-write mapping it has
# (backs each piece up, fills it with patterns, puts it back), as Redis's
# crash memory test does, the recorder's rings and control blocks among
# them: under the recorder it dies of its SIGSEGV as natively, the
# fault's history shown (store_fault called from main), the stop at the
# program's own code, in a bounded number of stops rather than forever.
# "now" scrubs in main before the fault: the fault is still its own.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3
prog=$TARGETS/scrub

for how in handler now; do
	native=$(native_status "$prog" $how)
	[ "$native" = 139 ] || fail "scrub $how exits $native natively"
	timeout 300 "$BTRACE" run --soft-mode record --json --last 8 -- \
		"$prog" $how >"$work/$how.json" 2>"$work/err"
	rc=$?
	expect_rc 139
done
no_leftovers "$prog"

store_line=$(grep -n 'slot = value;' "$TESTDIR/targets/scrub.c" | cut -d: -f1)
python3 - "$work" "scrub.c:$store_line" <<'PY' || exit 1
import json, sys
work, store_src = sys.argv[1], sys.argv[2]
for how in ("handler", "now"):
    doc = json.load(open("%s/%s.json" % (work, how)))
    st = doc["stop"]
    ctx = "%s: %s" % (how, st)
    assert st["reason"] == "signal" and st["signal"] == "SIGSEGV", ctx
    assert st["siginfo"]["sender"]["pid"] == doc["pid"], ctx
    # at the program's own code (raise's), never in btrace's memory
    assert st["sym"] is not None and int(st["pc"], 16) < 0x600000000000, ctx
    f = doc["fault"]
    assert f["stop"]["sym"].startswith("store_fault+"), f["stop"]
    assert f["stop"]["addr"] == "0x0", f["stop"]
    assert f["stop"]["src"] == store_src, (store_src, f["stop"])
    br = f["thread"]["branches"]
    if how == "handler":	# the scrub came after the fault
        assert br[-1]["kind"] == "call" and \
            br[-1]["to_sym"] == "store_fault" and \
            br[-1]["from_sym"].startswith("main+"), br[-1]
        assert not any(b["kind"] == "gap" for b in br), br
    assert doc["stats"]["stops"] < 5000, doc["stats"]
PY
exit 0
