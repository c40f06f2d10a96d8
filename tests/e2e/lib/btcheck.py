# SPDX-License-Identifier: MIT
"""Checks shared by the end-to-end tests of `btrace run --json`.

Every function raises AssertionError (with the document's relevant part)
when what btrace printed is not what the program did.
"""
import json
import re
import subprocess
import sys

KINDS = {"conditional", "jump", "call", "return", "indirect jump",
         "indirect call", "syscall", "sysret", "interrupt", "gap"}
HEX = re.compile(r"^0x[0-9a-f]+$")


def fail(msg, ctx=None):
    """Show @ctx (what btrace printed), then fail with @msg last."""
    if ctx is not None:
        print(json.dumps(ctx)[:3000], file=sys.stderr)
    raise AssertionError(msg)


def load(path):
    """The JSON document, checked against the documented shape."""
    with open(path) as f:
        doc = json.load(f)
    for key in ("btrace", "backend", "pid", "stop", "threads", "stats"):
        if key not in doc:
            fail("missing key %r" % key, doc)
    if doc["btrace"] != 1:
        fail("btrace version", doc)
    stop = doc["stop"]
    for key in ("tid", "reason", "signal", "status", "pc"):
        if key not in stop:
            fail("stop lacks %r" % key, stop)
    if not HEX.match(stop["pc"]):
        fail("stop pc not hex", stop)
    for key in ("instructions", "branches", "stops"):
        if not isinstance(doc["stats"].get(key), int):
            fail("stats lacks %r" % key, doc["stats"])
    for th in doc["threads"]:
        for key in ("tid", "lost", "branches"):
            if key not in th:
                fail("thread lacks %r" % key, th)
        for br in th["branches"]:
            for key in ("from", "to", "kind", "from_sym", "to_sym",
                        "from_src", "to_src", "insn"):
                if key not in br:
                    fail("branch lacks %r" % key, br)
            if br["kind"] not in KINDS:
                fail("unknown kind", br)
            if br["kind"] != "gap" and not (HEX.match(br["from"]) and
                                            HEX.match(br["to"])):
                fail("branch addresses not hex", br)
    return doc


def stopped_thread(doc):
    """The branches of the thread that stopped."""
    tid = doc["stop"]["tid"]
    for th in doc["threads"]:
        if th["tid"] == tid:
            return th["branches"]
    fail("no thread entry for the stopped thread %d" % tid, doc)


def func(sym):
    """'walk+0x1c' -> 'walk'."""
    return None if sym is None else sym.split("+")[0]


def expect_stop(doc, reason, signal=None, status=None, func_name=None,
                src=None):
    stop = doc["stop"]
    if stop["reason"] != reason:
        fail("stop reason %r, expected %r" % (stop["reason"], reason), stop)
    if signal is not None and stop["signal"] != signal:
        fail("stop signal %r, expected %r" % (stop["signal"], signal), stop)
    if status is not None and stop["status"] != status:
        fail("stop status %r, expected %r" % (stop["status"], status), stop)
    if func_name is not None and func(stop.get("sym")) != func_name:
        fail("stopped in %r, expected %r" % (stop.get("sym"), func_name),
             stop)
    if src is not None and stop.get("src") != src:
        fail("stop source %r, expected %r" % (stop.get("src"), src), stop)


def expect_sequence(branches, steps):
    """@steps, a list of (kind, from_func, to_func) with None as a wild
    card, appear in this order (not necessarily adjacent)."""
    i = 0
    for br in branches:
        if i == len(steps):
            break
        kind, ffrom, fto = steps[i]
        if ((kind is None or br["kind"] == kind) and
                (ffrom is None or func(br["from_sym"]) == ffrom) and
                (fto is None or func(br["to_sym"]) == fto)):
            i += 1
    if i < len(steps):
        fail("branch %r not found in order (matched %d of %d)" %
             (steps[i], i, len(steps)), branches)


def expect_last(branches, kind, from_func, to_func):
    br = branches[-1]
    if (br["kind"], func(br["from_sym"]), func(br["to_sym"])) != \
            (kind, from_func, to_func):
        fail("last branch is not %s %s -> %s" % (kind, from_func, to_func),
             branches[-4:])


def insn_lengths(binary):
    """{address: length} of every instruction objdump finds in @binary."""
    out = subprocess.run(["objdump", "-d", "-w", binary], check=True,
                         capture_output=True, text=True).stdout
    lengths = {}
    for line in out.splitlines():
        m = re.match(r"^\s+([0-9a-f]+):\t((?:[0-9a-f]{2} )+)", line)
        if m:
            lengths[int(m.group(1), 16)] = len(m.group(2).split())
    return lengths


def read_steptrace(path):
    """[(pc, length)] from a steptrace log ("0xPC LEN" per instruction,
    then "exit N" or "signal N")."""
    steps = []
    with open(path) as f:
        for line in f:
            words = line.split()
            if len(words) == 2 and words[0].startswith("0x"):
                steps.append((int(words[0], 16), int(words[1])))
    if not steps:
        fail("empty steptrace log %s" % path)
    return steps


def check_lengths(steps, lengths):
    """The trace's instruction lengths agree with objdump's reading of
    the binary (@lengths from insn_lengths: a second, independent
    decoder) wherever it has code."""
    checked = 0
    for pc, n in steps:
        if pc in lengths and n:
            checked += 1
            if lengths[pc] != n:
                fail("0x%x: %d bytes in the trace, %d by objdump" %
                     (pc, n, lengths[pc]))
    return checked


def taken_branches(steps, lengths=None):
    """Taken transfers in consecutive steps: the next pc is not the
    fall-through of the instruction before (nor the instruction itself: a
    rep string instruction steps once per iteration, in place).  Where the trace could not
    tell a length (0), @lengths (from insn_lengths) does."""
    taken = []
    for (a, n), (b, _) in zip(steps, steps[1:]):
        if not n and lengths:
            n = lengths.get(a, 0)
        if not n:
            fail("no length for the instruction at 0x%x" % a)
        if b != a + n and b != a:   # b == a: a rep string iteration
            taken.append((a, b))
    return taken


def expect_ground_truth(branches, truth):
    """btrace's branches are exactly the last ones of the independent
    trace, from and to, in order (transfers that fall through, such as a
    recorded syscall, are not in the truth and are skipped)."""
    got = [(int(b["from"], 16), int(b["to"], 16)) for b in branches
           if b["kind"] != "gap"]
    tail = truth[-len(got):] if got else []
    if len(truth) < len(got):
        fail("btrace shows %d branches, the trace has only %d" %
             (len(got), len(truth)))
    if got != tail:
        for i, (g, t) in enumerate(zip(got, tail)):
            if g != t:
                fail("branch %d of %d: btrace 0x%x -> 0x%x, trace 0x%x -> "
                     "0x%x" % (i, len(got), g[0], g[1], t[0], t[1]),
                     branches[max(0, i - 2):i + 3])
    return len(got)


if __name__ == "__main__":
    load(sys.argv[1])


def rep_iterations(steps):
    """Steps that repeat the one before (rep string iterations)."""
    return sum(1 for (a, _), (b, _) in zip(steps, steps[1:]) if a == b)
