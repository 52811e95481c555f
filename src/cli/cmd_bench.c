/* cmd_bench.c: `tpsplit bench gemm|split|allgather ...`: the dispatch to the three commands
 * (src/cmd_bench_*.c) and what they share (cmd_bench.h). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "src/cli/cmdopt.h"
#include "src/cli/tpsplit.h"
#include "model/core/backend.h"
#include "src/base/err.h"
#include "src/base/util.h"
#include "src/cli/cmd_bench.h"

static void usage_text(FILE *fp) {
  fputs("Usage: tpsplit bench gemm|split|allgather [options]\n"
        "Measure on GPUs.  Correctness is checked before anything is timed; then one CUDA graph\n"
        "per candidate, an L2 flush (and a barrier of all GPUs) before every replay outside the\n"
        "timed span, the median of 50 samples, candidates alternated in every round.\n\n"
        "  gemm       GEMM paths on one GPU (tpsplit bench gemm --help)\n"
        "  split      replicated vs split + all-gather on N GPUs (tpsplit bench split --help)\n"
        "  allgather  all-gather alone, rows in the nccl-tests layout\n",
        fp);
}
/* --help within 80 columns */
static void usage(FILE *fp) { tps_cmdopt_fitted_from(fp, usage_text); }

int cmd_bench(int argc, char **argv) {
  if (argc < 2) return tps_usage_msg("no target given (gemm, split or allgather)");
  const char *what = argv[1];
  if (!strcmp(what, "--help") || !strcmp(what, "-h")) { usage(stdout); return TPS_EXIT_OK; }
  if (!strcmp(what, "--version") || !strcmp(what, "-V")) return tps_print_version("bench");
  if (!strcmp(what, "gemm") || !strcmp(what, "split") || !strcmp(what, "allgather")) {
    char name[32];
    snprintf(name, sizeof name, "bench %s", what);
    tps_err_command(name);
  }
  if (!strcmp(what, "gemm")) return cmd_bench_gemm(argc - 1, argv + 1);
  if (!strcmp(what, "split")) return cmd_bench_split(argc - 1, argv + 1);
  if (!strcmp(what, "allgather")) return cmd_bench_allgather(argc - 1, argv + 1);
  tps_usage_msg("unknown target '%s' (gemm, split or allgather)", what);
  return TPS_EXIT_USAGE;
}

/* ---------------------------------------------------------------- shared helpers */
int tps_bench_mult(const char *arg, long lo, long hi, long mult, long *v, char *why, size_t whysz) {
  if (tps_parse_long(arg, v) == 0 && *v >= lo && *v <= hi && (mult <= 1 || *v % mult == 0)) return 0;
  if (mult > 1) snprintf(why, whysz, "a multiple of %ld from %ld to %ld", mult, lo, hi);
  else snprintf(why, whysz, "a whole number from %ld to %ld", lo, hi);
  return -1;
}

static int mult_int(void *dst, const char *arg, long lo, long hi, long mult, char *why, size_t whysz) {
  long v;
  if (tps_bench_mult(arg, lo, hi, mult, &v, why, whysz)) return -1;
  *(int *)dst = (int)v;
  return 0;
}
int tps_bench_k64(void *dst, const char *arg, char *why, size_t whysz) { return mult_int(dst, arg, 64, 65536, 64, why, whysz); }
int tps_bench_n16(void *dst, const char *arg, char *why, size_t whysz) { return mult_int(dst, arg, 16, 1L << 20, 16, why, whysz); }
int tps_bench_k64_big(void *dst, const char *arg, char *why, size_t whysz) { return mult_int(dst, arg, 64, 1L << 20, 64, why, whysz); }

int tps_bench_path(void *dst, const char *arg, char *why, size_t whysz) {
  const tps_path *p = tps_path_find_for(arg, TPS_PATH_F_BENCH);
  if (!p) { tps_path_unknown(arg, TPS_PATH_F_BENCH, why, whysz); return -1; }
  *(const tps_path **)dst = p;
  return 0;
}

void tps_bench_cuda_version(int v, char *buf, size_t bufsz) {
  snprintf(buf, bufsz, "%d.%d", v / 1000, (v % 1000) / 10);
}

