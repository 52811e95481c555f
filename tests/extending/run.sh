#!/bin/sh
# tests/extending/run.sh: doc/extending.md executed (issue 26 item 6).  In a temporary copy of
# the tracked tree (a git repository of its own, so `git status` counts what each recipe
# touched) it follows the recipes as the doc writes them: a dummy GPU (one row), a kernel path
# (predictable: its file and MODEL_PATHS line), a benchmarkable one (also its kernels file, whose ops
# refuse to run, and its KGEMM_SRC line), a gather backend (its row, its kernels file, its Makefile.am line) and an input
# format (its reader file and registration line, plus its fuzz harness); then it builds the copy
# without CUDA, runs `predict` on the dummy GPU, path and backend and `inspect` on a file of the
# dummy format, and counts the files each recipe touched against the issue's targets: GPU 1,
# format <= 2 (plus its fuzz harness), path <= 3 (predictable 2, benchmarkable 3), backend <= 5.
#   sh tests/extending/run.sh [SRCDIR]     (.ci/run runs it as its own step: it rebuilds the
#                                            tree, ~4 min on 2 cores; not part of make check)
# Exit 0 pass, 1 fail.
set -u
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tpsplit-extending.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok: $*"; }
t=$tmp/tree
mkdir -p "$t"
(cd "$src" && git ls-files -z | xargs -0 tar -cf - 2>/dev/null) | tar -C "$t" -xf - || { echo "cannot copy the tree"; exit 1; }
cd "$t" || exit 1
git init -q . && git add -A >/dev/null && git -c user.name=t -c user.email=t@t commit -qm base || { echo "git init failed"; exit 1; }
# touched: the files changed or added since the last step, committed as a step
touched() {
  n=$(git status --porcelain | wc -l)
  git add -A >/dev/null && git -c user.name=t -c user.email=t@t commit -qm "$1" >/dev/null
  echo "$n"
}
# ins_before FILE ANCHOR_ERE TEXT: TEXT as a line before the first line matching ANCHOR
ins_before() {
  awk -v a="$2" -v s="$3" 'done == 0 && $0 ~ a { print s; done = 1 } { print } END { exit !done }' "$1" >"$1.new" &&
    mv "$1.new" "$1" || { fail "$1: no line matching '$2'"; return 1; }
}
check_count() { # check_count WHAT N MAX
  if [ "$2" -le "$3" ]; then ok "$1: $2 file(s) touched (target <= $3)"; else fail "$1: $2 files touched, target <= $3"; fi
}

