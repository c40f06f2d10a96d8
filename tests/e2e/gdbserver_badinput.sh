#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# btrace gdbserver driven with raw bytes (gdbserver_badinput.py): bad
# packets get errors or empty replies, never a crash; a client that goes
# away mid-run kills a launched process and leaves an attached one running.
. "$TESTDIR/e2e/lib/common.sh"
need_cmd python3
timeout 600 python3 "$TESTDIR/e2e/gdbserver_badinput.py" "$BTRACE" "$TARGETS"
