/* cmd_bench.c: `tpsplit bench gemm|split|allgather ...`: the dispatch to the three commands
 * (src/cmd_bench_*.c) and what they share (cmd_bench.h). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "src/cli/cmdopt.h"
#include "src/cli/tpsplit.h"
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
int tps_bench_int_opt(const char *cmd, const char *name, const char *arg, long lo, long hi,
                      long mult, long *v) {
  (void)cmd; /* the message names the command (src/base/err.h) */
  if (tps_parse_long(arg, v) == 0 && *v >= lo && *v <= hi && (mult <= 1 || *v % mult == 0)) return 0;
  if (mult > 1) tps_usage_msg("--%s '%s': a multiple of %ld from %ld to %ld", name, arg, mult, lo, hi);
  else tps_usage_msg("--%s '%s': a whole number from %ld to %ld", name, arg, lo, hi);
  return TPS_EXIT_USAGE;
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
enum { OPT_TP = 256, OPT_GATHER, OPT_SAMPLES, OPT_WARMUP, OPT_CAP, OPT_BLOCKS, OPT_THREADS, OPT_JSON,
       OPT_VERSION };

static const struct option world_options[] = {
    {"tp", required_argument, 0, OPT_TP},           {"gather", required_argument, 0, OPT_GATHER},
    {"samples", required_argument, 0, OPT_SAMPLES}, {"warmup", required_argument, 0, OPT_WARMUP},
    {"cap-bytes", required_argument, 0, OPT_CAP},   {"blocks", required_argument, 0, OPT_BLOCKS},
    {"threads", required_argument, 0, OPT_THREADS}, {"output", required_argument, 0, 'o'},
    {"json", no_argument, 0, OPT_JSON},             {"help", no_argument, 0, 'h'},
    {"version", no_argument, 0, OPT_VERSION}};
enum { NWORLD_OPTIONS = sizeof world_options / sizeof world_options[0] };

void tps_bench_world_help(FILE *fp, const char *cmd, const tps_bench_world_opts *d) {
  fprintf(fp, "  --gather G      the all-gather (default %s):\n", tps_gather_name(d->gather));
  for (int b = 0; b < TPS_NGATHERS; b++) fprintf(fp, "                    %-7s %s\n", tps_gathers[b].name, tps_gathers[b].desc);
  fprintf(fp,
          "  --tp N          ranks = GPUs (default %d).  Without MPI: one thread per GPU; with a build\n"
          "                  --with-mpi: `mpirun -np N tpsplit bench %s --tp N ...`\n"
          "  --samples S     samples per candidate (median; default %d, at most 200)\n"
          "  --warmup W      untimed rounds first (default %d)\n"
          "  --cap-bytes B   custom gather per-rank input cap (default %zu)\n"
          "  --blocks B, --threads T   custom gather kernel launch (default 32 x 512)\n"
          "  -o FILE         write to FILE (default stdout; written only when complete)\n"
          "  --json          print the results as JSON on stdout (the text then only with -o)\n\n"
          "NCCL_NVLS_ENABLE=0 is set unless already set (NVLink multicast stays off).\n"
          "Exit status: 0 ok, 1 a GPU, NCCL or correctness failure, 2 usage error.\n",
          d->tp, cmd, d->samples, d->warmup, d->cap_bytes);
}

/* One shared option: TPS_EXIT_OK, TPS_EXIT_USAGE, or -1 (--help, --version: done). */
static int world_option(tps_bench_cmd *c, int code, const char *arg) {
  tps_bench_world_opts *w = &c->w;
  long v = 0;
  int rc = TPS_EXIT_OK;
  char names[64];
  switch (code) {
  case OPT_TP: rc = tps_bench_int_opt(c->name, "tp", arg, 1, TPS_BENCH_MAX_RANKS, 1, &v); w->tp = (int)v; break;
  case OPT_SAMPLES: rc = tps_bench_int_opt(c->name, "samples", arg, 1, 200, 1, &v); w->samples = (int)v; break;
  case OPT_WARMUP: rc = tps_bench_int_opt(c->name, "warmup", arg, 0, 1000, 1, &v); w->warmup = (int)v; break;
  case OPT_CAP: rc = tps_bench_int_opt(c->name, "cap-bytes", arg, 16, 1L << 30, 16, &v); w->cap_bytes = (size_t)v; break;
  case OPT_BLOCKS: rc = tps_bench_int_opt(c->name, "blocks", arg, 1, TPS_BENCH_MAX_BLOCKS, 1, &v); w->blocks = (int)v; break;
  case OPT_THREADS: rc = tps_bench_int_opt(c->name, "threads", arg, 32, 1024, 32, &v); w->threads = (int)v; break;
  case OPT_GATHER:
    if ((w->gather = tps_gather_parse(arg)) < 0) {
      tps_usage_msg("--gather '%s': %s", arg, tps_gather_names(names, sizeof names));
      rc = TPS_EXIT_USAGE;
    }
    break;
  case 'o':
    if (!*arg) return tps_usage_msg("-o '': a file name, not empty");
    c->out = arg;
    break;
  case OPT_JSON: c->json_out = 1; break;
  case 'h': c->usage(stdout); return -1;
  case 'V':
  case OPT_VERSION:
    snprintf(names, sizeof names, "bench %s", c->name);
    tps_print_version(names);
    return -1;
  default: return c->option(c, code, arg);
  }
  return rc;
}

static int world_parse(tps_bench_cmd *c, int argc, char **argv) {
  size_t nown = 0;
  while (c->own[nown].name) nown++;
  struct option *lo = calloc(NWORLD_OPTIONS + nown + 1, sizeof *lo);
  if (!lo) { tps_die_msg("out of memory"); return TPS_EXIT_FAIL; }
  memcpy(lo, world_options, sizeof world_options);
  memcpy(lo + NWORLD_OPTIONS, c->own, nown * sizeof *lo);
  optind = 0;
  opterr = 0;
  int code, rc = TPS_EXIT_OK;
  while (rc == TPS_EXIT_OK && (code = getopt_long(argc, argv, ":o:hV", lo, NULL)) != -1) {
    if (code == ':') { tps_usage_msg("option '%s' needs a value", argv[optind - 1]); rc = TPS_EXIT_USAGE; }
    else if (code == '?') { tps_usage_msg("bad option '%s'", argv[optind - 1]); rc = TPS_EXIT_USAGE; }
    else rc = world_option(c, code, optarg);
  }
  free(lo);
  if (rc == TPS_EXIT_OK && optind < argc) {
    tps_usage_msg("unexpected argument '%s'", argv[optind]);
    rc = TPS_EXIT_USAGE;
  }
  return rc;
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