# ---- a GPU: one row of data/gpus.tsv (doc/extending.md, "A GPU: 1 row")
row=$(awk -F'\t' -v OFS='\t' '$1 == "name" { for (i = 1; i <= NF; i++) c[$i] = i; next }
  $1 == "H100-SXM" { $1 = "DUMMY-G1"; $2 = "DG1"; if ("cuda_names" in c) $c["cuda_names"] = "DUMMY G1";
    if ("engine_key" in c) $c["engine_key"] = "DUMMY_G1"; if ("source" in c) $c["source"] = "made up (tests/extending)"; print; exit }' data/gpus.tsv)
[ -n "$row" ] && printf '%s\n' "$row" >>data/gpus.tsv || fail "no H100-SXM row to copy"
check_count "GPU" "$(touched gpu)" 1

# add_path NAME FLAGS: doc/extending.md "A kernel path" steps 1 and 2: model/core/paths/NAME.c and
# its line appended to MODEL_PATHS (the list's last line gets ' \', the new line follows it)
add_path() {
  up=$(echo "$1" | tr a-z A-Z); cli=$(echo "$1" | tr _ -)
  cat >"model/core/paths/$1.c" <<CSRC
/* $1.c: a made-up kernel path (tests/extending). */
#include "model/core/path.h"

const tps_path tps_path_$1 = {
  .id = TPS_PATH_$up, .flags = $2, .name = "$cli", .aliases = "", .desc = "a made-up path (tests/extending)",
  .weight_bytes = 1.5, .act_bytes = 2.0, .row_tile = 64, .col_tile = 128, .min_cc = 70, .compute_eff = 0.5,
  .compute_eff_rsd = 0.2, .stream_eff = 0.8, .stream_eff_rsd = 0.1, .floor_us = 3.0, .source = "made up",
  .model = TPS_PATH_MODEL_SPEC, .aic_dtype = "", .spec_note = "",
};
CSRC
  awk -v l="	model/core/paths/$1.c" 'f == 1 && $0 !~ /\\$/ { print $0 " \\"; print l; f = 2; next }
    /^MODEL_PATHS = / && f == 0 { f = 1 } { print } END { exit f != 2 }' Makefile.am >Makefile.am.new &&
    mv Makefile.am.new Makefile.am || fail "Makefile.am: no MODEL_PATHS list"
}
# appended to the KGEMM_SRC list (doc/extending.md step 3): after its last line
add_kgemm() {
  awk -v l="$1" 'f == 1 && $0 !~ /\\$/ { print $0 " " l; f = 2; next }
    /^KGEMM_SRC = / && f == 0 { f = 1; if ($0 !~ /\\$/) { print $0 " " l; f = 2; next } }
    { print } END { exit f != 2 }' Makefile.am >Makefile.am.new && mv Makefile.am.new Makefile.am || fail "Makefile.am: no KGEMM_SRC list"
}

# ---- a kernel path, predictable (doc/extending.md, "A kernel path": steps 1 and 2)
add_path dummy_path TPS_PATH_F_MODEL
check_count "kernel path (predictable)" "$(touched path)" 2

# ---- a kernel path, benchmarkable too (steps 1 to 3): its kernels file's ops refuse to run
add_path dummy_bench 'TPS_PATH_F_MODEL | TPS_PATH_F_BENCH'
cat >kernels/gemm/gemm_dummy_bench.cu <<'CU'
/* gemm_dummy_bench.cu: a made-up kernel path (tests/extending): refuses every plan. */
#include <stdio.h>
#include "kernels/gemm/gemm_internal.h"
static int dummy_upload(tps_gemm *g, const float *w) { (void)g, (void)w; fprintf(stderr, "dummy-bench: a made-up path\n"); return TPS_SKIP; }
static int dummy_run(tps_gemm *g, const void *x, void *y, int m, cudaStream_t s, int parts) {
  (void)g, (void)x, (void)y, (void)m, (void)s, (void)parts;
  return TPS_SKIP;
}
static int dummy_config(const tps_gemm *g, int m, char *buf, size_t bufsz, uint64_t *id) {
  (void)g, (void)m;
  snprintf(buf, bufsz, "dummy-bench: refuses to run");
  *id = 0;
  return TPS_OK;
}
static const tps_gemm_ops dummy_bench_ops = {.id = TPS_PATH_DUMMY_BENCH, .traits = {0, 1, 1e-2, -1}, .upload = dummy_upload,
                                             .run = dummy_run, .config = dummy_config};
TPS_GEMM_PATH_OPS(dummy_bench_ops);
CU
add_kgemm kernels/gemm/gemm_dummy_bench.cu
check_count "kernel path (benchmarkable)" "$(touched path_bench)" 3

# ---- a gather backend (doc/extending.md, "A gather backend": steps 1 to 4)
ins_before model/core/backend.h '^  TPS_NGATHERS' '  TPS_GATHER_DUMMY,'
awk 'f == 0 && /tps_gathers\[TPS_NGATHERS\] = \{/ { f = 1 } f == 1 && /^};/ { print "    [TPS_GATHER_DUMMY] = {TPS_GATHER_DUMMY, \"dummyag\", \"a made-up one-shot gather (tests/extending)\", 0, TPS_GATHER_TERM_ONESHOT, 1048576, 1, 0},"; f = 2 } { print }' \
  model/core/backend.c >model/core/backend.c.new && mv model/core/backend.c.new model/core/backend.c
grep -q 'TPS_GATHER_DUMMY' model/core/backend.c || fail "backend.c: the row was not added"
cat >kernels/gather/gather_dummyag.cu <<'CU'
/* gather_dummyag.cu: a made-up backend (tests/extending): refuses every world. */
#include "kernels/gather/gather.h"
static int dummy_open(void **st, tps_world *w, const tps_gather_opts *o) { (void)st, (void)w, (void)o; return TPS_SKIP; }
static void dummy_close(void *st, int abort) { (void)st, (void)abort; }
static void dummy_abort(void *st) { (void)st; }
static const char *dummy_refuses(const void *st, size_t stride) { (void)st, (void)stride; return "a made-up backend"; }
static const tps_gather_ops dummyag_ops = {.id = TPS_GATHER_DUMMY, .open = dummy_open, .close = dummy_close,
                                           .abort = dummy_abort, .refuses = dummy_refuses};
TPS_GATHER_BACKEND(dummyag_ops);
CU
# appended to the KGATHER_SRC list: after its last line (the first line of the list that does not
# end with a backslash), as doc/extending.md step 4 says
awk 'f == 1 && $0 !~ /\\$/ { print $0 " kernels/gather/gather_dummyag.cu"; f = 2; next }
  /^KGATHER_SRC = / && f == 0 { f = 1; if ($0 !~ /\\$/) { print $0 " kernels/gather/gather_dummyag.cu"; f = 2; next } }
  { print } END { exit f != 2 }' Makefile.am >Makefile.am.new && mv Makefile.am.new Makefile.am || fail "Makefile.am: no KGATHER_SRC list"
check_count "gather backend" "$(touched backend)" 5

# ---- an input format (doc/extending.md, "An input format": its file, its IO_FORMATS line, its
# fuzz harness): DUMMYFMT, a GEMM table "DUMMYFMT GPU PATH K N" then "rows,time_us" lines
cat >src/io/dummyfmt.c <<'CSRC'
/* dummyfmt.c: a made-up GEMM table format (tests/extending). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/measure.h"
static int sniff(const char *data, size_t len) { return len >= 9 && memcmp(data, "DUMMYFMT ", 9) == 0; }
static int read(const char *path, const char *data, size_t len, const tps_aic_filter *sel, tps_meas *m, tps_err *e) {
  (void)sel;
  tps_table *t = tps_meas_table(m, path, e);
  if (!t) return -1;
  char *buf = malloc(len + 1);
  size_t cap = 64;
  t->rows = malloc(cap * sizeof *t->rows);
  t->time_us = malloc(cap * sizeof *t->time_us);
  t->line = malloc(cap * sizeof *t->line);
  if (!buf || !t->rows || !t->time_us || !t->line) { free(buf); return tps_err_oom(e, "reading %s", path); }
  memcpy(buf, data, len);
  buf[len] = 0;
  long ln = 0;
  int rc = 0;
  for (char *save = NULL, *s = strtok_r(buf, "\n", &save); s && !rc; s = strtok_r(NULL, "\n", &save)) {
    ln++;
    if (ln == 1) {
      if (sscanf(s, "DUMMYFMT %63s %31s %ld %ld", t->gpu, t->kpath, &t->k, &t->n) != 4)
        rc = tps_err_set(e, path, ln, "want 'DUMMYFMT GPU PATH K N'");
      continue;
    }
    long r;
    double us;
    if (sscanf(s, "%ld,%lf", &r, &us) != 2 || r < 1 || !(us > 0)) { rc = tps_err_set(e, path, ln, "want 'rows,time_us'"); break; }
    if (t->nrows == cap) { rc = tps_err_set(e, path, ln, "more than %zu rows", cap); break; }
    t->rows[t->nrows] = r, t->time_us[t->nrows] = us, t->line[t->nrows] = ln, t->nrows++;
  }
  free(buf);
  t->kind = TPS_TABLE_GEMM;
  snprintf(t->source, sizeof t->source, "dummyfmt");
  if (!rc && t->nrows < 2) rc = tps_err_set(e, path, ln, "fewer than 2 rows");
  return rc ? -1 : 0;
}
const tps_format tps_format_dummyfmt = {"dummyfmt", TPS_MEAS_TABLE, sniff, read};
CSRC
awk '{ if ($0 ~ /^\tsrc\/io\/table\.c$/ && f == 0) { print "\tsrc/io/dummyfmt.c \\"; f = 1 } print } END { exit !f }' Makefile.am >Makefile.am.new &&
  mv Makefile.am.new Makefile.am || fail "Makefile.am: no 'src/io/table.c' line ending IO_FORMATS"
n=$(git status --porcelain | wc -l)
cat >tests/fuzz/fuzz_dummyfmt.c <<'CSRC'
/* fuzz_dummyfmt.c: any bytes through the loader (tests/extending). */
#include "config.h"
#include "src/io/measure.h"
#include "tests/fuzz/fuzz.h"
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tps_meas m;
  tps_err e;
  tps_err_clear(&e);
  if (tps_meas_load_mem("x", (const char *)data, size, NULL, &m, &e) == 0) tps_meas_free(&m);
  return 0;
}
CSRC
check_count "input format (plus its fuzz harness)" "$n" 2
touched format >/dev/null

