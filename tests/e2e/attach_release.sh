# Attach to a running computation 20 times under the recorder, stopping at
# a breakpoint or by SIGINT in turn (then often inside its nanosleep): each
# attach records (branches, and about as few stops as the first one: no
# stepping for want of room), and after each detach the program's mappings
# are what they were before the first attach (zones, tables and rings
# unmapped), its virtual size the same, its resident size within a few
# pages, and the CPUs it may run on those it had (BTRACE_PIN=1: the
# recorder binds it to the tracer's CPU at its stops, lib/tracer/pin.c).
# It ends with the checksum of an untraced run.
. "$(dirname "$0")/sess_common.bash"

ROUNDS=200000
want=$("$TARGETS/sess_checksum" $ROUNDS 0 | tail -n 1)
start_target sum "$TARGETS/sess_checksum" $ROUNDS 2000
sleep 0.1
maps0=$(cat "/proc/$TPID/maps")
vsz0=$(awk '/^VmSize:/ { print $2 }' "/proc/$TPID/status")
rss0=$(awk '/^VmRSS:/ { print $2 }' "/proc/$TPID/status")
cpus0=$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$TPID/status")
export BTRACE_PIN=1
first=
for i in $(seq 1 20); do
	log=$WORK/attach.$i
	if [ $((i % 2)) = 1 ]; then
		"$BTRACE" attach --backend soft --soft-mode record --json --batch \
			--break sess_round_end -ex 'last 3' "$TPID" >"$log" 2>&1 ||
			{ cat "$log"; fail "cycle $i"; }
	else
		"$BTRACE" attach --backend soft --soft-mode record --json --batch \
			-ex 'last 3' "$TPID" >"$log" 2>&1 &
		bt=$!
		PIDS+=("$bt")
		wait_for "$log" 'attached to process'
		sleep 0.05
		kill -INT "$bt"
		wait "$bt" || { cat "$log"; fail "cycle $i: btrace failed"; }
	fi
	grep -q "detached from process $TPID" "$log" || { cat "$log"; fail "cycle $i: not detached"; }
	not_traced "$TPID"
	stats=$(grep '"stats"' "$log" | tail -n 1)
	branches=$(echo "$stats" | sed -n 's/.*"branches": \([0-9]*\).*/\1/p')
	stops=$(echo "$stats" | sed -n 's/.*"stops": \([0-9]*\).*/\1/p')
	[ -n "$branches" ] && [ "$branches" -gt 0 ] ||
		{ cat "$log"; fail "cycle $i: nothing recorded"; }
	[ -n "$first" ] || first=$stops
	# Stepping for want of a zone costs a stop per instruction: hundreds.
	[ "$stops" -le $((first + 40)) ] ||
		{ cat "$log"; fail "cycle $i: $stops stops (the first attach: $first)"; }
	maps=$(cat "/proc/$TPID/maps")
	[ "$maps" = "$maps0" ] || {
		diff <(echo "$maps0") <(echo "$maps")
		fail "cycle $i: mappings left behind"
	}
	vsz=$(awk '/^VmSize:/ { print $2 }' "/proc/$TPID/status")
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$TPID/status")
	[ "$vsz" = "$vsz0" ] || fail "cycle $i: VmSize $vsz kB, was $vsz0 kB"
	cpus=$(awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$TPID/status")
	[ "$cpus" = "$cpus0" ] || fail "cycle $i: CPUs $cpus, were $cpus0"
	# Pages of the program's code read to translate it may become resident.
	[ "$rss" -le $((rss0 + 256)) ] ||
		fail "cycle $i: VmRSS $rss kB, was $rss0 kB"
done
echo "20 attaches: $first stops the first time, $stops the last; VmSize $vsz0 kB, VmRSS $rss0 -> $rss kB"
python3 "$TESTDIR/e2e/sess_codecheck.py" "$TPID" || fail "code bytes changed"
kill -USR1 "$TPID"
wait "$TPID" || fail "target exit status $?"
got=$(tail -n 1 "$WORK/sum.out")
[ "$got" = "$want" ] || fail "checksum differs: $got, untraced $want"

# The same of a process whose threads start and end all the time
# (rec_threads: rounds of eight workers): at the stop-all of a detach a
# thread is often stopped for its own step with the stop-all's interrupt
# still to come, or held with a signal of the program's; the recorder's
# memory is given back through it (rec_room.c), where before it stayed
# mapped at most such detaches.  Its workers' stacks come and go, so what
# is compared is what the recorder maps (recorder_maps).
start_target thr "$TARGETS/rec_threads" sum 0 500
sleep 0.1
ours0=$(recorder_maps "$TPID")
for i in $(seq 1 12); do
	log=$WORK/thr.$i
	"$BTRACE" attach "$TPID" </dev/null >"$log" 2>&1 &
	bt=$!
	PIDS+=("$bt")
	wait_for "$log" 'attached to process'
	sleep 0.$((i % 4 + 1))
	[ -n "$(recorder_maps "$TPID")" ] || fail "threads, cycle $i: no recorder mappings while attached"
	kill -INT "$bt"
	wait "$bt" || { cat "$log"; fail "threads, cycle $i: btrace failed"; }
	not_traced "$TPID"
	o=$(recorder_maps "$TPID")
	[ "$o" = "$ours0" ] || {
		echo "$o"
		fail "threads, cycle $i: the recorder's mappings left behind"
	}
done
rec_threads_check thr
echo "12 attaches of rec_threads: none of the recorder's mappings left; $ROUNDS rounds, sum as untraced"
