#!/usr/bin/env bash
# btrace gdbserver --trace FILE without a core: GDB's $_siginfo is the
# stop's as the trace keeps it (issue 23, 3): a fault's si_code and
# address, a sent signal's sender and sigqueue's value.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd gdb python3
prog=$TARGETS/sig_how

siginfo() {	# how: run it with --save, then GDB prints $_siginfo
	"$BTRACE" run --json --last 1 --save "$work/$1.trace" -- "$prog" "$1" \
		>"$work/$1.json" 2>"$work/err"
	timeout 300 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
		-ex "target remote | $BTRACE gdbserver --trace $work/$1.trace -" \
		-ex 'p $_siginfo.si_signo' -ex 'p $_siginfo.si_code' \
		-ex 'p $_siginfo._sifields._sigfault.si_addr' \
		-ex 'p $_siginfo._sifields._rt' "$prog" >"$work/$1.gdb" 2>&1 </dev/null
}

for how in null kill sigqueue; do
	siginfo $how
done
python3 - "$work" <<'PY' || exit 1
import json, os, re, sys
work = sys.argv[1]
def values(how):
    out = open("%s/%s.gdb" % (work, how)).read()
    v = dict(re.findall(r"^\$(\d+) = (.*)$", out, re.M))
    assert len(v) == 4, "%s: GDB printed:\n%s" % (how, out)
    return v, json.load(open("%s/%s.json" % (work, how)))["pid"]
v, pid = values("null")
assert v["1"] == "11" and v["2"] == "1" and v["3"] == "(void *) 0x0", v
v, pid = values("kill")
assert v["1"] == "11" and v["2"] == "0", v
assert v["4"].startswith("{si_pid = %d, si_uid = %d," % (pid, os.getuid())), v
v, pid = values("sigqueue")
assert v["1"] == "10" and v["2"] == "-1", v
assert v["4"].startswith("{si_pid = %d, si_uid = %d, si_sigval = {sival_int = 1234,"
                         % (pid, os.getuid())), v
PY
no_leftovers "$prog"
exit 0
