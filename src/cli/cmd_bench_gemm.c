/* cmd_bench_gemm.c: `tpsplit bench gemm`: its options, messages, table and JSON; the
 * checking and timing are kernels/bench/bench_gemm.cu's (kernels/bench/bench.h).
 *
 * Rows measured: every token count T of --tokens and every ceil(T/TP) for each TP of --tp
 * (the row counts of the replicated and of the split GEMM).  With one GPU there is no
 * all-gather: the table holds GEMM times only and says so.
 * Table (src/io/table.c reads it): '#' provenance and check lines, '#@ key: value' metadata,
 * then rows, time_us (median), min_us, max_us, tflops, gbps [gemm_us quant_us] [event_us].
 * Units: time in us, tflops = 2 M N K / time / 1e12, gbps = (weight bytes incl. scales +
 * 2 M K + 2 M N) / time / 1e9 (the fewest bytes a GEMM must move). */
#include "config.h"
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <gsl/gsl_sort_int.h>
#include "src/cli/cmdopt.h"
#include "src/cli/tpsplit.h"
#include "src/base/err.h"
#include "src/base/util.h"
#include "src/base/jsonout.h"
#include "src/cli/cmd_bench.h"
#include "kernels/gemm/w8quant.h"

static const char *const default_tokens =
    "1,2,4,6,8,12,16,24,32,48,64,96,128,256,384,512,1024,2048,4096,8192,16384";

typedef struct {
  tps_bench_gemm_opts k;  /* what kernels/ gets */
  long *tokens, *tps;
  int *rows;
  const char *out;
  int json;
} gemm_opts;

typedef struct {
  const gemm_opts *o;
  char **lines; size_t nlines, caplines; /* '# check', environment and config lines */
  json_t *jchecks;
} gemm_log;

static void addline(gemm_log *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addline(gemm_log *g, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "bench gemm: %s\n", buf);
  if (g->nlines == g->caplines) {
    size_t cap = g->caplines ? 2 * g->caplines : 64;
    char **nl = realloc(g->lines, cap * sizeof *nl);
    if (!nl) return;
    g->lines = nl;
    g->caplines = cap;
  }
  if ((g->lines[g->nlines] = strdup(buf))) g->nlines++;
}

static const char *verdict(int ok) { return ok ? "ok" : "FAIL"; }

/* on_check: one '# check' line and one JSON object per check. */
static void on_check(void *arg, const tps_bench_gemm_check *c) {
  gemm_log *g = arg;
  const char *path = tps_path_name(g->o->k.path);
  static const char *const kinds[] = {"reference", "fast_vs_ref_kernel", "split_vs_replicated"};
  json_t *j = json_object();
  json_object_set_new(j, "kind", json_string(kinds[c->kind]));
  json_object_set_new(j, "m", json_integer(c->m));
  json_object_set_new(j, "ok", json_boolean(c->ok));
  switch (c->kind) {
  case TPS_BENCH_CHECK_REFERENCE:
    addline(g, "check %s vs float64 CPU reference: M=%d (%s): rel_err %.3g, max|diff| %.4g, non-finite %ld: %s",
            path, c->m, c->all_rows ? "all rows" : "8 sampled rows", c->rel, c->max_abs_diff, c->non_finite, verdict(c->ok));
    tps_json_set_num(j, "rel_err", c->rel);
    tps_json_set_num(j, "max_abs_diff", c->max_abs_diff);
    json_object_set_new(j, "rows_checked", json_integer(c->rows_checked));
    json_object_set_new(j, "non_finite", json_integer(c->non_finite));
    break;
  case TPS_BENCH_CHECK_FAST_VS_REF:
    addline(g, "check %s vs %s kernel: M=%d all rows: rel_diff %.3g, max|diff| %.4g, %ld of %ld differ: %s", path,
            tps_path_name(c->reference), c->m, c->rel, c->max_abs_diff, c->differing, c->elements, verdict(c->ok));
    tps_json_set_num(j, "rel_diff", c->rel);
    tps_json_set_num(j, "max_abs_diff", c->max_abs_diff);
    break;
  default:
    addline(g, "check split vs replicated: T=%d TP=%d shards of %d rows: max|diff| %.4g (max|y| %.3g), rel_diff %.3g, "
            "%ld of %ld differ, same config %s%s: %s",
            c->m, c->tp, c->shard_rows, c->max_abs_diff, c->max_abs_y, c->rel, c->differing, c->elements,
            c->same_config ? "yes" : "no", c->bitwise_required ? " (bitwise required)" : "", verdict(c->ok));
    json_object_set_new(j, "tp", json_integer(c->tp));
    json_object_set_new(j, "shard_rows", json_integer(c->shard_rows));
    tps_json_set_num(j, "max_abs_diff", c->max_abs_diff);
    tps_json_set_num(j, "max_abs_y", c->max_abs_y);
    tps_json_set_num(j, "rel_diff", c->rel);
    json_object_set_new(j, "elements_differing", json_integer(c->differing));
    json_object_set_new(j, "same_config", json_boolean(c->same_config));
    break;
  }
  json_array_append_new(g->jchecks, j);
}

