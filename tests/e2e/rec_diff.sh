#!/usr/bin/env bash
# The recorder against single-stepping on real programs of the
# distribution: each thread's full history (from, to, kind, flags,
# instruction counts) must be the same, branch for branch.  Without
# address randomization (setarch -R) so that both runs see the same
# addresses; perl with a fixed hash seed so that both take the same path;
# bash's clock reads in the vDSO may retry differently (softdiff -V).
# python3, too slow to single-step, runs to its end under the recorder with
# its output and exit status as without btrace, every branch of the run
# decoded (a ring big enough for all of them).
# In three parts (REC_DIFF_PART 1, the default; 2 and 3: rec_diff2.sh,
# rec_diff3.sh), each well within a test's 10 minutes where the VM makes
# stepping's stops slow: true, gzip, xz; sqlite3, perl; bash, python3.
. "$TESTDIR/e2e/lib/common.sh"
printf 'a line to compress\n%.0s' $(seq 1 50) >"$work/in.txt"
export PERL_HASH_SEED=0 PERL_PERTURB_KEYS=0 PYTHONHASHSEED=0
fails=0

for p in /bin/true /usr/bin/gzip /usr/bin/xz /usr/bin/sqlite3 /usr/bin/perl \
	/usr/bin/bash /usr/bin/python3; do
	[ -x "$p" ] || { echo "no $p: the Makefile installs it"; exit 1; }
done
case ${REC_DIFF_PART:-1} in
1)
	softdiff_check -m record -- /bin/true
	softdiff_check -m record -- gzip -c "$work/in.txt"
	softdiff_check -m record -- xz --version
	exit $fails ;;
2)
	softdiff_check -m record -- sqlite3 :memory: 'select 1+1'
	softdiff_check -m record -- perl -e 'my %h = (a => 1, b => 2); print join(",", sort keys %h), "\n"'
	exit $fails ;;
esac
softdiff_check -V -m record -- bash -c 'for i in 1 2 3; do x=$((x + i)); done; echo $x'
out=$("$BTRACE" run --soft-mode record --buffer-size 256M --json --last 4 -- \
	python3 -c 'print(6 * 7)' 2>"$work/py.err")
rc=$?
if [ $rc = 0 ] && python3 - "$out" <<'PY'
import json, sys
text = sys.argv[1]
assert text.startswith("42\n"), text[:40]
doc = json.loads(text[3:])
assert doc["stop"]["reason"] == "exit" and doc["stop"]["status"] == 0, doc["stop"]
th = doc["threads"][0]
assert th["lost"] == 0 and not any(b["kind"] == "gap" for b in th["branches"]), th
assert doc["stats"]["branches"] > 1000000, doc["stats"]
assert doc["stats"]["stops"] < doc["stats"]["branches"] / 100, doc["stats"]
print("ok   python3 -c 'print(6 * 7)':", doc["stats"])
PY
then :; else
	echo "FAIL python3 (exit $rc)"; cat "$work/py.err"; fails=$((fails + 1))
fi
[ $fails = 0 ]
