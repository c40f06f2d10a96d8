#!/usr/bin/env bash
# Under btrace gdbserver, GDB stops at a fault the program's own handler
# would take, before the handler runs (GDB's default: SIGSEGV stops and
# is not passed silently), with the fault's siginfo; continuing runs the
# handler, which re-raises the signal.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd gdb
prog=$TARGETS/fault_handled

timeout 300 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
	-ex "target remote | $BTRACE gdbserver - $prog 2000" \
	-ex continue -ex 'p $_siginfo.si_code' \
	-ex 'p $_siginfo._sifields._sigfault.si_addr' \
	-ex continue \
	-ex 'p $_siginfo.si_code' "$prog" >"$work/gdb.txt" 2>&1 </dev/null
no_leftovers "$prog"
python3 - "$work/gdb.txt" <<'PY' || exit 1
import re, sys
out = open(sys.argv[1]).read()
stops = re.findall(r"received signal SIGSEGV.*\n(0x[0-9a-f]+) in (\w+)", out)
assert len(stops) == 2, out
# first the fault itself, in store_fault, before the handler ran
assert stops[0][1] == "store_fault", out
v = re.findall(r"^\$(\d+) = (.*)$", out, re.M)
assert v[0][1] == "1" and v[1][1] == "(void *) 0x0", v	# SEGV_MAPERR at 0
# then the handler's re-raise (SI_TKILL: -6)
assert v[2][1] == "-6", v
PY
exit 0