/* on_checked: the overrides that were set, every row's kernel configuration, the timer. */
static void on_checked(void *arg, const tps_bench_gemm_result *r) {
  gemm_log *g = arg;
  const char *e;
  for (size_t i = 0; (e = tps_w8_override_name(i)) != NULL; i++)
    if (getenv(e)) addline(g, "environment: %s=%s", e, getenv(e));
  static const char *const envs[] = {"TPS_FLUSH", "TPS_TIMER", "TPS_CUPTI_LIB", "TPS_FP8B_PAD", "TPS_CUBLASLT_LIB"};
  for (size_t i = 0; i < sizeof envs / sizeof *envs; i++)
    if (getenv(envs[i])) addline(g, "environment: %s=%s", envs[i], getenv(envs[i]));
  if (g->o->k.configs_only) return; /* the table is the configurations */
  if (g->o->k.check_per_config) addline(g, "checks: 8 sampled rows at the first M of each kernel configuration (--check-per-config)");
  for (int i = 0; i < g->o->k.nrows; i++) addline(g, "config M=%d: %s", r->rows[i].m, r->rows[i].config);
  if (r->failed || g->o->k.check_only) return;
  char timer[2 * TPS_BENCH_WHY];
  tps_bench_timer_line(&r->prov, timer, sizeof timer);
  fprintf(stderr, "bench gemm: timing %d candidates, %d samples each (flush %zu bytes)\n", g->o->k.nrows * r->nparts,
          g->o->k.samples, r->prov.flush_bytes);
  fprintf(stderr, "bench gemm: timer: %s\n", timer);
}

static int parse_flush(void *dst, const char *arg, char *why, size_t whysz) {
  if (!strcmp(arg, "write")) *(int *)dst = 1;
  else if (!strcmp(arg, "write-read")) *(int *)dst = 0;
  else { snprintf(why, whysz, "write or write-read"); return -1; }
  return 0;
}

/* Options (the one parser, src/cli/cmdopt.h), then the rows: each T and ceil(T/TP), sorted,
 * distinct.  -1: --help/--version. */
