#!/bin/sh
# tests/cli/golden_slow.sh: the slow golden cases (tests/data/golden/SLOW).
exec sh "$top_srcdir/tests/data/golden/run.sh" "$top_srcdir/tests/data/golden/SLOW"