void tps_bench_driver(const tps_bench_prov *p, char *buf, size_t bufsz) {
  char api[16];
  tps_bench_cuda_version(p->driver_api, api, sizeof api);
  snprintf(buf, bufsz, "CUDA driver API %s", api);
  /* "NVRM version: NVIDIA UNIX [Open Kernel Module for] x86_64  580.159.04  ...": the first
   * token of the form N.N[.N] */
  FILE *fp = fopen("/proc/driver/nvidia/version", "r");
  if (!fp) return;
  char line[512];
  if (fgets(line, sizeof line, fp)) {
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
      int a, b, n = 0;
      if (sscanf(tok, "%d.%d%n", &a, &b, &n) == 2 && (tok[n] == 0 || tok[n] == '.')) {
        snprintf(buf, bufsz, "%.63s", tok);
        break;
      }
    }
  }
  fclose(fp);
}

void tps_bench_gpu_short(const char *name, char *buf, size_t bufsz) {
  snprintf(buf, bufsz, "%s", strncmp(name, "NVIDIA ", 7) == 0 ? name + 7 : name);
  for (char *c = buf; *c; c++)
    if (*c == ' ') *c = '-';
}

void tps_bench_date(const char *fmt, char *buf, size_t bufsz) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, bufsz, fmt, &tm);
}

void tps_bench_timer_line(const tps_bench_prov *p, char *buf, size_t bufsz) {
  snprintf(buf, bufsz, "%s%s%s", p->timer_text, p->timer_why[0] ? ": " : "", p->timer_why);
}

/* ---------------------------------------------------------------- multi-rank commands */
static int parse_gather(void *dst, const char *arg, char *why, size_t whysz) {
  int b = tps_gather_parse(arg);
  if (b < 0) { tps_gather_names(why, whysz); return -1; }
  *(int *)dst = b;
  return 0;
}
static int parse_cap(void *dst, const char *arg, char *why, size_t whysz) {
  return tps_bench_mult(arg, 16, 1L << 30, 16, dst, why, whysz);
}
static int parse_threads(void *dst, const char *arg, char *why, size_t whysz) {
  return mult_int(dst, arg, 32, 1024, 32, why, whysz);
}

/* The shared options and the command's own through the one parser (src/cli/cmdopt.h):
 * TPS_EXIT_OK to go on, else the exit code (-1: --help or --version, done). */