static int parse(int argc, char **argv, gemm_opts *g) {
  tps_bench_gemm_opts *o = &g->k;
  const tps_path *path = NULL;
  long samples = 50, warmup = 3, device = 0, seed = (long)time(NULL);
  o->k = 5120; o->n = 1792;
  g->out = "-";
  const char *tokens = default_tokens, *tps = "8";
  char paths[128], phelp[200];
  snprintf(phelp, sizeof phelp, "kernel path (required): %s", tps_path_names(TPS_PATH_F_BENCH, paths, sizeof paths));
  const tps_cmdopt own[] = {
    {.name = "path", .kind = TPS_ARG_FN, .metavar = "P", .dst = &path, .parse = tps_bench_path, .help = phelp},
    {.name = "k", .kind = TPS_ARG_FN, .metavar = "K", .dst = &o->k, .parse = tps_bench_k64_big,
     .help = "inner dimension, multiple of 64 (fp8-block: 128) (default 5120)"},
    {.name = "n", .kind = TPS_ARG_FN, .metavar = "N", .dst = &o->n, .parse = tps_bench_n16,
     .help = "output columns, multiple of 16 (default 1792)"},
    {.name = "tokens", .kind = TPS_ARG_STR, .metavar = "LIST", .dst = &tokens,
     .help = "token counts T: '6,12,24' or 'A..B' (powers of two) (default prefill chunk sizes and powers of two, 1..16384)"},
    {.name = "tp", .kind = TPS_ARG_STR, .metavar = "LIST", .dst = &tps, .help = "TP sizes; rows ceil(T/TP) are measured too"},
    {.name = "check-only", .kind = TPS_ARG_FLAG, .dst = &o->check_only, .help = "run the checks, time nothing"},
    {.name = "check-per-config", .kind = TPS_ARG_FLAG, .dst = &o->check_per_config,
     .help = "check 8 sampled rows at the first M of each kernel configuration only (default: at every M); the all-row "
             "checks stay"},
    {.name = "configs", .kind = TPS_ARG_FLAG, .dst = &o->configs_only,
     .help = "check and time nothing: the kernel configuration each row would run (cuBLASLt's heuristic, our dispatch), "
             "as segments of rows"},
    {.name = "samples", .kind = TPS_ARG_LONG, .metavar = "N", .dst = &samples, .min = 1, .max = 100000, .help = "samples per row"},
    {.name = "warmup", .kind = TPS_ARG_LONG, .metavar = "N", .dst = &warmup, .min = 0, .max = 100000, .help = "untimed rounds"},
    {.name = "flush", .kind = TPS_ARG_FN, .metavar = "MODE", .dst = &o->flush_write_only, .parse = parse_flush,
     .help = "L2 flush before each replay: write-read (default: write 2x L2, then read it back, so no dirty write-back "
             "overlaps the GEMM) or write"},
    {.name = "device", .kind = TPS_ARG_LONG, .metavar = "D", .dst = &device, .min = 0, .max = 100000, .help = "CUDA device"},
    {.name = "seed", .kind = TPS_ARG_LONG, .metavar = "S", .dst = &seed, .min = 0, .max = TPS_CMDOPT_BIG,
     .help = "random seed (default: from the clock; printed)"},
  };
  const tps_cmdspec spec = {
    .name = "bench gemm",
    .synopsis = "--path P [options]",
    .about = "Check one GEMM path against a float64 CPU reference (and split against replicated),\n"
             "then time it on one GPU: Y[M x N] = X[M x K] W[N x K]^T, bf16 in/out.",
    .common = TPS_OPT(TPS_OI_OUTPUT) | TPS_OPT(TPS_OI_JSON),
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .output_metavar = "F",
    .text = {[TPS_OI_OUTPUT] = "write the table to F (default stdout)",
             [TPS_OI_JSON] = "print the results (and checks) as JSON on stdout"},
    .notes = "Method: the checks first (any failure: exit 1, nothing timed); then one CUDA graph per\n"
             "row, an L2 flush before every replay outside the timed span, the median of the samples,\n"
             "rows alternated in every round.\n"
             "Table: '#' provenance lines, '#@ key: value' metadata, then columns rows, time_us\n"
             "(median), min_us, max_us, tflops, gbps (native-fp8 and fp8-block add gemm_us and\n"
             "quant_us: the FP8 GEMM and the activation quantization timed alone; with the CUPTI\n"
             "timer, event_us: the median of CUDA events around the same replays).  Time: the span\n"
             "of the replay's kernels from CUPTI activity records where libcupti loads, else CUDA\n"
             "events (TPS_TIMER=events forces events; TPS_CUPTI_LIB names the library).",
    .exit_status = "0 ok, 1 a check failed or no GPU, 2 usage error.",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  int rc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (rc >= 0) return rc == TPS_EXIT_OK ? -1 : rc;
  g->out = v.output ? v.output : "-";
  g->json = v.json;
  tps_cmdopt_free(&v);
  o->samples = (int)samples;
  o->warmup = (int)warmup;
  o->device = (int)device;
  o->seed = (unsigned long)seed;
  char names[128];
  if (o->configs_only && (o->check_only || g->json)) {
    tps_usage_msg("--configs takes neither --check-only nor --json");
    return TPS_EXIT_USAGE;
  }
  if (!path) {
    tps_usage_msg("--path is required (%s)", tps_path_names(TPS_PATH_F_BENCH, names, sizeof names));
    return TPS_EXIT_USAGE;
  }
  o->path = path->id;
  tps_err e;
  tps_err_clear(&e);
  if (tps_parse_tokens(tokens, &g->tokens, &o->ntokens, &e)) { tps_usage_msg("--tokens '%s': %s", tokens, e.msg); return TPS_EXIT_USAGE; }
  if (tps_parse_tokens(tps, &g->tps, &o->ntps, &e)) { tps_usage_msg("--tp '%s': %s", tps, e.msg); return TPS_EXIT_USAGE; }
  o->tokens = g->tokens;
  o->tps = g->tps;
  for (size_t i = 0; i < o->ntokens; i++)
    if (o->tokens[i] > 65536) { tps_usage_msg("token count %ld above 65536", o->tokens[i]); return TPS_EXIT_USAGE; }
  for (size_t i = 0; i < o->ntps; i++)
    if (o->tps[i] < 1 || o->tps[i] > 1024) { tps_usage_msg("impossible TP %ld (1..1024)", o->tps[i]); return TPS_EXIT_USAGE; }
  /* the W8A16 overrides the table would record: an unknown one or a value not allowed
   * fails here, before any GPU work (the plan would refuse it too) */
  char why[256];
  if (tps_w8_check_env(why, sizeof why)) { tps_usage_msg("%s", why); return TPS_EXIT_USAGE; }
  g->rows = malloc(o->ntokens * (o->ntps + 1) * sizeof *g->rows);
  if (!g->rows) { tps_die_msg("out of memory"); return TPS_EXIT_FAIL; }
  int nrows = 0;
  for (size_t i = 0; i < o->ntokens; i++) {
    g->rows[nrows++] = (int)o->tokens[i];
    for (size_t j = 0; j < o->ntps; j++) g->rows[nrows++] = (int)((o->tokens[i] + o->tps[j] - 1) / o->tps[j]);
  }
  gsl_sort_int(g->rows, 1, (size_t)nrows);
  int u = 0;
  for (int i = 0; i < nrows; i++) if (u == 0 || g->rows[u - 1] != g->rows[i]) g->rows[u++] = g->rows[i];
  o->rows = g->rows;
  o->nrows = u;
  return TPS_EXIT_OK;
}

static const char *timer_name(tps_timer t) { return t == TPS_TIMER_SPAN ? "cupti-span" : "events"; }

/* The provenance lines every table of bench gemm starts with: command, date, GPU, software. */
static void write_prov(FILE *f, const tps_bench_prov *pv, const char *date) {
  fprintf(f, "# command: %s\n", tps_cmdline());
  fprintf(f, "# date: %s\n", date);
  fprintf(f, "# gpu: %s, %d SMs, compute capability %d.%d, L2 %d bytes, peak SM clock %d MHz, memory clock %d MHz\n",
          pv->gpu_name, pv->sms, pv->cc_major, pv->cc_minor, pv->l2_bytes, pv->sm_clock_mhz, pv->mem_clock_mhz);
  fprintf(f, "# driver (CUDA API) %d.%d, CUDA runtime %d.%d, cuBLASLt %zu\n", pv->driver_api / 1000,
          pv->driver_api % 1000 / 10, pv->runtime / 1000, pv->runtime % 1000 / 10, pv->cublaslt);
}

static void write_table(FILE *f, const gemm_opts *g, const gemm_log *lg, const tps_bench_gemm_result *r, const char *date) {
  const tps_bench_gemm_opts *o = &g->k;
  const tps_bench_prov *pv = &r->prov;
  const int per = r->nparts, span = pv->timer == TPS_TIMER_SPAN;
  char timer[2 * TPS_BENCH_WHY];
  tps_bench_timer_line(pv, timer, sizeof timer);
  fprintf(f, "# tpsplit bench gemm: GEMM times on one GPU, Y[M x N] = X[M x K] W[N x K]^T, bf16 in/out\n");
  write_prov(f, pv, date);
  fprintf(f, "# one GPU: no all-gather measured; this file holds GEMM times only (nothing from a model)\n");
  fprintf(f, "# rows = each T of --tokens and ceil(T/TP) for each TP of --tp;");
  fprintf(f, " tokens");
  for (size_t i = 0; i < o->ntokens; i++) fprintf(f, "%s%ld", i ? "," : " ", o->tokens[i]);
  fprintf(f, "; tp");
  for (size_t i = 0; i < o->ntps; i++) fprintf(f, "%s%ld", i ? "," : " ", o->tps[i]);
  fprintf(f, "\n# method: CUDA graph per row, L2 flush (%zu-byte write%s) before every replay outside the timed span, "
             "median of %d samples (min, max), rows alternated in every round, seed %lu\n",
          (size_t)pv->l2_bytes * 2, o->flush_write_only ? "" : ", then read back", o->samples, o->seed);
  fprintf(f, "# timer: time_us, min_us, max_us = %s\n", timer);
  if (pv->fallbacks)
    fprintf(f, "# timer: %ld replays left no CUPTI record; their CUDA event times are among the samples\n", pv->fallbacks);
  fprintf(f, "# tflops = 2 M N K / time; gbps = (weights %.0f bytes + 2 M K + 2 M N) / time\n", r->weight_bytes);
  if (per == 3) fprintf(f, "# %s: time_us = quantization + FP8 GEMM in one graph; gemm_us and quant_us timed alone\n", tps_path_name(o->path));
  for (size_t i = 0; i < lg->nlines; i++) fprintf(f, "# %s\n", lg->lines[i]);
  fprintf(f, "#@ gpu: %s\n#@ k: %d\n#@ n: %d\n#@ path: %s\n#@ timer: %s\n", pv->gpu_name, o->k, o->n,
          tps_path_name(o->path), timer_name(pv->timer));
  fprintf(f, "rows\ttime_us\tmin_us\tmax_us\ttflops\tgbps%s%s\n", per == 3 ? "\tgemm_us\tquant_us" : "",
          span ? "\tevent_us" : "");
  for (int i = 0; i < o->nrows; i++) {
    const tps_bench_gemm_row *row = &r->rows[i];
    const tps_timing *t = &row->t[0];
    const double m = row->m, fl = 2.0 * m * o->n * o->k, by = r->weight_bytes + 2.0 * m * o->k + 2.0 * m * o->n;
    fprintf(f, "%d\t%.3f\t%.3f\t%.3f\t%.2f\t%.1f", row->m, t->median_us, t->min_us, t->max_us,
            fl / t->median_us / 1e6, by / t->median_us / 1e3);
    if (per == 3) fprintf(f, "\t%.3f\t%.3f", row->t[1].median_us, row->t[2].median_us);
    if (span) fprintf(f, "\t%.3f", row->ev[0].median_us);
    fputc('\n', f);
  }
}

/* --configs: the rows in segments of one configuration (consecutive rows of the list with
 * the same configuration id), each with its first and last row. */
static void write_configs(FILE *f, const gemm_opts *g, const tps_bench_gemm_result *r, const char *date) {
  const tps_bench_gemm_opts *o = &g->k;
  const tps_bench_prov *pv = &r->prov;
  fprintf(f, "# tpsplit bench gemm --configs: the kernel configuration each row count runs (nothing checked or timed)\n");
  write_prov(f, pv, date);
  fprintf(f, "# segments: consecutive rows of the list with one configuration (id: a hash of the whole algorithm)\n");
  fprintf(f, "#@ gpu: %s\n#@ k: %d\n#@ n: %d\n#@ path: %s\n", pv->gpu_name, o->k, o->n, tps_path_name(o->path));
  fprintf(f, "first_row\tlast_row\trows_listed\tconfig_id\tconfig\n");
  for (int i = 0; i < o->nrows;) {
    int j = i;
    while (j + 1 < o->nrows && r->rows[j + 1].config_id == r->rows[i].config_id) j++;
    fprintf(f, "%d\t%d\t%d\t%016llx\t%s\n", r->rows[i].m, r->rows[j].m, j - i + 1,
            (unsigned long long)r->rows[i].config_id, r->rows[i].config);
    i = j + 1;
  }
}

static int print_json(const gemm_opts *g, const gemm_log *lg, const tps_bench_gemm_result *r, const char *date) {
  const tps_bench_gemm_opts *o = &g->k;
  const int per = r->nparts, span = r->prov.timer == TPS_TIMER_SPAN;
  json_t *root = json_object();
  json_object_set_new(root, "path", json_string(tps_path_name(o->path)));
  json_object_set_new(root, "gpu", json_string(r->prov.gpu_name));
  json_object_set_new(root, "k", json_integer(o->k));
  json_object_set_new(root, "n", json_integer(o->n));
  json_object_set_new(root, "date", json_string(date));
  json_object_set_new(root, "samples", json_integer(o->samples));
  json_object_set_new(root, "timer", json_string(timer_name(r->prov.timer)));
  json_t *jr = json_array();
  for (int i = 0; i < o->nrows; i++) {
    const tps_bench_gemm_row *row = &r->rows[i];
    const tps_timing *t = &row->t[0];
    const double m = row->m;
    json_t *x = json_object();
    json_object_set_new(x, "rows", json_integer(row->m));
    tps_json_set_num(x, "time_us", t->median_us);
    tps_json_set_num(x, "min_us", t->min_us);
    tps_json_set_num(x, "max_us", t->max_us);
    tps_json_set_num(x, "tflops", 2.0 * m * o->n * o->k / t->median_us / 1e6);
    tps_json_set_num(x, "gbps", (r->weight_bytes + 2.0 * m * o->k + 2.0 * m * o->n) / t->median_us / 1e3);
    if (per == 3) { tps_json_set_num(x, "gemm_us", row->t[1].median_us); tps_json_set_num(x, "quant_us", row->t[2].median_us); }
    if (span) tps_json_set_num(x, "event_us", row->ev[0].median_us);
    json_array_append_new(jr, x);
  }
  json_object_set_new(root, "rows", jr);
  json_object_set(root, "checks", lg->jchecks);
  return tps_json_print(root);
}

/* Checked and timed: the table (unless only checks or JSON on stdout) and the JSON. */
static int write_results(const gemm_opts *g, const gemm_log *lg, const tps_bench_gemm_result *r, tps_outfile *of) {
  char date[32];
  tps_bench_date("%Y-%m-%dT%H:%M:%SZ", date, sizeof date);
  tps_err e;
  tps_err_clear(&e);
  if (of->fp) {
    if (g->k.configs_only) write_configs(of->fp, g, r, date);
    else write_table(of->fp, g, lg, r, date);
    if (tps_out_commit(of, &e)) { tps_err_print(&e); return TPS_EXIT_FAIL; }
  }
  return g->json && print_json(g, lg, r, date) ? TPS_EXIT_FAIL : TPS_EXIT_OK;
}

/* The GEMM run on a GPU that can be opened: the exit code. */
static int run(const gemm_opts *g, gemm_log *lg, tps_outfile *of) {
  tps_bench_gemm_opts o = g->k;
  tps_bench_gemm_result r;
  memset(&r, 0, sizeof r);
  r.rows = calloc((size_t)o.nrows, sizeof *r.rows);
  if (!r.rows) return TPS_EXIT_FAIL;
  o.arg = lg;
  o.on_check = on_check;
  o.on_checked = on_checked;
  fprintf(stderr, "bench gemm: preparing %s weights (%d x %d)\n", tps_path_name(o.path), o.n, o.k);
  const int st = tps_bench_gemm_run(&o, &r);
  int ret = st == TPS_OK ? TPS_EXIT_OK : st == TPS_EINVAL ? TPS_EXIT_USAGE : TPS_EXIT_FAIL;
  if (st != TPS_OK && r.why[0]) tps_die_msg("%s", r.why);
  if (ret == TPS_EXIT_OK && r.failed) {
    tps_die_msg("a check failed (see above); nothing timed, no table written");
    ret = TPS_EXIT_FAIL;
  }
  if (ret == TPS_EXIT_OK && o.check_only && !g->json) fprintf(stderr, "bench gemm: all checks passed\n");
  if (ret == TPS_EXIT_OK && !o.check_only) ret = write_results(g, lg, &r, of);
  else if (g->json && ret != TPS_EXIT_USAGE) {
    json_t *root = json_object();
    json_object_set_new(root, "path", json_string(tps_path_name(o.path)));
    json_object_set_new(root, "ok", json_boolean(ret == TPS_EXIT_OK));
    json_object_set(root, "checks", lg->jchecks);
    tps_json_print(root);
  }
  free(r.rows);
  return ret;
}

int cmd_bench_gemm(int argc, char **argv) {
  gemm_opts g;
  memset(&g, 0, sizeof g);
  int ret = parse(argc, argv, &g);
  tps_outfile of;
  memset(&of, 0, sizeof of);
  /* the output's temporary file is created first, so that a directory that does not exist
   * or cannot be written fails at once (exit 2), not after the GPU work; it takes its name
   * at the end */
  const char *dest = g.k.check_only || (g.json && !strcmp(g.out, "-")) ? NULL : g.out;
  tps_err e;
  tps_err_clear(&e);
  if (ret == TPS_EXIT_OK && dest && tps_out_open(&of, dest, &e)) {
    tps_err_print(&e);
    ret = TPS_EXIT_USAGE;
  }
  char why[TPS_BENCH_WHY];
  int ndev = 0;
  if (ret == TPS_EXIT_OK && tps_bench_gpus(&ndev, why, sizeof why) != TPS_OK) {
    tps_die_msg("no GPU can be opened: %s", why);
    ret = TPS_EXIT_FAIL;
  }
  if (ret == TPS_EXIT_OK && g.k.device >= ndev) {
    tps_die_msg("--device %d: only %d device(s)", g.k.device, ndev);
    ret = TPS_EXIT_USAGE;
  }
  if (ret == TPS_EXIT_OK) {
    gemm_log lg = {&g, NULL, 0, 0, json_array()};
    ret = run(&g, &lg, &of);
    for (size_t i = 0; i < lg.nlines; i++) free(lg.lines[i]);
    free(lg.lines);
    json_decref(lg.jchecks);
  }
  tps_out_abort(&of); /* no-op after a commit; otherwise removes the temporary file */
  free(g.tokens); free(g.tps); free(g.rows);
  return ret < 0 ? TPS_EXIT_OK : ret;
}
