#!/usr/bin/env bash
# btrace gdbserver behaving as GDB's own gdbserver does, as GDB sees it:
# `set record btrace bts buffer-size` honoured and reported.
. "$TESTDIR/e2e/lib/common.sh"
. "$TESTDIR/e2e/lib/gdbserver.sh"

LEAF=$TARGETS/gdbsrv_leaf

# 1. bts buffer-size 1: a page, as gdbserver rounds it; `info record`
#    reports it before and after the trace filled it.
gsgdb "$work/size.out" "$LEAF" -ex "break middle" -ex continue \
	-ex "set record btrace bts buffer-size 1" -ex "record btrace bts" \
	-ex 'echo @@INFO1\n' -ex "info record" -ex continue \
	-ex 'echo @@INFO2\n' -ex "info record" -ex 'echo @@END\n' -ex kill
gdb_clean "$work/size.out"
[ "$(section "$work/size.out" INFO1 | grep -c '^Buffer size: 4kB\.$')" = 1 ] ||
	{ cat "$work/size.out"; fail "info record: the buffer is not the page asked for"; }
[ "$(section "$work/size.out" INFO2 | grep -c '^Buffer size: 4kB\.$')" = 1 ] ||
	{ cat "$work/size.out"; fail "info record: the buffer size changed"; }
no_leftovers "$LEAF"
echo ok
