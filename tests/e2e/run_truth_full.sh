#!/usr/bin/env bash
# Every branch of whole runs, from the first instruction after execve to
# the crash, equal to an independent single-step trace (steptrace): the
# call chain, the jump table and the signal handler targets.
#
# The C library is kept off its AVX/AVX-512 string functions: capstone 4
# cannot decode their EVEX instructions, so neither btrace nor steptrace
# could tell their lengths (run_crash_null.sh checks the default path over
# the program's own last branches).  Both tools run with the same
# environment, "_" included, and without address-space randomization:
# glibc's start-up branches on where the stack and the strings lie.
. "$TESTDIR/e2e/lib/common.sh"
[ -x "$TOOLS/steptrace" ] || fail "no $TOOLS/steptrace"
export GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX,-BMI2,-EVEX

for name in crash_null jumptable sighandler; do
	prog=$TARGETS/$name
	native=$(native_status "$prog")
	setarch -R env _=x "$BTRACE" run --json --backend soft --last 100000 -- "$prog" \
		>"$work/$name.json" 2>"$work/err"
	rc=$?
	expect_rc "$native"
	setarch -R env _=x "$TOOLS/steptrace" -- "$prog" >"$work/$name.trace" 2>/dev/null
	no_leftovers "$prog"
	python3 - "$work/$name.json" "$work/$name.trace" "$prog" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
steps = c.read_steptrace(sys.argv[2])
lengths = c.insn_lengths(sys.argv[3])
assert c.check_lengths(steps, lengths) == len(steps), "undecoded steps"
truth = c.taken_branches(steps, lengths)
th = [t for t in doc["threads"] if t["tid"] == doc["stop"]["tid"]][0]
assert th["lost"] == 0, th["lost"]
br = th["branches"]
assert len(br) == len(truth), (len(br), len(truth))
c.expect_ground_truth(br, truth)
# A signal's entry starts at the interrupted pc, as a step trace sees it.
intr = [b for b in br if b["kind"] == "interrupt"]
# Steps not completed: the faulting instruction, and each interrupted
# one (stepped into the handler, run later).
# A rep string instruction is one instruction however often it steps.
ninsn = len(steps) - 1 - len(intr) - c.rep_iterations(steps)
assert doc["stats"]["instructions"] == ninsn, \
    (doc["stats"], len(steps), len(intr))
print("%s: all %d branches and %d instructions match" %
      (sys.argv[3].rsplit("/", 1)[1], len(truth), len(steps) - 1))
PY
done
