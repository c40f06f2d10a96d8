#!/usr/bin/env bash
# rec_diff.sh's third part: bash and python3 (see there).
REC_DIFF_PART=3 exec bash "$TESTDIR/e2e/rec_diff.sh"
