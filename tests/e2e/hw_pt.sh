#!/usr/bin/env bash
# Real pt capture end to end: a crash chain checked branch by branch against
# a single-step trace, and a crash in a thread created under tracing.
# Skips (77) with doctor's reason where the pt backend cannot trace.
backend=pt
. "$TESTDIR/e2e/lib/hw.sh"
hw_crash_null
hw_thread_crash
echo ok
