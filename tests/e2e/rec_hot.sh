#!/usr/bin/env bash
# Hot code translated again to carry more outcomes (lib/rec/rec_hot.c),
# against single-stepping:
# - found hot where a ring wraps: hot_loop with a 64 KiB ring, a block
#   hot in two samples (not eight: stepped, the loop cannot run long
#   enough), the last branches both runs kept (softdiff -L: the rings hold
#   a round or two) the same, blocks translated again;
# - BTRACE_TEST_HOT=1, every block that ran translated again at the next
#   stop: programs of the distribution and targets with code written at
#   run time, signals, fork, threads, branch for branch (gzip's and the
#   rewritten code's translations falling through into their successors'
#   where they can: lib/rec/rec_link.c's thread_point; thread_lead's
#   conditionals into the next one's across its taken side's int3, the
#   taken sides that first run later going out through that int3);
# - with a code cache, whose translations mark where they first run
#   (lib/rec/rec_profile.c), BTRACE_TEST_HOT=1 translates every block that
#   ran again without its marks at the next stop: cold and warm, branch for
#   branch, marks dropped in the cold run;
# - python3's loop with a 1 MiB ring, as it runs by default: its output
#   and exit status as untraced, its last branches without a gap, blocks
#   translated again, and (with a code cache, its first run) marks
#   dropped; the same with a second thread asleep meanwhile (its code
#   translated again while the other thread is in the translation).
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3 gzip perl
export BTRACE_TEST_HOT_LOG=1 PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0
printf 'a line to compress\n%.0s' $(seq 1 50) >"$work/in.txt"
fails=0

# some PATTERN FIELD WHAT ONE: the last check's log has PATTERN, and the
# numbers in its field FIELD add up to more than none (WHAT; ONE: just one)
some() {
	local n
	n=$(grep -ao "$1" "$work/softdiff.log" |
		awk -v f="$2" '{ s += $f } END { print s + 0 }')
	if [ "$n" -gt 0 ]; then
		echo "     $n $3"
	else
		echo "FAIL no $4"
		fails=$((fails + 1))
	fi
}

hot_made() {	# the last check made blocks hot
	some 'test: [0-9]* blocks translated again' 2 \
		'blocks translated again' 'block translated again'
}

marks_dropped() {	# the last check dropped marks
	some 'test: [0-9]* blocks translated again (hot), [0-9]* marks' 7 \
		'marks dropped' 'mark dropped'
}

jumps_threaded() {	# the last check made fall-through jumps nops
	some 'marks dropped, [0-9]* jumps threaded' 3 \
		'jumps threaded' 'jump threaded'
}

lead_exits() {	# ... into conditionals' exits, and went out through them
	some "[0-9]* into a conditional's exit" 1 \
		"jumps threaded into a conditional's exit" \
		"jump threaded into a conditional's exit"
	some '[0-9]* exits there' 1 'exits taken in a threaded nop' \
		'exit taken in a threaded nop'
}

BTRACE_TEST_HOT_SAMPLES=2 \
	softdiff_check -L -B 64K -m record -- "$TARGETS/hot_loop" 16 2000
hot_made

export BTRACE_TEST_HOT=1
for args in "gzip -c $work/in.txt" \
	"perl -e print(join(q(,),sort(keys(%{{a=>1,b=>2}}))))" \
	"$TARGETS/jit_rewrite" "$TARGETS/jit_wx" "$TARGETS/rec_remap" \
	"$TARGETS/sighandler" "$TARGETS/sig_restart" "$TARGETS/recursion" \
	"$TARGETS/jumptable" "$TARGETS/thread_lead"; do
	# shellcheck disable=SC2086 # a program and its words
	softdiff_check -m record -- $args
	hot_made
	case $args in gzip*|*jit_rewrite) jumps_threaded ;; esac
	case $args in *thread_lead) lead_exits ;; esac
done
softdiff_check -n -T 300 -k -m record -- "$TARGETS/rec_fork"
hot_made
softdiff_check -t -m record -- "$TARGETS/rec_threads"
hot_made
# seven threads running at once, their code translated again while the
# others are in it (the old translations' first instructions stay)
softdiff_check -t -m record -- "$TARGETS/rec_lookup_threads"
hot_made

# with a code cache: cold (marks dropped), then warm
for args in "-- gzip -c $work/in.txt" "-- $TARGETS/jit_rewrite" \
	"-t -- $TARGETS/rec_threads" "-n -T 300 -k -- $TARGETS/rec_fork"; do
	rm -rf "$work/cache"
	for run in cold warm; do
		# shellcheck disable=SC2086 # options, a program and its words
		BTRACE_CODE_CACHE=$work/cache softdiff_check ${args%%--*} \
			-m record -- ${args#*-- }
		[ $run = warm ] || marks_dropped
	done
done
unset BTRACE_TEST_HOT

for pre in "" "import threading, time
threading.Thread(target=time.sleep, args=(3,), daemon=True).start()
"; do
loop="${pre}s = 0
for i in range(300000):
    s += i % 7
print(s)"
want=$(python3 -c "$loop")
BTRACE_CODE_CACHE=$work/pycache \
"$BTRACE" run --soft-mode record --buffer-size 1M --json --last 2000 \
	-- python3 -c "$loop" >"$work/py.out" 2>"$work/py.err"
rc=$?
if [ $rc = 0 ] && python3 - "$work/py.out" "$want" "$work/py.err" \
	"$([ -z "$pre" ] && echo cold || echo warm)" <<'PY'
import json, re, sys
text, want, err = open(sys.argv[1]).read(), sys.argv[2], open(sys.argv[3]).read()
assert text.startswith(want + "\n"), (text[:40], want)
doc = json.loads(text[len(want) + 1:])
assert doc["stop"]["reason"] == "exit" and doc["stop"]["status"] == 0, doc["stop"]
th = [t for t in doc["threads"] if t["tid"] == doc["stop"]["tid"]][0]
assert len(th["branches"]) == 2000, len(th["branches"])
assert not any("gap" in b for b in th["branches"]), "a gap"
st = doc["stats"]
assert st["stops"] < st["branches"] / 100, st
made = sum(int(n) for n in re.findall(r"test: (\d+) blocks translated again", err))
assert made > 0, err
marks = sum(int(n) for n in re.findall(r"(\d+) marks dropped", err))
assert marks > 0 or sys.argv[4] == "warm", err
print("ok   python3 loop, 1 MiB ring, %d threads:" % len(doc["threads"]),
      made, "blocks translated again,", marks, "marks dropped,", st)
PY
then :; else
	echo "FAIL python3 loop (exit $rc)"; tail -5 "$work/py.err"
	fails=$((fails + 1))
fi
done
[ $fails = 0 ]
