#!/usr/bin/env bash
# The last third of soft_diff.sh's targets (see there).
SOFT_DIFF_PART=3 exec bash "$TESTDIR/e2e/soft_diff.sh"
