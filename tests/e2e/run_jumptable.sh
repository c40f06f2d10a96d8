#!/usr/bin/env bash
# btrace run on a bytecode loop whose switch is a jump table: indirect
# jumps through the table, one per operation, then SIGFPE (every branch
# is checked against steptrace in run_truth_full.sh).
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/jumptable

native=$(native_status "$prog")
[ "$native" = 136 ] || fail "jumptable exits $native natively"
btrace_json --last 30 -- "$prog"
expect_rc "$native"
no_leftovers "$prog"

python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "signal", signal="SIGFPE", func_name="execute",
              src="jumptable.c:33")
br = c.stopped_thread(doc)
ij = [b for b in br if b["kind"] == "indirect jump" and
      c.func(b["from_sym"]) == "execute"]
# Eight operations ran, DIV the last, each dispatched by "jmp rax".  Case
# 0 (PUSH1, three times) sits right after that jmp: its table entry is
# the fall-through address, which is no taken branch by definition (the
# next pc is pc + length), so five indirect jumps are seen.
assert len(ij) == 5, [b["to_sym"] for b in ij]
for b in ij:
    assert c.func(b["from_sym"]) == "execute" == c.func(b["to_sym"]), b
    assert b["insn"].startswith("jmp") and "0x" not in b["insn"], b
assert len({b["to"] for b in ij}) == 5, ij      # ADD DUP SUB SWAP DIV
assert br[-1]["kind"] == "indirect jump" and br[-1]["to_src"] == "jumptable.c:31"
PY

