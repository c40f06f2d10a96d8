#!/usr/bin/env bash
# The stop says how the signal came (issue 23, 3): a fault its kind and
# address, a sent signal its sender and system call, never a NULL
# dereference for kill(getpid(), SIGSEGV).  Each way of targets/sig_how in
# JSON and text, live, from a saved trace and in the session.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3
prog=$TARGETS/sig_how

for how in null rodata kill sigqueue other div0 bus ud2 abort; do
	native=$(native_status "$prog" $how)
	"$BTRACE" run --json --last 4 --save "$work/$how.trace" -- "$prog" $how \
		>"$work/$how.json" 2>"$work/err"
	rc=$?
	expect_rc "$native"
	"$BTRACE" run --no-color --last 4 -- "$prog" $how >"$work/$how.txt" 2>"$work/err"
	rc=$?
	expect_rc "$native"
	"$BTRACE" show --json --last 4 "$work/$how.trace" >"$work/$how.show.json" \
		2>"$work/err" || { cat "$work/err"; fail "$how: show --json"; }
	"$BTRACE" show --no-color --last 4 "$work/$how.trace" >"$work/$how.show.txt" \
		2>"$work/err" || { cat "$work/err"; fail "$how: show"; }
done
no_leftovers "$prog"

python3 - "$work" <<'PY' || exit 1
import json, os, re, sys
work = sys.argv[1]
uid = os.getuid()
# how: signal, si_code name, fault, text after "in thread N: "
expect = {
    "null": ("SIGSEGV", "SEGV_MAPERR", True, "address not mapped (SEGV_MAPERR)"),
    "rodata": ("SIGSEGV", "SEGV_ACCERR", True,
               "no permission for the access (SEGV_ACCERR)"),
    "kill": ("SIGSEGV", "SI_USER", False,
             "sent by pid {pid} (sig_how) with kill() (SI_USER)"),
    "sigqueue": ("SIGUSR1", "SI_QUEUE", False,
                 "sent by pid {pid} (sig_how) with sigqueue() (SI_QUEUE), value 1234"),
    "other": ("SIGTERM", "SI_USER", False,
              "sent by pid {sender} (sig_sender) with kill() (SI_USER)"),
    "div0": ("SIGFPE", "FPE_INTDIV", True, "integer divide by zero (FPE_INTDIV)"),
    "bus": ("SIGBUS", "BUS_ADRERR", True,
            "no memory behind the address, such as past a file's end (BUS_ADRERR)"),
    "ud2": ("SIGILL", "ILL_ILLOPN", True, "illegal operand (ILL_ILLOPN)"),
    "abort": ("SIGABRT", "SI_TKILL", False,
              "sent by pid {pid} (sig_how) with tgkill() (SI_TKILL)"),
}
for how, (sig, code, fault, words) in expect.items():
    doc = json.load(open("%s/%s.json" % (work, how)))
    show = json.load(open("%s/%s.show.json" % (work, how)))
    st, si = doc["stop"], doc["stop"]["siginfo"]
    ctx = "%s: %s" % (how, st)
    assert st["reason"] == "signal" and st["signal"] == sig, ctx
    assert si["code"] == code and si["fault"] is fault, ctx
    assert show["stop"] == st, "%s: show's stop differs: %s" % (how, show["stop"])
    sender = None
    if fault:
        assert si["sender"] is None and si["value"] is None, ctx
        if sig in ("SIGSEGV", "SIGBUS"):
            assert st["addr"] is not None, ctx
        if how == "null":
            assert st["addr"] == "0x0" and st["sym"].startswith("store_null"), ctx
        if how == "rodata":
            assert st["addr"] != "0x0" and st["sym"].startswith("store_null"), ctx
        if how == "div0":
            assert st["sym"].startswith("divide") and "div" in st["insn"], ctx
        if how == "ud2":
            assert st["insn"] == "ud2", ctx
    else:
        # a sent signal has no address, whatever the signal
        assert st["addr"] is None, ctx
        sender = si["sender"]["pid"]
        assert si["sender"]["uid"] == uid, ctx
        if how == "other":
            assert sender != doc["pid"] and si["sender"]["comm"] == "sig_sender", ctx
        else:
            assert sender == doc["pid"] and si["sender"]["comm"] == "sig_how", ctx
        assert si["value"] == (1234 if how == "sigqueue" else None), ctx
    for suffix in ("txt", "show.txt"):
        text = open("%s/%s.%s" % (work, how, suffix)).read()
        m = re.search(r"^stop: (.*) in thread (\d+): (.*)$", text, re.M)
        assert m, "%s.%s: no stop line:\n%s" % (how, suffix, text)
        tid = int(m.group(2))
        # the live run's sender is another process than the saved one's
        want = re.escape(words).replace(re.escape("{pid}"), str(tid))
        want = want.replace(re.escape("{sender}"),
                            str(sender) if suffix == "show.txt" else r"\d+")
        assert re.fullmatch(want, m.group(3)), \
            "%s.%s: %r, expected %r" % (how, suffix, m.group(3), want)
        if fault and sig in ("SIGSEGV", "SIGBUS"):
            assert " at address 0x" in m.group(1), m.group(0)
        else:
            assert "address" not in m.group(1), m.group(0)
PY

# The session shows the same stop line.
"$BTRACE" run -i --batch -ex 'threads' -- "$prog" kill >"$work/sess.txt" 2>"$work/err"
grep -qE '^stop: SIGSEGV \(Segmentation fault\) in thread ([0-9]+): sent by pid \1 \(sig_how\) with kill\(\) \(SI_USER\)$' \
	"$work/sess.txt" || fail "session: $(cat "$work/sess.txt" "$work/err")"
exit 0
