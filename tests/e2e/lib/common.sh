# SPDX-License-Identifier: MIT
# The setup every e2e test sources: a scratch directory of its own ($work),
# removed on exit with every process the test registered in PIDS killed,
# and small helpers.  Tests leave nothing behind.
#
# A test's whole prologue is then
#	. "$TESTDIR/e2e/lib/common.sh"
#	need_cmd gdb python3		# skips (77) with the reason if missing
# and it ends with exit 0 (pass), fail "why" (1) or skip "why" (77).  A
# test that exec's would lose the clean-up: run the command and exit with
# its status instead.
set -u
work=$(mktemp -d "${TMPDIR:-/tmp}/btrace-e2e.XXXXXX") ||
	{ echo "FAIL: no scratch directory"; exit 1; }
PIDS=()
e2e_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	case $work in
	"${TMPDIR:-/tmp}"/btrace-e2e.*) rm -rf "$work" ;;
	esac
}
trap e2e_cleanup EXIT
export PYTHONPATH="$TESTDIR/e2e/lib${PYTHONPATH:+:$PYTHONPATH}"

fail() {
	echo "FAIL: $*"
	exit 1
}

# Skip the test: its reason is the last line it prints (tests/run-tests).
skip() {
	echo "$*"
	exit 77
}

# Skip unless every command named is installed.
need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null || skip "$c is not installed"
	done
}

# The "FROM -> TO" pairs (and "[gap]" lines) of btrace's text output on
# stdin, addresses only.
branch_pairs() {
	awk '/-- gap:/ { print "[gap]"; next }
	     / -> / { for (i = 1; i <= NF; i++) if ($i == "->") to = $(i + 1)
		      for (i = 1; i <= NF; i++) if ($i ~ /^0x/) { print $i " -> " to; break } }'
}

# gone_within PID [TENTHS]: 0 once process PID is gone, within TENTHS
# tenths of a second (default 100); 1 if it is still there.
gone_within() {
	local i
	for i in $(seq 1 "${2:-100}"); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	! kill -0 "$1" 2>/dev/null
}

# The exit status of "$@" run natively, as a shell reports it.
native_status() {
	("$@") >/dev/null 2>&1
	echo $?
}

# The session of process $1 (field 6 of its stat, counted after the name).
sid_of() {
	local rest
	rest=$(cut -d')' -f2- "/proc/$1/stat" 2>/dev/null) || return 1
	set -- $rest
	echo "$4"
}

# Fail if a process of this test's session (tests/run-tests gives each
# test one: tests running beside it may run the same program) still runs
# the executable $1.
no_leftovers() {
	local p exe sid
	sid=$(sid_of $$)
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		[ "$exe" = "$1" ] || continue
		[ "$(sid_of "${p#/proc/}")" = "$sid" ] || continue
		fail "process ${p#/proc/} still runs $1"
	done
	return 0
}

# btrace run "$@" with JSON into $work/out.json, stderr into $work/err;
# sets $rc.
btrace_json() {
	"$BTRACE" run --json "$@" >"$work/out.json" 2>"$work/err"
	rc=$?
}

# Fail unless $rc is $1; show btrace's stderr.
expect_rc() {
	[ "$rc" = "$1" ] && return 0
	cat "$work/err"
	fail "btrace exited $rc, expected $1"
}

# follow_same NAME COMMAND...: under `btrace run --follow-fork`, COMMAND
# exits 0 with the output it has untraced and the stop is the tree's exit;
# prints "ok" with its branches and stops.  Returns 1 (said why) if not.
# $work/report keeps btrace's JSON for more checks.
follow_same() {
	local name=$1 want got rc
	shift
	want=$("$@" 2>&1)
	got=$(timeout 600 "$BTRACE" run --follow-fork -o "$work/report" --json \
		-- "$@" 2>"$work/err")
	rc=$?
	if [ $rc != 0 ] || [ "$got" != "$want" ]; then
		echo "FAIL $name: exit $rc, output '$got', untraced '$want'"
		cat "$work/err" "$work/report"
		return 1
	fi
	python3 - "$work/report" "$name" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
stop, stats = doc["stop"], doc["stats"]
if stop["reason"] != "exit" or stop["status"] != 0:
    sys.exit("FAIL %s: stopped %s" % (sys.argv[2], stop))
print("ok   %s: %d branches, %d stops (%.4f per branch)" %
      (sys.argv[2], stats["branches"], stats["stops"],
       stats["stops"] / max(stats["branches"], 1)))
PY
}

# softdiff_check [-n] [-T SECONDS] SOFTDIFF-ARGS...: the histories of a
# run against single-stepping's (tools/softdiff), under setarch -R so that
# both runs see the same addresses (-n: not), within 900 s (-T: another
# limit); prints "ok" with the recorder's figures, or "FAIL" with the end
# of softdiff's log and one more failure counted in $fails.  The log stays
# in $work/softdiff.log until the next check.
softdiff_check() {
	local limit=900 log=$work/softdiff.log
	local -a pre=(setarch -R)
	while :; do
		case $1 in
		-n) pre=(); shift ;;
		-T) limit=$2; shift 2 ;;
		*) break ;;
		esac
	done
	if timeout "$limit" "${pre[@]}" "$TOOLS/softdiff" "$@" </dev/null \
		>"$log" 2>&1; then
		echo "ok   ${*#*-- }: $(grep -a '^record' "$log")"
	else
		echo "FAIL ${*#*-- }"
		tail -n 40 "$log" | sed 's/^/     /'
		fails=$((${fails:-0} + 1))
	fi
}
