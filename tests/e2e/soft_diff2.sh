#!/usr/bin/env bash
# The second third of soft_diff.sh's targets (see there).
SOFT_DIFF_PART=2 exec bash "$TESTDIR/e2e/soft_diff.sh"
