/* cmd_bench.c: `tpsplit bench gemm|split|allgather ...` forwards to kernels/. */
#include "config.h"
#include <stdio.h>
#include <string.h>
#include "tpsplit.h"
#include "err.h"
#include "util.h"
#include "bench.h"

static void usage(FILE *fp) {
  fputs("Usage: tpsplit bench gemm|split|allgather [options]\n"
        "Measure on GPUs with the method of the brief (CUDA graph per candidate, L2 flush and\n"
        "device barrier outside the timed span, median of 50 samples, candidates alternated,\n"
        "correctness checked first).\n\n"
        "  gemm       GEMM paths on one GPU (tpsplit bench gemm --help)\n"
        "  split      replicated vs split + all-gather on N GPUs (tpsplit bench split --help)\n"
        "  allgather  all-gather alone, rows in the nccl-tests layout\n",
        fp);
}

int cmd_bench(int argc, char **argv) {
  if (argc < 2) { usage(stderr); return TPS_EXIT_USAGE; }
  const char *what = argv[1];
  if (!strcmp(what, "--help") || !strcmp(what, "-h")) { usage(stdout); return TPS_EXIT_OK; }
  if (!strcmp(what, "--version")) return tps_print_version("bench");
  if (!strcmp(what, "gemm")) return tps_bench_gemm_main(argc - 1, argv + 1);
  if (!strcmp(what, "split")) return tps_bench_split_main(argc - 1, argv + 1);
  if (!strcmp(what, "allgather")) return tps_bench_allgather_main(argc - 1, argv + 1);
  tps_die_msg("bench: unknown target '%s' (gemm, split or allgather)", what);
  return TPS_EXIT_USAGE;
}
