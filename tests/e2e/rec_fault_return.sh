#!/usr/bin/env bash
# Faults the recorder consumes (its ring's guard page, a write to code it
# write-protected) in threads that block SIGSEGV: the kernel unblocks
# SIGSEGV and resets the program's handler at such a fault, and the
# recorder must put both back.  fault_return's handler returns from each
# of its faults after long work (its ring wraps there, SIGSEGV blocked by
# the delivery), and a worker that blocks every signal works long and
# rewrites code it ran; then main faults again.  Under the recorder with
# a small ring: every fault handled, the masks as set, the output and the
# exit status those of the untraced run.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3
prog=$TARGETS/fault_return
rounds=100000	# about 200 k branches a stretch: a 64 KiB ring wraps

native=$("$prog" $rounds 3) || fail "fault_return exits $? natively: $native"
[ "$native" = "handled 6 faults, all as natively" ] || fail "native: $native"
out=$("$BTRACE" run --soft-mode record --buffer-size 64K --json \
	-o "$work/run.json" -- "$prog" $rounds 3 2>"$work/err")
rc=$?
expect_rc 0
[ "$out" = "$native" ] || fail "under the recorder it printed: $out"
no_leftovers "$prog"

python3 - "$work/run.json" <<'PY' || exit 1
import json, sys
doc = json.load(open(sys.argv[1]))
st, th = doc["stop"], doc["threads"][0]
assert st["reason"] == "exit" and st["status"] == 0, st
# all six faults went to the handler, the last kept as the fault
assert doc["fault"]["count"] == 6, doc["fault"]["count"]
assert doc["fault"]["stop"]["siginfo"]["code"] == "SEGV_ACCERR", doc["fault"]
# the ring wrapped while SIGSEGV was blocked: records were overwritten
assert th["lost"] > 0, th
PY
exit 0
