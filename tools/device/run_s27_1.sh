#!/bin/bash
# Twenty-seventh session, call 2: on an H200 only (needs_h200), its W8A16 tables of the current dispatch (issue 28
# item 3: 29 M, both shapes, w8a16 and dense-bf16, 50 samples, rows alternated; no table starts past 170 s, the
# session's device budget being short).  test_gemm_gpu is left out: it passed on an H100 with the same binaries in
# call 1 (data/h100_w8a16_s27.txt), and each table checks its own rows against the float64 reference.
# Carry: .w8carry (bin built from 6dfe52c; kernels/ unchanged since 30223cf).
. .w8carry/versions.sh
tps_dev_begin
if nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -q H200; then
  RATIO_TOKENS=1,16,32,64,96,128,192,256,320,384,448,512,640,768,896,1024,1280,1536,1792,2048,2304,2305,2560,3072,3584,4096,6144,8192,16384 \
    RATIO_DEADLINE=${RATIO_DEADLINE:-170} STAGES=ratio bash .w8carry/run_w8a16.sh "$B"
else
  echo "not an H200: nothing run"
fi
echo "all done (${SECONDS}s)"
