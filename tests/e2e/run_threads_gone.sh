#!/usr/bin/env bash
# btrace run on a program whose threads end one after the other, each
# with a full history (more than btrace keeps of gone threads, so the
# first gone lose theirs), and one still waiting at the exit: btrace
# lets the program go and exits with its status.  (Before, letting go
# freed each thread before the next went, and the next one's going
# trimmed the gone threads' rings, the freed one's among them: btrace
# crashed after its report, every run.)
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/threads_gone

want=$("$prog" 12 200000) || fail "threads_gone fails natively"
btrace_json --last 4 -- "$prog" 12 200000
expect_rc 0
no_leftovers "$prog"
python3 - "$work/out.json" "$want" <<'PY' || exit 1
import sys, json, btcheck as c
text = open(sys.argv[1]).read()
out, _, rest = text.partition("\n")
assert out == sys.argv[2], (out, sys.argv[2])
with open(sys.argv[1] + ".doc", "w") as f:
    f.write(rest)
doc = c.load(sys.argv[1] + ".doc")
c.expect_stop(doc, "exit", status=0)
br = c.stopped_thread(doc)
assert br and br[-1]["to_sym"].startswith("_exit"), br[-1:]
PY