static int world_parse(tps_bench_cmd *c, int argc, char **argv) {
  tps_bench_world_opts *w = &c->w;
  long tp = w->tp, samples = w->samples, warmup = w->warmup, cap = (long)w->cap_bytes, blocks = w->blocks ? w->blocks : 32;
  int threads = w->threads ? w->threads : 512;
  char gdesc[512], tphelp[256], caphelp[160], cmd[32];
  size_t len = (size_t)snprintf(gdesc, sizeof gdesc, "the all-gather (default %s):", tps_gather_name(w->gather));
  for (int b = 0; b < TPS_NGATHERS && len < sizeof gdesc; b++)
    len += (size_t)snprintf(gdesc + len, sizeof gdesc - len, " %s: %s%s", tps_gathers[b].name, tps_gathers[b].desc,
                            b + 1 < TPS_NGATHERS ? ";" : "");
  snprintf(tphelp, sizeof tphelp, "ranks = GPUs.  Without MPI: one thread per GPU; with a build --with-mpi: "
           "`mpirun -np N tpsplit bench %s --tp N ...`", c->name);
  snprintf(caphelp, sizeof caphelp, "custom gather per-rank input cap, a multiple of 16 (default %ld)", cap);
  snprintf(cmd, sizeof cmd, "bench %s", c->name);
  tps_cmdopt all[TPS_CMDOPT_MAXOWN];
  size_t n = 0;
  all[n++] = (tps_cmdopt){.name = "gather", .kind = TPS_ARG_FN, .metavar = "G", .dst = &w->gather, .parse = parse_gather, .help = gdesc};
  all[n++] = (tps_cmdopt){.name = "tp", .kind = TPS_ARG_LONG, .metavar = "N", .dst = &tp, .min = 1, .max = TPS_BENCH_MAX_RANKS, .help = tphelp};
  all[n++] = (tps_cmdopt){.name = "samples", .kind = TPS_ARG_LONG, .metavar = "S", .dst = &samples, .min = 1, .max = 200,
                          .help = "samples per candidate (median; at most 200)"};
  all[n++] = (tps_cmdopt){.name = "warmup", .kind = TPS_ARG_LONG, .metavar = "W", .dst = &warmup, .min = 0, .max = 1000,
                          .help = "untimed rounds first"};
  all[n++] = (tps_cmdopt){.name = "cap-bytes", .kind = TPS_ARG_FN, .metavar = "B", .dst = &cap, .parse = parse_cap, .help = caphelp};
  all[n++] = (tps_cmdopt){.name = "blocks", .kind = TPS_ARG_LONG, .metavar = "B", .dst = &blocks, .min = 1, .max = TPS_BENCH_MAX_BLOCKS,
                          .help = "custom gather kernel blocks"};
  all[n++] = (tps_cmdopt){.name = "threads", .kind = TPS_ARG_FN, .metavar = "T", .dst = &threads, .parse = parse_threads,
                          .help = "custom gather kernel threads per block, a multiple of 32 (default 512)"};
  for (size_t k = 0; k < c->nown && n < TPS_CMDOPT_MAXOWN; k++) all[n++] = c->own[k];
  const tps_cmdspec spec = {
    .name = cmd,
    .synopsis = c->synopsis,
    .about = c->about,
    .common = TPS_OPT(TPS_OI_OUTPUT) | TPS_OPT(TPS_OI_JSON),
    .opts = all,
    .nopts = n,
    .output_metavar = "FILE",
    .text = {[TPS_OI_OUTPUT] = "write to FILE (default stdout; written only when complete)",
             [TPS_OI_JSON] = "print the results as JSON on stdout (the text then only with -o)"},
    .notes = "NCCL_NVLS_ENABLE=0 is set unless already set (NVLink multicast stays off).",
    .exit_status = "0 ok, 1 a GPU, NCCL or correctness failure, 2 usage error.",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  int rc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (rc >= 0) return rc == TPS_EXIT_OK ? -1 : rc;
  w->tp = (int)tp;
  w->samples = (int)samples;
  w->warmup = (int)warmup;
  w->cap_bytes = (size_t)cap;
  if (w->blocks || blocks != 32) w->blocks = (int)blocks;
  if (w->threads || threads != 512) w->threads = threads;
  c->out = v.output;
  c->json_out = v.json;
  tps_cmdopt_free(&v);
  return TPS_EXIT_OK;
}

/* on_start (rank 0, before any GPU work): the table goes to -o FILE, else to stdout unless
 * --json prints JSON there; a file that cannot be created ends the run (exit 2). */
static int open_output(void *arg) {
  tps_bench_cmd *c = arg;
  if (!c->out && c->json_out) return TPS_OK;
  tps_err e;
  tps_err_clear(&e);
  if (tps_out_open(&c->of, c->out ? c->out : "-", &e) == 0) return TPS_OK;
  tps_err_print(&e);
  return TPS_EINVAL;
}

static int world_write(tps_bench_cmd *c) {
  tps_err e;
  tps_err_clear(&e);
  if (c->of.fp && (c->write(c, c->of.fp) != 0 || tps_out_commit(&c->of, &e) != 0)) {
    if (e.set) tps_err_print(&e);
    else tps_die_msg("write error");
    return TPS_EXIT_FAIL;
  }
  return c->json_out && c->json(c) != 0 ? TPS_EXIT_FAIL : TPS_EXIT_OK;
}

int tps_bench_cmd_main(tps_bench_cmd *c, int argc, char **argv) {
  int rc = world_parse(c, argc, argv);
  if (rc < 0) return TPS_EXIT_OK;
  if (rc == TPS_EXIT_OK) rc = c->validate(c);
  if (rc != TPS_EXIT_OK) return rc;
  if (!tps_bench_mpi()) {
    char why[TPS_BENCH_WHY];
    int ndev = 0;
    if (tps_bench_gpus(&ndev, why, sizeof why) != TPS_OK) {
      tps_die_msg("no GPU can be opened: %s", why);
      return TPS_EXIT_FAIL;
    }
    if (ndev < c->w.tp) {
      tps_die_msg("--tp %d needs %d GPUs, this machine shows %d", c->w.tp, c->w.tp, ndev);
      return TPS_EXIT_USAGE;
    }
  }
  c->w.arg = c;
  c->w.on_start = open_output;
  c->w.on_row = c->on_row;
  memset(&c->of, 0, sizeof c->of);
  const int st = c->run(c);
  if (st == TPS_EINVAL) rc = TPS_EXIT_USAGE; /* open_output said why */
  else if (!c->r->writer) rc = st == TPS_OK ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  else if (st == TPS_OK) rc = world_write(c);
  else {
    if (c->r->why[0]) tps_die_msg("%s", c->r->why);
    if (c->r->stopped >= 0 && c->stopped) c->stopped(c, c->r->stopped);
    rc = TPS_EXIT_FAIL;
  }
  tps_out_abort(&c->of); /* no-op after a commit; otherwise removes the temporary file */
  return rc;
}
