#!/usr/bin/env bash
# The recorder's code cache: which blocks a program ran, kept by build-id
# (here in a directory of the test's own: $BTRACE_CODE_CACHE) and translated
# in one batch by its next run.  A profile changes when code is
# translated, never what is recorded:
# - python3 run twice: its profile is there, named by python3's build-id,
#   a whole file, counting one run since its last audit after the second
#   (which made its translations without marks); the second run stops a
#   fifth as often or less, and both histories are the same, branch for
#   branch (no address randomization, a fixed hash seed; clock reads in the
#   vDSO left out, as they may retry);
# - with a warm cache, against single-stepping (softdiff): threads
#   (fast_mix), fork (rec_fork), code rewritten while another thread runs
#   it (jit_pair);
# - a damaged profile: gzip's output as without btrace, the file written
#   again whole; a whole one whose offsets fit no block (every seventh
#   byte of gzip): equal to single-stepping, and those blocks, which never
#   run, gone from it after nine runs;
# - --no-code-cache keeps none; --code-cache DIR keeps them in DIR.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3 setarch readelf
[ -x /usr/bin/python3 ] && [ -x /usr/bin/gzip ] ||
	fail "no /usr/bin/python3 or /usr/bin/gzip: the Makefile installs them"
export PYTHONHASHSEED=0 BTRACE_REC_TIME=0 BTRACE_CODE_CACHE=$work/cache
fails=0

build_id() {	# the GNU build-id of file @1, in hex
	readelf -n "$(readlink -f "$1")" | sed -n 's/.*Build ID: *//p'
}

# run NAME: python3 under the recorder, its JSON report in NAME.json
run() {
	setarch -R "$BTRACE" run --soft-mode record --buffer-size 32M \
		--json --last 300000 -- /usr/bin/python3 -c 'import json; print(1)' \
		>"$work/$1.json" 2>"$work/$1.err" ||
		{ cat "$work/$1.err"; fail "$1: btrace failed"; }
}

# runs FILE: the runs a profile counts since its last audit
runs() {
	python3 -c 'import struct, sys
print(struct.unpack("<I", open(sys.argv[1], "rb").read()[12:16])[0])' "$1"
}

# whole FILE: a profile as btrace writes it (magic, count, runs since its
# last audit, entries)
whole() {
	python3 - "$1" <<'PY'
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"BTBLKS4\n", data[:8]
n, runs = struct.unpack("<II", data[8:16])
assert runs < 4 and len(data) == 16 + 5 * n, (n, runs, len(data))
offs = [v & 0x7fffffff for v in struct.unpack("<%dI" % n, data[16:16 + 4 * n])]
assert offs == sorted(set(offs)), "not ascending"
assert max((b & 15 for b in data[16 + 4 * n:]), default=0) <= 8, "an age past 8"
print(n)
PY
}

# python3, cold then warm
run cold
py=$work/cache/$(build_id /usr/bin/python3).blocks
[ -f "$py" ] || { ls -l "$work/cache"; fail "no profile of python3 ($py)"; }
n=$(whole "$py") || fail "python3's profile is not whole"
echo "python3's profile: $n blocks"
[ "$n" -gt 1000 ] || fail "python3's profile has $n blocks"
[ "$(runs "$py")" = 0 ] || fail "python3's first profile counts $(runs "$py") runs"
run warm
[ "$(runs "$py")" = 1 ] ||
	{ echo "FAIL python3's profile counts $(runs "$py") runs after the second"; fails=$((fails + 1)); }
python3 - "$work/cold.json" "$work/warm.json" <<'PY' || fails=$((fails + 1))
import json, sys

def load(path):
    text = open(path).read()
    doc = json.loads(text[text.index('{"btrace"'):])
    th = doc["threads"][0]
    assert th["lost"] == 0, (path, "lost", th["lost"])
    return doc["stats"], [(b["from"], b["to"], b["kind"])
                          for b in th["branches"]
                          if not (b.get("from_sym") or "").startswith("__vdso")]

cold, kc = load(sys.argv[1])
warm, kw = load(sys.argv[2])
print("cold:", cold["stops"], "stops,", len(kc), "branches;",
      "warm:", warm["stops"], "stops,", len(kw), "branches")
