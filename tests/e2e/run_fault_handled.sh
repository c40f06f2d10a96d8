#!/usr/bin/env bash
# A crash behind the program's own SIGSEGV handler, which runs about a
# million branches (a crash report) and re-raises the signal: with the
# default ring the handler alone overflows it, and still the report shows
# the history up to the fault (store_fault's store), the fault, then the
# handler's end; btrace exits as the program does natively.  The same in
# JSON, in a saved trace (show), in the session; --stop-at-fault stops at
# the fault itself, before the handler, as GDB does.  The handler's
# branches are counted as written: "more than" that where its ring in the
# process overflowed; where nothing was lost, the recorder and the fast
# mode count the same.  What is kept at a fault is the newest megabyte of
# history, from a record's start, time records or not (targets/fault_late).
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3
prog=$TARGETS/fault_handled

for how in raise kill; do
	native=$(native_status "$prog" 450000 $how)
	[ "$native" = 139 ] || fail "fault_handled $how exits $native natively"
	"$BTRACE" run --json --last 40 --save "$work/$how.trace" -- \
		"$prog" 450000 $how >"$work/$how.json" 2>"$work/err"
	rc=$?
	expect_rc 139
	"$BTRACE" show --json --last 40 "$work/$how.trace" \
		>"$work/$how.show.json" 2>"$work/err" ||
		{ cat "$work/err"; fail "$how: show --json"; }
done
"$BTRACE" run --no-color --last 8 -- "$prog" >"$work/run.txt" 2>"$work/err"
rc=$?
expect_rc 139
"$BTRACE" show --no-color --last 8 "$work/raise.trace" >"$work/show.txt" \
	2>"$work/err" || { cat "$work/err"; fail "show"; }
"$BTRACE" run --json --stop-at-fault --last 8 -- "$prog" \
	>"$work/stop.json" 2>"$work/err"
rc=$?
expect_rc 139
"$BTRACE" run -i --batch --no-color --last 8 -ex 'last 2' -- "$prog" \
	>"$work/sess.txt" 2>"$work/err"
for mode in record fast; do
	"$BTRACE" run --soft-mode $mode --buffer-size 64M --json --last 1 -- \
		"$prog" 5000 >"$work/count.$mode.json" 2>"$work/err"
	rc=$?
	expect_rc 139
done
for pre in 0 1; do
	"$BTRACE" run --json --last 40000 -- "$TARGETS/fault_late" $pre \
		>"$work/late.$pre.json" 2>"$work/err"
	rc=$?
	expect_rc 139
done
no_leftovers "$prog"

python3 - "$work" <<'PY' || exit 1
import json, re, sys
work = sys.argv[1]
for how, code in (("raise", "SI_TKILL"), ("kill", "SI_USER")):
    doc = json.load(open("%s/%s.json" % (work, how)))
    st, th = doc["stop"], doc["threads"][0]
    # the handler's end: the signal it sent itself
    assert st["reason"] == "signal" and st["signal"] == "SIGSEGV", st
    assert st["siginfo"]["code"] == code, st
    assert st["siginfo"]["sender"]["pid"] == doc["pid"], st
    # the handler alone overflowed the ring: the fault is not in it
    assert th["lost"] > 0, th["lost"]
    assert not any(b["from_sym"] and b["from_sym"].startswith("store_fault")
                   for b in th["branches"]), th["branches"]
    f = doc["fault"]
    fs = f["stop"]
    assert fs["tid"] == st["tid"] and fs["signal"] == "SIGSEGV", fs
    assert fs["siginfo"]["code"] == "SEGV_MAPERR" and fs["addr"] == "0x0", fs
    assert fs["sym"].startswith("store_fault+") and \
        fs["src"] == "fault_handled.c:45", fs
    assert f["count"] == 1 and f["after"] > 500000, f
    assert f["after_lost"] is True, f
    br = f["thread"]["branches"]
    assert len(br) == 40 and f["thread"]["lost"] == 0, f["thread"]
    assert br[-1]["kind"] == "call" and br[-1]["to_sym"] == "store_fault", br[-1]
    assert br[-2]["to_sym"].startswith("before_fault"), br[-2]
    assert any(b["to_sym"] == "report_line" for b in br), br
    show = json.load(open("%s/%s.show.json" % (work, how)))
    assert show["fault"] == f, "%s: show's fault differs:\n%s\n%s" % (
        how, show["fault"], f)
    assert show["stop"] == st, show["stop"]

def text(path):
    t = open(path).read()
    m = re.search(r"^last 8 branches of thread (\d+) up to its fault, "
                  r"oldest first:\n(.*?)^fault: SIGSEGV \(Segmentation fault\) "
                  r"at address 0x0 in thread \1: address not mapped "
                  r"\(SEGV_MAPERR\)\n   => 0x[0-9a-f]+  store_fault\+0x[0-9a-f]+  "
                  r"fault_handled.c:45 .*\nthe program handled SIGSEGV at "
                  r"0x[0-9a-f]+; its handler then ran more than \d+ branches and "
                  r"re-raised SIGSEGV:\nlast 8 branches of thread \1, oldest "
                  r"first \(\d+ older ones overwritten\):\n.*^stop: SIGSEGV "
                  r"\(Segmentation fault\) in thread \1: sent by pid \1 ",
                  t, re.M | re.S)
    assert m, "%s:\n%s" % (path, t)
    assert "-> 0x" in m.group(2) and "store_fault" in m.group(2), m.group(2)
for name in ("run.txt", "show.txt", "sess.txt"):
    text("%s/%s" % (work, name))

# nothing lost: the same count in both modes, the handler's 5000 rounds
# (four taken branches each: the call, the branch taken inside, the
# return, the loop's) and its re-raise
counts = []
for mode in ("record", "fast"):
    f = json.load(open("%s/count.%s.json" % (work, mode)))["fault"]
    assert f["after_lost"] is False, (mode, f["after"])
    counts.append(f["after"])
assert counts[0] == counts[1] and 20000 <= counts[0] < 20100, counts

# a fault after a long run with system calls (time records in the ring):
# its newest megabyte kept (32768 branch records, a few less for the time
# records), from a record's start, the older ones counted lost
for pre in (0, 1):
    f = json.load(open("%s/late.%d.json" % (work, pre)))["fault"]
    br = f["thread"]["branches"]
    gaps = [i for i, b in enumerate(br) if b["kind"] == "gap"]
    assert 32000 < len(br) <= 32769 and gaps == [0], (pre, len(br), gaps[:3])
    assert br[-1]["kind"] == "call" and br[-1]["to_sym"] == "store_fault", br[-1]
    assert f["thread"]["lost"] > 200000, f["thread"]["lost"]

# --stop-at-fault: the fault itself is the stop; nothing kept
doc = json.load(open("%s/stop.json" % work))
st = doc["stop"]
assert st["signal"] == "SIGSEGV" and st["siginfo"]["code"] == "SEGV_MAPERR", st
assert st["sym"].startswith("store_fault+") and st["addr"] == "0x0", st
assert "fault" not in doc, doc["fault"]
br = doc["threads"][0]["branches"]
assert br[-1]["to_sym"] == "store_fault" and doc["threads"][0]["lost"] == 0, br
PY
exit 0
