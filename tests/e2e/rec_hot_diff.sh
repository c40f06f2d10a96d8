#!/usr/bin/env bash
# soft_diff.sh's programs, all three parts, in the recorder only, with
# BTRACE_TEST_HOT=1: every block that ran translated again, to carry more
# outcomes, at the next stop (lib/rec/rec_hot.c) -- signals, sigreturn,
# code written at run time, code unmapped and remapped, fork, vfork,
# threads included -- branch for branch against single-stepping.
fails=0
for part in 1 2 3; do
	SOFT_DIFF_PART=$part SOFT_DIFF_MODES=record BTRACE_TEST_HOT=1 \
		bash "$TESTDIR/e2e/soft_diff.sh" || fails=$((fails + 1))
done
[ $fails = 0 ]
