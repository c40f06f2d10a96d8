#!/usr/bin/env bash
# btrace run on a dynamically linked PIE: symbols and lines of the PIE at
# its load address, the C library's symbols, a callback from the library
# into the program (indirect call) that crashes.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/qsort_dyn

btrace_json --last 50 -- "$prog"
expect_rc 139
no_leftovers "$prog"
python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="compare",
              src="qsort_dyn.c:15")
br = c.stopped_thread(doc)
# The C library (a shared object) calls back into the PIE.
icalls = [b for b in br if b["kind"] == "indirect call" and
          c.func(b["to_sym"]) == "compare"]
assert icalls, br
cb = icalls[-1]
assert cb["from_sym"] and c.func(cb["from_sym"]) != "compare", cb
assert cb["to_src"] == "qsort_dyn.c:11", cb
# From the library, mapped apart from the PIE (both loaded high).
frm, to = int(cb["from"], 16), int(cb["to"], 16)
assert to > 0x500000000000 and abs(frm - to) > 1 << 32, cb
# Each comparison is an indirect call from the library into compare.
assert all(c.func(b["to_sym"]) == "compare" for b in br
           if b["kind"] == "indirect call"), br
PY
