#!/usr/bin/env bash
# btrace run on a recursion five calls deep: six calls of descend in
# order, the stop in the innermost one; the human text output too.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/recursion

btrace_json -n 20 -- "$prog"
expect_rc 139
python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="descend",
              src="recursion.c:8")
br = c.stopped_thread(doc)
assert len(br) == 20, len(br)
first = [i for i, b in enumerate(br) if b["to_sym"] == "descend"][0]
br = br[first:]
calls = [b for b in br if b["kind"] == "call"]
assert [(c.func(b["from_sym"]), c.func(b["to_sym"])) for b in calls] == \
    [("main", "descend")] + [("descend", "descend")] * 5, calls
# Every call enters descend at its first instruction; in between, only the
# taken "if (depth == 0)" tests of the five outer calls.
assert all(b["to_sym"] == "descend" for b in calls), calls
conds = [b for b in br if b["kind"] == "conditional"]
assert len(conds) == 5 and len(br) == 11, br
assert all(b["from_src"] == "recursion.c:7" for b in conds), conds
PY

# The same in text: aligned, most recent last, then the stop.
"$BTRACE" run --no-color -- "$prog" >"$work/out.txt" 2>"$work/err"
rc=$?
expect_rc 139
no_leftovers "$prog"
grep -q $'\033' "$work/out.txt" && fail "colour with --no-color"
grep -q '^last 32 branches of thread [0-9]*, oldest first:$' "$work/out.txt" ||
	fail "no header: $(cat "$work/out.txt")"
[ "$(grep -c '^ *-[0-9]* ' "$work/out.txt")" = 32 ] || fail "not 32 branch lines"
tail -n 3 "$work/out.txt" | head -n 2 | grep -q '^stop: SIGSEGV (Segmentation fault) at address 0x0 in thread' ||
	fail "no stop line: $(cat "$work/out.txt")"
grep -A1 '^stop:' "$work/out.txt" | grep -q '=> 0x[0-9a-f]*  descend+0x[0-9a-f]*  recursion.c:8  mov' ||
	fail "no faulting instruction: $(cat "$work/out.txt")"
grep -E -- '^ +-1  0x[0-9a-f]+ +descend\+0x[0-9a-f]+ +recursion.c:11 +call 0x[0-9a-f]+ +call +-> 0x[0-9a-f]+  descend +recursion.c:6$' \
	"$work/out.txt" >/dev/null || fail "last branch line: $(cat "$work/out.txt")"
# Columns line up: every branch line has its arrow at the same place.
[ "$(grep '^ *-[0-9]* ' "$work/out.txt" | awk '{ print index($0, " -> ") }' | sort -u | wc -l)" = 1 ] ||
	fail "arrows not aligned: $(cat "$work/out.txt")"
