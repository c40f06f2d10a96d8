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

# The core a crash in translated code leaves is the core it leaves
# without btrace: the same pc and backtrace (gdb reads both).
case $(cat /proc/sys/kernel/core_pattern) in
'|'*) echo "core_pattern is a pipe ($(cat /proc/sys/kernel/core_pattern)): core comparison skipped"
      exit 0 ;;
esac
command -v gdb >/dev/null || { echo "no gdb: core comparison skipped"; exit 0; }
core_of() {	# DIR, then the command: the core file it leaves in DIR
	mkdir -p "$1"
	(cd "$1" && ulimit -c unlimited && shift && setarch -R "$@" >/dev/null 2>&1)
	ls "$1"/core* 2>/dev/null | head -n 1
}
native_core=$(core_of "$work/native" "$prog" crash)
rec_core=$(core_of "$work/rec" "$BTRACE" run --soft-mode record -- "$prog" crash)
[ -n "$native_core" ] && [ -n "$rec_core" ] ||
	fail "no core file (native: '$native_core', recorder: '$rec_core')"
show() { gdb -nx -batch -ex 'p/x $pc' -ex 'bt' "$prog" "$1" 2>/dev/null |
	grep -E '^\$1|^#' | sed 's/ (.*//'; }
show "$native_core" >"$work/native.bt"
show "$rec_core" >"$work/rec.bt"
cat "$work/rec.bt"
grep -q "= $at$" "$work/rec.bt" || fail "the recorder's core is not at fault_at ($at)"
diff "$work/native.bt" "$work/rec.bt" || fail "the cores differ"
