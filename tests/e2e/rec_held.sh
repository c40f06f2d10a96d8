#!/usr/bin/env bash
# The recorder holds what a thread's ring held at each stop undecoded and
# decodes it when the history is read; what newer records would overwrite
# in the thread's ring is dropped without being decoded.  The history kept
# must be what decoding everything would have kept: the same run (no
# address randomization, python3's hash seed fixed) with a small ring
# keeps, after its leading overflow gap, exactly the last branches of the
# run with a ring big enough for all of them, and decodes far fewer.
# compute: one long stretch of translated code; python3: stops that leave
# the translation (mmap, signals' set-up), so that what the fast mode
# records between held parts is held and dropped with them.  A clock read
# in the vDSO may retry differently from one run to the next (timing's):
# branches from the vDSO are left out of the comparison.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3 setarch
export PYTHONHASHSEED=0 BTRACE_REC_TIME=0
fails=0

# history NAME SIZE PROG...: the run's JSON report, its last 270 k
# branches (more than a 1 MiB ring keeps); btrace exits with the
# program's status
history() {
	local name=$1 size=$2 want
	shift 2
	"$@" >/dev/null 2>&1
	want=$?
	setarch -R "$BTRACE" run --soft-mode record --buffer-size "$size" \
		--json --last 270000 -- "$@" >"$work/$name.json" 2>"$work/$name.err"
	[ $? = "$want" ] || { cat "$work/$name.err"; fail "$name: btrace did not exit $want"; }
}

# same BIG SMALL: SMALL's history is the tail of BIG's, SMALL decoded less
same() {
	python3 - "$work/$1.json" "$work/$2.json" <<'PY' || fails=$((fails + 1))
import json, sys

def load(path):
    text = open(path).read()
    doc = json.loads(text[text.index('{"btrace"'):])
    return doc, [(b["from"], b["to"], b["kind"])
                 for b in doc["threads"][0]["branches"]
                 if not (b.get("from_sym") or "").startswith("__vdso")]

big, kb = load(sys.argv[1])
small, ks = load(sys.argv[2])
name = sys.argv[2].split("/")[-1]
assert big["threads"][0]["lost"] == 0, "the big ring lost something"
assert not any(k[2] == "gap" for k in kb), "a gap in the big ring's history"
assert ks and ks[0][2] == "gap", (name, "no leading overflow gap", ks[:1])
kept = ks[1:]
assert len(kept) < len(kb), (name, len(kept), "kept: more than compared")
if kb[-len(kept):] != kept:
    first = next(i for i, (a, b) in enumerate(zip(kb[-len(kept):], kept))
                 if a != b)
    print("FAIL", name, "differs at", first, "of", len(kept),
          kb[-len(kept) + first], kept[first])
    sys.exit(1)
db, ds = big["stats"]["branches"], small["stats"]["branches"]
if ds * 3 > db:
    print("FAIL", name, "decoded", ds, "of", db, "branches")
    sys.exit(1)
print("ok  ", name, len(kept), "branches kept as the big ring's last;",
      ds, "decoded of", db)
PY
}

history compute_big 256M "$TARGETS/compute" 27
history compute_64k 64K "$TARGETS/compute" 27
history compute_1m 1M "$TARGETS/compute" 27
same compute_big compute_64k
same compute_big compute_1m

history py_big 256M python3 -c 'print(6 * 7)'
history py_64k 64K python3 -c 'print(6 * 7)'
history py_1m 1M python3 -c 'print(6 * 7)'
same py_big py_64k
same py_big py_1m
[ $fails = 0 ]
