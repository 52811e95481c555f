/* envvars.c: the environment table (see envvars.h).  "main" in the commands column is the
 * main job (`tpsplit` with no command). */
#include "src/cli/envvars.h"
#include <stdlib.h>
#include <string.h>
#include "src/base/err.h"
#include "src/base/util.h"

const tps_envvar tps_envvars[] = {
  {"TPSPLIT_DATADIR", "*", "src/base/util.c",
   "directory holding gpus.tsv, the bundled measurements and models/ (default: the installed "
   "data, else the source tree's data/)"},
  {"TPSPLIT_THREADS", "crossover plot main fit", "src/base/parallel.c",
   "worker threads of the crossover grid and of the cross-GPU fits (`fit --loo-gpu`, `--xgpu`), 1..64 (default: the "
   "online CPUs, at most 8); the results do not depend on it"},
  {"TPSPLIT_GNUPLOT", "plot main", "src/plot/plot.c",
   "gnuplot to run: a path or a name on PATH; set but empty or not found: write the .dat and "
   ".gp files only (default: the gnuplot configure found, else gnuplot on PATH)"},
  {"PATH", "plot main", "src/plot/plot.c", "searched for gnuplot when TPSPLIT_GNUPLOT is unset"},
  {"TPSPLIT_GNUPLOT_TIMEOUT", "plot main", "src/plot/plot.c",
   "seconds a gnuplot run may take before it is killed and reported (default 60)"},
  {"TPSPLIT_INPUT_TIMEOUT", "*", "src/base/util.c",
   "seconds a pipe or FIFO given as input may stay silent before it is refused (default 10)"},
  {"TPS_W8_KERNEL", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "W8A16 kernel for every M: stream, wgmma, split, sk (stream-K) or mma (default: by M and GPU)"},
  {"TPS_W8_BT", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "W8A16 wgmma token tile: 64, 128 or 256 (default 256; forced wgmma: 128 up to M 1024); with TPS_W8_KERNEL=split or sk that kernel's tile, 64 or 128 (sk also 256)"},
  {"TPS_W8_SKG", "bench calibrate", "kernels/gemm/gemm_w8a16_sm90.cu",
   "with TPS_W8_KERNEL=sk: a persistent grid of this many blocks when fewer than resident (0 or unset: all resident)"},
  {"TPS_W8_SK256", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "W8A16: 0 keeps the stream-K kernel's 256-token form out of the dispatch (default 1: picked where modelled fastest)"},
  {"TPS_W8_SKDP", "bench calibrate", "kernels/gemm/gemm_w8a16_sm90.cu",
   "W8A16 256-token stream-K: this many whole waves of tiles (at most all but the last grid's worth of chunks) run data-parallel before the stream-K part (default: all whole waves or one fewer, by the dispatch model)"},
  {"TPS_W8_SCL", "bench calibrate", "kernels/gemm/gemm_w8a16_sm90.cu",
   "W8A16 stream kernel (M <= 64): 4 runs it over clusters of 4 blocks instead of 8 (an experiment, issue 28: at most 15 clusters of 8 run at once on an H100)"},
  {"TPS_W8_SROWS", "bench calibrate", "kernels/gemm/gemm_w8a16_sm90.cu",
   "W8A16 stream kernel (M <= 64): unset, 192 weight rows a block (three warpgroups) where the 128-row form's clusters of 8 would need two waves and the 192-row form's fit in one (N 2112 on an H100: 11 clusters of 8 instead of 17, data/h100_w8a16_s24.txt) and the plan's records cover them, else 128; 128 or 192 forces one (192 only where the records cover it)"},
  {"TPS_W8_SDEEP", "bench calibrate", "kernels/gemm/gemm_w8a16_sm90.cu",
   "the 192-row stream form: 1 (default) gives the 16- and 32-token tiles 14 and 11 stages instead of 10 (measured 1-3% faster at M <= 32, data/h100_w8a16_sk2fit.txt); 0 the 10-stage forms"},
  {"TPS_W8_SK2FIT", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "W8A16: 1 prices the 256-token stream-K form in the dispatch by its refit (the constants: model/core/w8plan.c sk2c[1], measured in doc/gemm-kernels.md, sk2_time refit) (default 1, measured no slower at any of 29 M, data/h100_w8a16_sk2fit.txt); 0 the first fit (the dispatch before)"},
  {"TPS_W8_SKEVEN", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "W8A16: 1 lets the 256-token stream-K form run on an even grid (tiles x p blocks, each 1/p of a tile, priced by model/core/w8plan.c SKEVEN_*, measured in data/h100_w8a16_s21.txt) (default 1); 0 only on every resident block (the dispatch before)"},
  {"TPS_W8_SKRS", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "W8A16 256-token stream-K form on an even grid: 1 adds a cut tile's partials by reduce-scatter (each of its p blocks sums and stores 1/p of the tile; kernels/gemm/gemm_w8a16_sm90.cu w8k2_kernel; priced by model/core/w8plan.c SKRS_*, measured in data/h100_w8a16_s23.txt) (default 1); 0 by the owner of its first piece (the dispatch before); 2 reduce-scatter with the slices staged by cp.async (an experiment)"},
  {"TPS_W8_SKTAIL", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "W8A16 256-token stream-K form with whole waves first: p (1..63) cuts each tile left after them into p pieces on the first tiles x p blocks (where they fit and p divides K/64; an experiment, issue 28); 0 or unset: those tiles shared over every block (default)"},
  {"TPS_W8_SPLIT", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "with TPS_W8_KERNEL=split: cluster split-K of the split kernel, 1, 2, 4 or 8 (default: modelled by M)"},
  {"TPS_W8_S256", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "W8A16 split kernel: 1 lets the dispatch pick its 256-token tile (default 0: measured on an H200 it loses at 257..512 rows, data/h200_w8a16_s256.txt)"},
  {"TPS_W8_SMALL_SPLIT", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "W8A16: 1 runs M <= 64 on the split kernel where the stream kernel's stages run out (K > 5120; default 0: measured 15% slower at K 7168)"},
  {"TPS_W8_HEAD", "bench calibrate", "kernels/gemm/gemm_w8a16.cu",
   "W8A16 past one wave of the 256-token wgmma pass: rows run first as whole waves, the rest by their own pick; 0 never, R the largest multiple of 256 up to R (default: where modelled faster)"},
  {"TPS_W8_PP", "bench calibrate", "kernels/gemm/gemm_w8a16_sm90.cu",
   "W8A16 split kernel: 0 the two warpgroups issue their MMAs freely (default), 1 in turn"},
  {"TPS_W8_SBT", "bench calibrate", "kernels/gemm/gemm_w8a16_sm90.cu", "W8A16 stream token tile: 16, 32, 48, 64 or 128"},
  {"TPS_W8_SUM", "bench calibrate", "kernels/gemm/gemm_w8a16_sm90.cu",
   "W8A16 stream partial-sum exchange: 0 remote stores, 1 remote reads, 4 st.async (default)"},
  {"TPS_W8_RECBULK", "bench calibrate", "kernels/gemm/gemm_w8a16_sm90.cu",
   "1: W8A16 weight records by cp.async.bulk instead of the tensor map (0 default)"},
  {"TPS_W8_STREAM_MAX", "bench calibrate", "kernels/gemm/gemm_w8a16.cu", "W8A16 stream kernel for every M up to this (default 64; 65..128 rows where the split kernel's pick is the stream geometry)"},
  {"TPS_W8_VARIANT", "bench calibrate", "kernels/gemm/gemm_w8a16.cu", "W8A16 mma tile variant for every M, 0..8"},
  {"TPS_W8_LARGE", "bench calibrate", "kernels/gemm/gemm_w8a16.cu", "W8A16 mma tile variant for large M, 0..8 (default 4)"},
  {"TPS_W8_SPLITK", "bench calibrate", "kernels/gemm/gemm_w8a16.cu", "W8A16 mma split-K ways, 0..64 (0: chosen to fill the SMs)"},
  {"TPS_FP8B_PAD", "bench calibrate", "kernels/gemm/gemm_fp8block.cu",
   "fp8-block shapes cuBLASLt refuses: 0 never pad (skip), 1 always pad M to 4 and N to 128 (default: pad where refused)"},
  {"TPS_CUBLASLT_LIB", "bench calibrate", "kernels/gemm/cublaslt_load.c",
   "path of libcublasLt to load at the first cuBLASLt GEMM plan (default: the SONAME configure found, by the loader's search, then in configure's folder)"},
  {"TPS_FLUSH", "bench calibrate", "kernels/bench/harness.cu",
   "write: the L2 flush between repeats only writes its buffer (default: writes and reads it back)"},
  {"TPS_TIMER", "bench calibrate", "kernels/bench/kspan.c", "events: time with CUDA events, not CUPTI kernel spans"},
  {"TPS_CUPTI_LIB", "bench calibrate", "kernels/bench/kspan.c", "path of libcupti to load (default: searched, see CUDA_HOME)"},
  {"CUDA_HOME", "bench calibrate", "kernels/bench/kspan.c", "libcupti is also looked for in $CUDA_HOME/extras/CUPTI/lib64"},
  {"NCCL_NVLS_ENABLE", "bench calibrate", "kernels/bench/bench_split.cu",
   "recorded in bench split tables; set to 0 when unset (no NVLink multicast)"},
  {"OMPI_COMM_WORLD_SIZE", "bench calibrate", "kernels/gather/gather_world.c",
   "set by mpirun (as PMI_SIZE, PMIX_RANK, MPI_LOCALNRANKS, SLURM_STEP_NUM_TASKS): one process "
   "per GPU instead of one thread per GPU (builds --with-mpi)"},
  {"PMI_SIZE", "bench calibrate", "kernels/gather/gather_world.c", "see OMPI_COMM_WORLD_SIZE"},
  {"PMIX_RANK", "bench calibrate", "kernels/gather/gather_world.c", "see OMPI_COMM_WORLD_SIZE"},
  {"MPI_LOCALNRANKS", "bench calibrate", "kernels/gather/gather_world.c", "see OMPI_COMM_WORLD_SIZE"},
  {"SLURM_STEP_NUM_TASKS", "bench calibrate", "kernels/gather/gather_world.c", "see OMPI_COMM_WORLD_SIZE"},
};
const size_t tps_nenvvars = sizeof tps_envvars / sizeof tps_envvars[0];

