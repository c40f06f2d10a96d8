# SPDX-License-Identifier: MIT
# Sourced by tests/e2e/gdbserver_*.sh after common.sh: Debian's GDB in
# batch mode against btrace gdbserver.
need_cmd gdb

GS_SRC=$TESTDIR/targets/gdbsrv_dyn.c
GS_PROG=$TARGETS/gdbsrv_dyn

# The line of the comment marker $1 in gdbsrv_dyn.c.
line_of() {
	grep -n "$1" "$GS_SRC" | head -n 1 | cut -d: -f1
}

# gsgdb OUT "PROGRAM ARGS" GDB-ARGS...: GDB on the stub over stdio, the
# program's own symbols; GDB's and the stub's output into OUT.
gsgdb() {
	local out=$1 prog=$2
	shift 2
	timeout 300 gdb -nx -batch -ex "set sysroot /" -ex "set remotetimeout 60" \
		-ex "target remote | $BTRACE gdbserver - $prog" "$@" \
		"${prog%% *}" >"$out" 2>&1 </dev/null
}

# expect FILE ERE WHAT: fail, showing FILE, unless a line matches.
expect() {
	grep -Eq -e "$2" "$1" || { sed 's/^/    /' "$1"; fail "$3"; }
}

# expect_not FILE ERE WHAT
expect_not() {
	! grep -Eq -e "$2" "$1" || { sed 's/^/    /' "$1"; fail "$3"; }
}

# section FILE NAME: the lines between "echo @@NAME" and the next "@@"
# marker of GDB's output in FILE.
section() {
	sed -n "/^@@$2\$/,/^@@/p" "$1" | sed '1d;$d'
}

# No GDB crash, no protocol trouble (a saved trace refusing to run is
# an answer, not trouble).
gdb_clean() {
	grep -v "A saved trace does not run" "$1" >"$1.clean"
	expect_not "$1.clean" "internal-error|Remote connection closed|Remote failure|Bogus trace status|Ignoring packet error|Remote replied unexpectedly" \
		"GDB or the protocol went wrong"
}
