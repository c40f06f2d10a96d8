#!/usr/bin/env bash
# The recorder with module filters and --from: untraced code runs natively
# (the translation leaves to it without a stop and comes back at an int3 on
# a traced function's entry or a translated call's return site), and the
# history of the traced modules is the stepped one filtered the same way,
# branch for branch (softdiff -o/-x: the branch into untraced code, then
# an untraced gap to where control came back); --from against the fast
# mode's, and in a followed tree (--until too).  Without address randomization, as rec_diff.
. "$TESTDIR/e2e/lib/common.sh"
fails=0

q="$TARGETS/qsort_dyn" h="$TARGETS/libc_heavy_dyn" c="$TARGETS/compute"
# qsort in libc calls back into the program's compare (which crashes)
softdiff_check -m record -o qsort_dyn -- "$q"
softdiff_check -m record -x 'libc.so*' -- "$q"
# the work in libc, called from a loop of the program's
softdiff_check -m record -o libc_heavy_dyn -- "$h" 3 4096
softdiff_check -m record -x 'libc.so*' -- "$h" 3 4096
# signals taken inside libc with the handler in the program
softdiff_check -m record -o sig_dyn -- "$TARGETS/sig_dyn"
# a stripped program of the distribution: its entry point, functions of
# its unwind table and its constructors and destructors catch the way back
printf 'a line to compress\n%.0s' $(seq 1 50) >"$work/in.txt"
softdiff_check -m record -o gzip -- gzip -c "$work/in.txt"
softdiff_check -m record -x 'libc.so*' -- gzip -c "$work/in.txt"
# threads that start in libc, run the program's function, and crash
softdiff_check -t -m record -o thread_crash -- "$TARGETS/thread_crash"
# a followed fork child runs untraced code natively too (the native exits
# and re-entry int3s came with its memory): both processes against the
# stepped histories filtered the same way; the child crashing in the
# comparator libc's qsort calls (where its parent had got to is timing)
f="$TARGETS/fork_filter_dyn"
softdiff_check -k -m record -o fork_filter_dyn -- "$f"
softdiff_check -k -m record -x 'libc.so*' -- "$f"
softdiff_check -k -t -m record -o fork_filter_dyn -- "$f" crash
# both run /bin/true through posix_spawn, a vfork child in their memory
# with their re-entry int3s in it (lifted while it runs there, not taken
# out): the parent's history holds (-S; the spawned programs' maps are
# not the parent's, which softdiff filters with)
softdiff_check -k -S -m record -o fork_filter_dyn -- "$f" spawn
# --from: native until the symbol, then recorded
softdiff_check -b fast -m record -F fib -- "$c" 5
softdiff_check -b fast -m record -F main -o qsort_dyn -- "$q"

# btrace run: the callback's way back into compare is an untraced gap,
# nothing of libc recorded, and the recorder did the work
out=$("$BTRACE" run --soft-mode record --only qsort_dyn --json --last 64 -- "$q" \
	2>"$work/run.err")
python3 - "$out" <<'PY' || { echo "FAIL btrace run --only"; cat "$work/run.err"; fails=$((fails + 1)); }
import json, sys
doc = json.loads(sys.argv[1])
assert doc["stop"]["reason"] == "signal", doc["stop"]
br = doc["threads"][0]["branches"]
gaps = [b for b in br if b["kind"] == "gap"]
assert gaps and gaps[-1] is br[-1], br[-3:]
assert "compare" in json.dumps(br[-1]), br[-1]
# nothing of libc's: without the filter qsort alone takes hundreds
assert doc["stats"]["branches"] < 50, doc["stats"]
print("ok   btrace run --only qsort_dyn:", doc["stats"])
PY
# PLT slots bound before main (LD_BIND_NOW: a program linked -z now): a
# call through one into untraced code leaves by the lookup's native exit,
# as a lazily bound one does, not by a stop at each call (the recorder's
# icbit is for traced targets only): the same stops, and the history holds
LD_BIND_NOW=1 softdiff_check -m record -o libc_heavy_dyn -- "$h" 3 4096
for now in "" 1; do
	LD_BIND_NOW=$now "$BTRACE" run --soft-mode record --only libc_heavy_dyn \
		--json -o "$work/now$now.json" -- "$h" 40 4096 >/dev/null 2>&1
