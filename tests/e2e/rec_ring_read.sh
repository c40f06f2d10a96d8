#!/usr/bin/env bash
# A stop reads from the process only what the thread wrote into its ring
# since the last one: with rings big enough to lose nothing, the bytes read
# (stats.ring_read) equal the bytes decoded (stats.ring_bytes) and do not
# depend on the ring's size (64 KiB against 64 MiB, the same run), on one
# thread and on many.  With a ring that wraps between stops, what is read
# is still no more than what was written: at most the whole ring per stop,
# never the ring for a stop that wrote nothing.
. "$TESTDIR/e2e/lib/common.sh"
# Without the recorder's time records: how many the tracer writes where it
# holds a thread depends on how long it held it, and so on the machine.
export BTRACE_REC_TIME=0

# run_stats NAME SIZE PROG...: the run's "stats" in $work/NAME.stats
run_stats() {
	local name=$1 size=$2
	shift 2
	btrace_json --buffer-size "$size" --last 1 --backend soft \
		--soft-mode record -- "$@"
	[ "$rc" = 0 ] || { cat "$work/err"; fail "$name: btrace exited $rc"; }
	python3 -c 'import json, sys
text = open(sys.argv[1]).read()
s = json.loads(text[text.index("{\"btrace\""):])["stats"]
print(s["ring_bytes"], s["ring_read"], s["stops"], s["branches"])' \
		"$work/out.json" >"$work/$name.stats" || fail "$name: no stats"
}

check_equal() {
	local name=$1 bytes read stops branches
	read -r bytes read stops branches <"$work/$name.stats"
	echo "$name: $branches branches, $stops stops, $bytes bytes decoded, $read read"
	[ "$bytes" -gt 1000 ] || fail "$name: only $bytes bytes of ring decoded"
	[ "$read" = "$bytes" ] || fail "$name: $read bytes read for $bytes decoded"
}

run_stats small 64K "$TARGETS/compute" 16
run_stats big 64M "$TARGETS/compute" 16
check_equal small
check_equal big
read -r b1 r1 s1 _ <"$work/small.stats"
read -r b2 r2 s2 _ <"$work/big.stats"
# The same run but for its stops (a loaded machine gave one run four more
# once): a stop that takes the thread out and back in adds the tracer's
# own records, a REC_SYNC and a REC_TNT, 10 bytes at most.
ds=$((s1 > s2 ? s1 - s2 : s2 - s1))
dr=$((r1 > r2 ? r1 - r2 : r2 - r1))
[ "$dr" -le $((10 * ds)) ] ||
	fail "64 KiB ring: $r1 bytes read in $s1 stops, 64 MiB ring: $r2 in $s2"

run_stats threads 64M "$TARGETS/rec_threads" sum 3 2000
check_equal threads

# A ring that wraps many times between stops.
run_stats wraps 4K "$TARGETS/compute" 16
read -r bytes read stops branches <"$work/wraps.stats"
echo "wraps: $branches branches, $stops stops, $bytes bytes decoded, $read read"
[ "$read" -ge "$bytes" ] || fail "wraps: $read bytes read, $bytes decoded"
[ "$read" -le $((stops * 4096)) ] || fail "wraps: $read bytes read in $stops stops"
exit 0
