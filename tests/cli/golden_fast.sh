#!/bin/sh
# tests/cli/golden_fast.sh: the quick golden cases (tests/data/golden/CASES).
exec sh "$top_srcdir/tests/data/golden/run.sh" "$top_srcdir/tests/data/golden/CASES"