done
python3 - "$work/now.json" "$work/now1.json" <<'PY' ||
import json, sys
lazy, now = (json.load(open(f))["stats"]["stops"] for f in sys.argv[1:3])
assert lazy > 40 and now < lazy + 20, (lazy, now)
print("ok   --only, PLT bound before main: %d stops, %d lazily bound" % (now, lazy))
PY
	{ echo "FAIL --only with LD_BIND_NOW"; fails=$((fails + 1)); }

# --until in an untraced library: native code meets the breakpoint
out=$("$BTRACE" run --soft-mode record --only qsort_dyn --until qsort --last 3 -- "$q" 2>&1)
if echo "$out" | grep -q '^stop: breakpoint 1' && echo "$out" | grep -q '=> .* qsort '; then
	echo "ok   --only --until qsort"
else
	echo "FAIL --only --until qsort"; echo "$out"; fails=$((fails + 1))
fi

# A program exec'd in a followed tree gets the filters on its own map: the
# crash of fork_filter_dyn's child under bash is the stop, and its history
# holds the executable's branches only (libc's qsort and the loader are
# untraced gaps; the executable's code is far smaller than 64 KiB)
"$BTRACE" run --follow-fork --only fork_filter_dyn --json -o "$work/ex.json" \
	--last 4000 -- bash -c "$f crash; echo \$?" >"$work/ex.out" 2>"$work/ex.err"
rc=$?
python3 - "$work/ex.json" "$rc" "$(cat "$work/ex.out")" <<'PY'
import json, sys
doc, rc, out = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
assert rc == "0" and out == "child killed 11\n3", (rc, out)
assert doc["stop"]["signal"] == "SIGSEGV" and doc["stop"]["tid"] == doc["pid"] != doc["root_pid"], doc["stop"]
br = [b for b in doc["threads"][0]["branches"]]
own = [int(b["from"], 16) for b in br if b["kind"] != "gap"]
gaps = [b for b in br if b["kind"] == "gap"]
assert own and len(gaps) >= 5, br
assert max(own) - min(own) < 0x10000, [hex(a) for a in own if a - min(own) >= 0x10000][:5]
print("ok   exec'd child under --only: %d branches of its own, %d gaps" %
      (len(own), len(gaps)))
PY
[ $? = 0 ] ||
	{ echo "FAIL exec'd child under --only"; cat "$work/ex.err"; fails=$((fails + 1)); }

# bash (untraced) forks children that run natively and exec gzip: each
# gzip records its own code, exactly what a gzip traced alone records
# (a native thread's exec starts the new program's filters; no libc),
# and the output is the untraced run's
loop='for i in 1 2 3; do gzip -c /etc/services | wc -c; done'
"$BTRACE" run --only gzip --json -o "$work/gz1.json" -- gzip -c /etc/services \
	>/dev/null 2>"$work/gz.err"
want=$(bash -c "$loop")
got=$("$BTRACE" run --follow-fork --only gzip --json -o "$work/gz.json" \
	-- bash -c "$loop" 2>>"$work/gz.err")
rc=$?
python3 - "$work/gz1.json" "$work/gz.json" <<'PY' && [ $rc = 0 ] && [ "$got" = "$want" ]
import json, sys
one, tree = (json.load(open(f))["stats"] for f in sys.argv[1:3])
for k in ("branches", "instructions"):
    assert tree[k] == 3 * one[k] > 0, (k, one, tree)
print("ok   bash loop of gzip | wc under --only gzip: %d branches, %d stops "
      "(3 x gzip alone)" % (tree["branches"], tree["stops"]))
PY
[ $? = 0 ] ||
	{ echo "FAIL gzip under --only: exit $rc, '$got' ('$want')"; cat "$work/gz.err"; fails=$((fails + 1)); }

# Tracing ends at the parent's crash while its child goes on: the child's
# copies of the re-entry int3s are taken out too (its callbacks from libc
# would meet them: SIGTRAP), and it ends as without btrace
want=$("$f" parent 2>&1)
got=$("$BTRACE" run --follow-fork --only fork_filter_dyn -o "$work/parent.txt" \
	-- "$f" parent 2>/dev/null)
