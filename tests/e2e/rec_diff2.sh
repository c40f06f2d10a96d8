#!/usr/bin/env bash
# rec_diff.sh's second part: sqlite3 and perl (see there).
REC_DIFF_PART=2 exec bash "$TESTDIR/e2e/rec_diff.sh"
