#!/usr/bin/env bash
# The GDB plugin with a hardware backend (pt, else bts): btrace continue on
# the crash chain, the last branch walk -> store_value, and a trace file
# that shows the same.  Skips (77) with doctor's reason without hardware.
for backend in pt bts; do
	why=$("$BTRACE" doctor --json | python3 -c '
import json, sys
b = json.load(sys.stdin)["backends"][sys.argv[1]]
print("" if b["usable"] else b["why"])' "$backend") || {
		echo "FAIL: btrace doctor --json"
		exit 1
	}
	[ -z "$why" ] && break
	reasons="${reasons-}$backend: $why; "
done
if [ -n "$why" ]; then
	echo "no branch-trace hardware for the gdb plugin: ${reasons%; }"
	exit 77
fi
. "$TESTDIR/e2e/lib/common.sh"
command -v gdb >/dev/null || { echo "gdb is not installed"; exit 77; }
prog=$TARGETS/crash_null
timeout 120 gdb -nx -batch -ex "source $TESTDIR/../gdb/btrace.py" \
	-ex "file $prog" -ex start -ex "btrace continue --backend $backend" \
	-ex "btrace last 4" -ex "btrace save $work/hw.trace" -ex kill \
	>"$work/out" 2>&1
grep -q "Program received signal SIGSEGV" "$work/out" ||
	{ cat "$work/out"; fail "no SIGSEGV"; }
grep -Eq "^ *-1 .*walk.* call +-> 0x[0-9a-f]+ +store_value" "$work/out" ||
	{ cat "$work/out"; fail "the last branch is not walk -> store_value"; }
"$BTRACE" show --json --last 4 "$work/hw.trace" >"$work/show.json" ||
	fail "show of the saved trace"
python3 - "$work/show.json" "$backend" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["backend"] == sys.argv[2], doc["backend"]
assert doc["threads"][0]["branches"][-1]["to_sym"] == "store_value"
PY
no_leftovers "$prog"