# ---- build and run
(./autogen.sh && ./configure -q --without-cuda && make -j"$(nproc)") >"$tmp/build.log" 2>&1 ||
  { tail -n 30 "$tmp/build.log"; fail "the extended tree does not build"; echo "$fails failed"; exit 1; }
export TPSPLIT_DATADIR="$t/data"
./tpsplit predict --gpu DUMMY-G1 --tp 8 --path dummy-path --gather dummyag >"$tmp/out" 2>"$tmp/err" &&
  grep -q '^# DUMMY-G1 TP8 dummy-path, gather dummyag' "$tmp/out" && grep -q '^break-even' "$tmp/out" &&
  ok "predict --gpu DUMMY-G1 --path dummy-path --gather dummyag" ||
  fail "predict on the dummy GPU, path and backend: $(head -c 300 "$tmp/err") $(head -n 3 "$tmp/out")"
./tpsplit predict --gpu DUMMY-G1 --tp 8 --path dense-bf16 --gather auto >"$tmp/out" 2>"$tmp/err" &&
  ok "predict --gpu DUMMY-G1 (existing path, auto gather)" || fail "predict DUMMY-G1: $(head -c 300 "$tmp/err")"
./tpsplit --help >/dev/null 2>&1 && ./tpsplit predict --help | grep -q 'dummy-path' && ok "--help lists the dummy path" ||
  fail "predict --help does not list dummy-path"