int tps_envvar_read_by(const tps_envvar *v, const char *cmd) {
  if (!cmd || strcmp(v->commands, "*") == 0) return 1;
  size_t n = strcspn(cmd, " "); /* a subcommand ("fit --loo-gpu") reads what its command does */
  for (const char *w = v->commands; *w;) {
    size_t l = strcspn(w, " ");
    if (l == n && strncmp(w, cmd, n) == 0) return 1;
    w += l;
    while (*w == ' ') w++;
  }
  return 0;
}

/* The variables with a number for a value, and its range (their readers take the same). */
static const struct {
  const char *name;
  long lo, hi;
} numeric[] = {
  {"TPSPLIT_THREADS", 1, 64},
  {"TPSPLIT_INPUT_TIMEOUT", 1, 86400},
  {"TPSPLIT_GNUPLOT_TIMEOUT", 1, 86400},
};

int tps_env_check(const char *cmd) {
  for (size_t i = 0; i < sizeof numeric / sizeof numeric[0]; i++) {
    const char *s = getenv(numeric[i].name);
    long v;
    int reads = 0;
    for (size_t k = 0; k < tps_nenvvars; k++)
      if (!strcmp(tps_envvars[k].name, numeric[i].name)) reads = tps_envvar_read_by(&tps_envvars[k], cmd);
    if (!s || !reads || (tps_parse_long(s, &v) == 0 && v >= numeric[i].lo && v <= numeric[i].hi)) continue;
    tps_die_msg("%s='%.64s': a whole number in %ld..%ld (unset it for the default)", numeric[i].name, s, numeric[i].lo,
                numeric[i].hi);
    return -1;
  }
  return 0;
}