assert len(kc) > 100000, len(kc)
# the last branches of each (the vDSO's left out after they were taken)
m = min(len(kc), len(kw))
assert m > len(kc) - 100, (len(kc), len(kw))
if kc[-m:] != kw[-m:]:
    first = next(i for i, (a, b) in enumerate(zip(kc[-m:], kw[-m:])) if a != b)
    print("FAIL the histories differ at", first, "of", m,
          kc[-m + first], kw[-m + first])
    sys.exit(1)
if warm["stops"] * 5 > cold["stops"]:
    print("FAIL warm run:", warm["stops"], "stops, cold", cold["stops"])
    sys.exit(1)
PY

# a warm cache against single-stepping (each run once to warm it)
printf 'a line to compress\n%.0s' $(seq 1 50) >"$work/in.txt"
for args in "-k -t -- $TARGETS/fast_mix thread" "-k -- $TARGETS/rec_fork" \
	"-t -- $TARGETS/jit_pair"; do
	opts=${args%%--*} prog=${args#*-- }
	# shellcheck disable=SC2086
	"$BTRACE" run --soft-mode record -- $prog >/dev/null 2>&1 </dev/null
	# shellcheck disable=SC2086
	softdiff_check -T 300 $opts -m record -- $prog
done

# profiles that do not fit: damaged, and offsets of no block
gz=$work/cache/$(build_id /usr/bin/gzip).blocks
head -c 1000 /dev/urandom >"$gz"
"$BTRACE" run --soft-mode record --json -- /usr/bin/gzip -c "$work/in.txt" \
	>"$work/gz.out" 2>"$work/gz.err" || { cat "$work/gz.err"; fail "gzip failed"; }
gzip -c "$work/in.txt" | cmp -s - <(head -c "$(gzip -c "$work/in.txt" | wc -c)" "$work/gz.out") ||
	{ echo "FAIL gzip's output, with a damaged profile"; fails=$((fails + 1)); }
whole "$gz" >/dev/null || { echo "FAIL the damaged profile stays damaged"; fails=$((fails + 1)); }
python3 - "$gz" "$(stat -c %s "$(readlink -f /usr/bin/gzip)")" <<'PY'
import struct, sys
offs = list(range(0, int(sys.argv[2]), 7))
ent = [o | (0x80000000 if i % 3 == 0 else 0) for i, o in enumerate(offs)]
open(sys.argv[1], "wb").write(b"BTBLKS4\n" + struct.pack("<II", len(ent), 0) +
                              struct.pack("<%dI" % len(ent), *ent) +
                              bytes(i % 9 for i in range(len(ent))))
PY
softdiff_check -T 300 -m record -- /usr/bin/gzip -c "$work/in.txt"
# what does not run leaves: a block that ran in none of a file's last 8
# runs (ages 0 to 8 given above; every fourth run, an audit, marks the
# profile's translations and ages what did not run by the four since the
# last)
junk=$(whole "$gz") || fail "gzip's profile is not whole"
for i in 1 2 3 4 5 6 7 8 9; do
	"$BTRACE" run --soft-mode record -- /usr/bin/gzip -c "$work/in.txt" \
		>/dev/null 2>&1
done
left=$(whole "$gz") || fail "gzip's profile is not whole"
echo "gzip's profile: $junk blocks, $left after nine runs"
[ "$left" -gt 100 ] && [ $((left * 4)) -lt "$junk" ] ||
	{ echo "FAIL gzip's profile: $junk blocks, then $left"; fails=$((fails + 1)); }

# where they are kept
rm -rf "$work/cache" "$work/dir"
"$BTRACE" run --no-code-cache -- gzip -c "$work/in.txt" >/dev/null 2>&1
[ ! -e "$work/cache" ] || { echo "FAIL --no-code-cache kept some"; fails=$((fails + 1)); }
"$BTRACE" run --code-cache "$work/dir" -- gzip -c "$work/in.txt" >/dev/null 2>&1
[ -f "$work/dir/$(basename "$gz")" ] && [ ! -e "$work/cache" ] ||
	{ echo "FAIL --code-cache DIR"; fails=$((fails + 1)); }
[ $fails = 0 ] || fail "$fails checks failed"