./tpsplit predict --gpu DUMMY-G1 --tp 8 --path dummy-bench --gather nccl >"$tmp/out" 2>"$tmp/err" &&
  grep -q '^# DUMMY-G1 TP8 dummy-bench, gather nccl' "$tmp/out" && ok "predict --path dummy-bench (the benchmarkable path)" ||
  fail "predict on the benchmarkable dummy path: $(head -c 300 "$tmp/err") $(head -n 3 "$tmp/out")"
./tpsplit bench gemm --help 2>&1 | tr -s ' \n' '  ' | grep -q 'dummy-bench' && ok "bench gemm --help lists the benchmarkable path" ||
  fail "bench gemm --help does not list dummy-bench"
# the benchmarkable path's kernels file compiles against the generated ids, where nvcc is found (the
# build above is without CUDA)
if command -v nvcc >/dev/null 2>&1; then
  nvcc -std=c++17 -I. -DHAVE_CONFIG_H -c -o "$tmp/gemm_dummy_bench.o" kernels/gemm/gemm_dummy_bench.cu >"$tmp/nvcc.log" 2>&1 &&
    ok "nvcc compiles kernels/gemm/gemm_dummy_bench.cu (TPS_PATH_DUMMY_BENCH from MODEL_PATHS)" ||
    fail "nvcc kernels/gemm/gemm_dummy_bench.cu: $(grep -m2 error "$tmp/nvcc.log")"
else
  echo "skip: no nvcc, kernels/gemm/gemm_dummy_bench.cu not compiled"
fi
./tpsplit bench gemm --help 2>&1 | tr -s ' \n' '  ' | grep -q 'dummy-path' && fail "bench gemm --help lists the predictable-only dummy-path" ||
  ok "bench gemm --help leaves the predictable-only path out"
printf 'DUMMYFMT DUMMY-G1 dense-bf16 5120 1792\n1,11.5\n64,12.0\n1024,30.0\n16384,420.0\n' >"$tmp/dummy.fmt"
./tpsplit inspect "$tmp/dummy.fmt" >"$tmp/out" 2>"$tmp/err" && grep -q '1024' "$tmp/out" && ok "inspect reads the dummy format" ||
  fail "inspect of the dummy format: $(head -c 300 "$tmp/err") $(head -n 5 "$tmp/out")"
./tpsplit predict --gpu DUMMY-G1 --tp 8 --path dense-bf16 --gather nccl --gemm "$tmp/dummy.fmt" >"$tmp/out" 2>"$tmp/err" &&
  grep -q 'measured: .*dummy.fmt' "$tmp/out" && ok "predict --gemm takes the dummy format's points as measured" ||
  fail "predict --gemm dummy.fmt: $(head -c 300 "$tmp/err") $(grep '^# \[' "$tmp/out" | head -2)"
echo "$fails failed"
[ "$fails" -eq 0 ]
