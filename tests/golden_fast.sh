#!/bin/sh
# tests/golden_fast.sh: the quick golden cases (tests/golden/CASES).
exec sh "$top_srcdir/tests/golden/run.sh" "$top_srcdir/tests/golden/CASES"
