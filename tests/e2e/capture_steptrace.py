#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare the branch records of the single-step backend (captrace output)
with the branches derived from an independent single-step pc trace
(steptrace output): every step whose next pc is not pc + length is a taken
branch from pc to the next pc; the instructions since the previous branch
make its block.  A rep string instruction steps once per iteration, in
place: that is one instruction, not a branch.

    capture_steptrace.py STEPTRACE_OUT CAPTRACE_OUT [--tid-first]

Prints the first difference and exits 1, or prints a summary and exits 0.
"""
import sys


def derive(path):
    pcs = []
    fate = None
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] in ("exit", "signal"):
                fate = line.strip()
                continue
            pcs.append((int(w[0], 16), int(w[1])))
    branches = []
    n = 0
    for i in range(len(pcs) - 1):
        pc, ln = pcs[i]
        nxt = pcs[i + 1][0]
        if nxt == pc:
            continue    # a rep string instruction between iterations
        n += 1
        if nxt != pc + ln:
            branches.append((pc, nxt, n, ln))
            n = 0
    return branches, len(pcs), fate


def records(path):
    """The records of the first thread listed (the main thread)."""
    recs, stop, seen = [], None, 0
    with open(path) as f:
        for line in f:
            w = line.split()
            if w[0] == "stop":
                stop = line.strip()
            elif w[0] == "thread":
                seen += 1
            elif w[0].startswith("0x") and seen == 1:
                kind = " ".join(w[2:-2])
                recs.append((int(w[0], 16), int(w[1], 16), int(w[-2]),
                             kind, int(w[-1])))
    return recs, stop


def agree(t, r):
    """A derived branch t and a record r are the same branch.

    steptrace shows the pc a thread was at when a signal came, whether or
    not that instruction ran.  An interrupt record goes from where the
    handler returns to: the same instruction, not run (a fault, a signal
    between two instructions), or the one after an instruction that ran
    and trapped (int3)."""
    if r[3] != "interrupt":
        return t[:3] == r[:3]
    if t[1] != r[1]:
        return False
    return ((t[0] == r[0] and t[2] == r[2] + 1) or
            (t[0] + t[3] == r[0] and t[2] == r[2]))


def main():
    truth, steps, fate = derive(sys.argv[1])
    recs, stop = records(sys.argv[2])
    if not truth or not recs:
        print("nothing to compare: %d derived, %d recorded" %
              (len(truth), len(recs)))
        return 1
    if len(truth) != len(recs):
        print("branch count differs: steptrace %d, capture %d" %
              (len(truth), len(recs)))
    for i, (t, r) in enumerate(zip(truth, recs)):
        if not agree(t, r):
            print("branch %d differs: steptrace 0x%x -> 0x%x (%d insns), "
                  "capture 0x%x -> 0x%x (%d insns, %s)" %
                  (i, t[0], t[1], t[2], r[0], r[1], r[2], r[3]))
            return 1
    if len(truth) != len(recs):
        return 1
    print("%d branches over %d instructions agree (%s; %s)" %
          (len(truth), steps, stop, fate))
    return 0


if __name__ == "__main__":
    sys.exit(main())
