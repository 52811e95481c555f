#!/bin/sh
# tests/cli/golden_slow.sh: the slow golden cases (tests/data/golden/SLOW) but fit_loo_gpu, which
# tests/cli/loo.sh runs (one run of `tpsplit fit --loo-gpu` for the golden file and its checks).
exec sh "$top_srcdir/tests/data/golden/run.sh" "$top_srcdir/tests/data/golden/SLOW" fit_xgpu