rc=$?
if [ $rc = 139 ] && [ "$got" = "$want" ] && echo "$got" | grep -q "child done"; then
	echo "ok   the child outlives tracing under --only"
else
	echo "FAIL the child outlives tracing: exit $rc, '$got' ('$want')"
	fails=$((fails + 1))
fi

# The same in a tree (bash forks, the child execs fork_filter_dyn), where
# the grandchild's first stop may come before its parent's fork event:
# its recorder, made there, and its int3s hold; so does --from, in each
# process: the program exec'd runs natively until it reaches compare in
# its own modules (the first process, bash, has none), its history from
# there on, alone or with --only
cmd="$f parent; echo \$?"
want=$(bash -c "$cmd" 2>/dev/null)
for opts in "--only fork_filter_dyn" "--from compare" \
	    "--from compare --only fork_filter_dyn" \
	    "--only fork_filter_dyn" "--from compare"; do
	got=$("$BTRACE" run --follow-fork $opts --json -o "$work/tf.json" \
		--last 100000 -- bash -c "$cmd" 2>"$work/tf.err")
	rc=$?
	python3 - "$work/tf.json" "$opts" <<'PY'
import json, sys
doc, opts = json.load(open(sys.argv[1])), sys.argv[2]
assert doc["stop"]["signal"] == "SIGSEGV" and doc["pid"] != doc["root_pid"], doc["stop"]
br = doc["threads"][0]["branches"]
own = [int(b["from"], 16) for b in br if b["kind"] != "gap"]
if "--only" in opts:	# the executable's code only
    assert own and max(own) - min(own) < 0x10000, [hex(a) for a in own][:5]
if "--from" in opts:
    # the exec's gap (the thread ran bash's code natively), then nothing
    # until compare
    assert br[0]["kind"] == "gap" and br[0]["to_sym"] == "_start", br[:2]
    assert br[1]["kind"] == "gap" and br[1]["gap"] == "trace disabled" and \
        br[1]["to_sym"] == "compare", br[:3]
    assert br[2]["from_sym"].startswith("compare+"), br[:3]
print("ok   bash -c 'fork_filter_dyn parent; echo $?' under %s: %d branches"
      % (opts, len(own)))
PY
	if [ $? != 0 ] || [ $rc != 0 ] || [ "$got" != "$want" ]; then
		echo "FAIL tree under $opts: exit $rc, '$got' ('$want')"
		cat "$work/tf.err"; fails=$((fails + 1))
	fi
done

# --until in a program exec'd in the tree: found in its own modules (bash
# has no compare), an int3 of that process's own, a breakpoint stop there
# (not a step of the followed process that ran into it: the program went
# on past it and crashed before), with --from too; then the tree goes on
# as untraced, the int3s gone from the program and its fork child
cmd="$f; echo \$?"
want=$(bash -c "$cmd" 2>/dev/null)
for opts in "--until compare" "--until compare --from main"; do
	got=$("$BTRACE" run --follow-fork $opts --json -o "$work/tu.json" --last 100000 \
		-- bash -c "$cmd" 2>"$work/tu.err")
	rc=$?
	python3 - "$work/tu.json" "$opts" <<'PY'
import json, sys
doc, opts = json.load(open(sys.argv[1])), sys.argv[2]
stop = doc["stop"]
assert stop["reason"] == "break" and stop["sym"] == "compare", stop
assert stop["tid"] == doc["pid"] != doc["root_pid"], doc
br = doc["threads"][0]["branches"]
assert br[-1]["kind"] == "indirect call" and br[-1]["to_sym"] == "compare", br[-3:]
if "--from" in opts:
    gaps = [b for b in br if b.get("gap") == "trace disabled"]
    assert len(gaps) == 1 and gaps[0]["to_sym"] == "main", gaps
print("ok   bash -c 'fork_filter_dyn; echo $?' under %s: breakpoint stop "
      "at compare in pid %d, %d branches" % (opts, doc["pid"], len(br)))
PY
	if [ $? != 0 ] || [ $rc != 0 ] || [ "$got" != "$want" ]; then
		echo "FAIL --until in the tree under $opts: exit $rc, '$got' ('$want')"
		cat "$work/tu.err"; fails=$((fails + 1))
	fi
done
[ $fails = 0 ]
