# SPDX-License-Identifier: MIT
# Sourced by tests/e2e/run_*.sh: a scratch directory and small helpers.
set -u
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PYTHONPATH="$TESTDIR/e2e/lib${PYTHONPATH:+:$PYTHONPATH}"

fail() {
	echo "FAIL: $*"
	exit 1
}

# The exit status of "$@" run natively, as a shell reports it.
native_status() {
	("$@") >/dev/null 2>&1
	echo $?
}

# Fail if a process still runs the executable $1.
no_leftovers() {
	local p exe
	for p in /proc/[0-9]*; do
		exe=$(readlink "$p/exe" 2>/dev/null) || continue
		[ "$exe" = "$1" ] && fail "process ${p#/proc/} still runs $1"
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
