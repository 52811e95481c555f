#!/bin/sh
# tests/golden_slow.sh: the slow golden cases (tests/golden/SLOW).
exec sh "$top_srcdir/tests/golden/run.sh" "$top_srcdir/tests/golden/SLOW"
