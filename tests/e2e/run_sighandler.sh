#!/usr/bin/env bash
# btrace run on a program whose signal handler runs and returns: the
# delivery is an interrupt branch into the handler, the handler returns
# through rt_sigreturn, the program goes on to its NULL store.
. "$TESTDIR/e2e/lib/common.sh"
prog=$TARGETS/sighandler

native=$(native_status "$prog")
[ "$native" = 139 ] || fail "sighandler exits $native natively"
btrace_json --last 200 --backend soft -- "$prog"
expect_rc "$native"
no_leftovers "$prog"
python3 - "$work/out.json" <<'PY' || exit 1
import sys, btcheck as c
doc = c.load(sys.argv[1])
c.expect_stop(doc, "signal", signal="SIGSEGV", func_name="after_signal",
              src="sighandler.c:19")
br = c.stopped_thread(doc)
c.expect_sequence(br, [("call", "main", "raise"),
                       ("interrupt", None, "on_usr1"),
                       ("return", "on_usr1", None),
                       ("call", "main", "after_signal")])
intr = [b for b in br if b["kind"] == "interrupt"]
assert len(intr) == 1, intr
# After the handler, control comes back where the signal interrupted.
i = br.index(intr[0])
back = [b for b in br[i:] if b["to"] == intr[0]["from"] or
        int(b["to"], 16) - int(intr[0]["from"], 16) in range(0, 16)]
assert back, br[i:i + 12]
PY
