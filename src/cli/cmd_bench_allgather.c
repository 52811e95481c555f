/* cmd_bench_allgather.c: `tpsplit bench allgather`: its options, messages and output; the
 * measuring is kernels/bench/bench_allgather.cu's (kernels/bench/bench.h), the command skeleton
 * src/cli/cmd_bench.c's.
 *
 * The output is the layout of nccl-tests' all_gather_perf (current version: redop `none`,
 * root `-1`), so that src/io/ncclt.c reads our rows and nccl-tests logs alike and users can
 * diff the two:
 *   size, count (elements per rank), type, redop, root, then out-of-place and in-place
 *   time (us, the median: not nccl-tests' mean), algbw = size / time / 1e3 (GB/s),
 *   busbw = algbw * (n-1)/n, #wrong.
 * Units: bytes, us, GB/s (1e9 B/s). */
#include "config.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "src/cli/cmdopt.h"
#include "src/cli/tpsplit.h"
#include "src/base/err.h"
#include "src/base/util.h"
#include "src/base/jsonout.h"
#include "src/cli/cmd_bench.h"

typedef struct {
  tps_bench_cmd c;        /* first: the command skeleton's view */
  tps_bench_ag_opts o;
  tps_bench_ag_result r;
  const char *bytes_arg;
} ag_cmd;

static tps_bench_world_opts defaults(void) {
  tps_bench_world_opts d = {.tp = 1, .gather = tps_gather_fallback(), .samples = 50, .warmup = 5,
                            .cap_bytes = (size_t)tps_gather_cap_default()};
  return d;
}

/* "64", "4K", "2M", "1G" (binary, as nccl-tests' -b/-e). */
static int parse_size(const char *s, long *out) {
  char *end;
  double v = strtod(s, &end);
  if (end == s || v < 0) return -1;
  long mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1L << 10, end++;
  else if (*end == 'M' || *end == 'm') mul = 1L << 20, end++;
  else if (*end == 'G' || *end == 'g') mul = 1L << 30, end++;
  if (*end) return -1;
  *out = (long)(v * (double)mul);
  return 0;
}

/* --bytes: A..B (powers of two) or a comma list, with K/M/G suffixes, into sizes[]. */
static int parse_sizes(const char *bytes, long **sizes, size_t *n) {
  const char *dots = strstr(bytes, "..");
  *n = 0;
  if (dots) {
    char a[64];
    long lo, hi;
    const size_t la = (size_t)(dots - bytes);
    if (la == 0 || la >= sizeof a) { tps_usage_msg("--bytes '%s': A..B", bytes); return TPS_EXIT_USAGE; }
    memcpy(a, bytes, la);
    a[la] = 0;
    if (parse_size(a, &lo) || parse_size(dots + 2, &hi) || lo < 1 || hi < lo || hi > (4L << 30)) {
      tps_usage_msg("--bytes '%s': A..B with 1 <= A <= B <= 4G", bytes);
      return TPS_EXIT_USAGE;
    }
    for (long x = lo; x <= hi; x *= 2) (*n)++;
    if (!(*sizes = calloc(*n, sizeof **sizes))) return TPS_EXIT_FAIL;
    size_t k = 0;
    for (long x = lo; x <= hi; x *= 2) (*sizes)[k++] = x;
    return TPS_EXIT_OK;
  }
  char **items;
  size_t ni;
  if (tps_parse_list(bytes, &items, &ni) != 0 || ni == 0) { tps_usage_msg("--bytes '%s'", bytes); return TPS_EXIT_USAGE; }
  int rc = (*sizes = calloc(ni, sizeof **sizes)) ? TPS_EXIT_OK : TPS_EXIT_FAIL;
  for (size_t k = 0; k < ni && rc == TPS_EXIT_OK; k++) {
    long *v = *sizes;
    if (parse_size(items[k], &v[k]) || v[k] < 1 || (k && v[k] <= v[k - 1]) || v[k] > (4L << 30)) {
      tps_usage_msg("--bytes '%s': sizes must be positive and increasing", bytes);
      rc = TPS_EXIT_USAGE;
    }
  }
  tps_free_list(items, ni);
  *n = ni;
  return rc;
}

static int validate(tps_bench_cmd *c) {
  ag_cmd *a = (ag_cmd *)c;
  long *sizes = NULL;
  int rc = parse_sizes(a->bytes_arg, &sizes, &a->o.nsizes);
  a->o.sizes = sizes;
  if (rc != TPS_EXIT_OK) return rc;
  const long max = sizes[a->o.nsizes - 1];
  if (tps_gather_is_capped(c->w.gather) && (size_t)max / c->w.tp > c->w.cap_bytes) {
    tps_die_msg("--gather %s: %ld bytes over %d ranks exceed the per-rank cap of %zu (use %s)",
                tps_gather_name(tps_gather_capped()), max, c->w.tp, c->w.cap_bytes, tps_gather_name(tps_gather_rule()));
    return TPS_EXIT_USAGE;
  }
  if (!(a->r.rows = calloc(a->o.nsizes, sizeof *a->r.rows))) return TPS_EXIT_FAIL;
  return TPS_EXIT_OK;
}

static int run(tps_bench_cmd *c) {
  ag_cmd *a = (ag_cmd *)c;
  a->o.w = c->w;
  return tps_bench_allgather_run(&a->o, &a->r);
}

static void on_row(void *arg, size_t i, int phase, const void *row) {
  const ag_cmd *a = arg;
  const tps_bench_ag_row *r = row;
  if (phase != TPS_BENCH_ROW_TIMED) return;
  tps_die_msg("%zu bytes (%zu/%zu), %s: %.2f us out-of-place, %.2f us in-place, %d samples, %ld+%ld wrong",
          r->size, i + 1, a->o.nsizes, tps_gather_name(r->used), r->oop.median_us, r->ip.median_us, a->o.w.samples,
          r->wrong_oop, r->wrong_ip);
  if (r->wrong_oop || r->wrong_ip) tps_die_msg("%zu bytes: wrong elements gathered", r->size);
}

static void fmt_time(char *b, size_t n, double us) { /* nccl-tests getFloatStr, width 7 */
  if (us < 1e4) snprintf(b, n, "%7.2f", us);
  else if (us < 1e5) snprintf(b, n, "%7.1f", us);
  else if (us < 1e7) snprintf(b, n, "%7.0f", us);
  else snprintf(b, n, "%7.1e", us);
}

static int write_log(tps_bench_cmd *c, FILE *fp) {
  const ag_cmd *a = (ag_cmd *)c;
  const tps_bench_ag_opts *o = &a->o;
  const tps_bench_prov *pv = &a->r.w.prov;
  const int n = o->w.tp;
  char driver[64], rt[16], date[32];
  tps_bench_driver(pv, driver, sizeof driver);
  tps_bench_cuda_version(pv->runtime, rt, sizeof rt);
  tps_bench_date("%Y-%m-%d %H:%M:%S UTC", date, sizeof date);
  fprintf(fp, "# tpsplit bench allgather %s (nccl-tests all_gather_perf layout; NCCL %s)\n", PACKAGE_VERSION, pv->nccl);
  fprintf(fp, "# Collective test starting: all_gather_perf\n");
  fprintf(fp, "# nThread %d nGpus 1 minBytes %ld maxBytes %ld step: 2(factor) warmup iters: %d iters: %d agg iters: 1 validation: 1 graph: 1\n",
          pv->mpi ? 1 : n, o->sizes[0], o->sizes[o->nsizes - 1], o->w.warmup, o->w.samples);
  fprintf(fp, "# Gather: %s (custom one-shot NVLink while the per-rank input is <= %zu bytes).  time = MEDIAN of %d\n"
              "# samples (graph per op, L2 flush %s and device barrier untimed, each sample the max over ranks),\n"
              "# not nccl-tests' mean.  Date: %s.  Driver %s, CUDA runtime %s.  Command: %s\n",
          tps_gather_name(o->w.gather), o->w.cap_bytes, o->w.samples, "(2x L2)", date, driver, rt, tps_cmdline());
  fprintf(fp, "# Timer: %s\n", pv->timer_text);
  fprintf(fp, "#\n# Using devices\n");
  for (int r = 0; r < n; r++)
    fprintf(fp, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%s] %s\n", r, (int)getpid(), pv->host,
            pv->mpi ? 0 : r, pv->busid[r], pv->gpu_name);
  fprintf(fp, "#\n");
  fprintf(fp, "#                                                              out-of-place                       in-place          \n");
  fprintf(fp, "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong \n");
  fprintf(fp, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         \n");
  double busbw_sum = 0;
  for (size_t i = 0; i < o->nsizes; i++) {
    const tps_bench_ag_row *r = &a->r.rows[i];
    if (!r->size) continue;
    char t1[32], t2[32];
    fmt_time(t1, sizeof t1, r->oop.median_us);
    fmt_time(t2, sizeof t2, r->ip.median_us);
    const double a1 = (double)r->size / r->oop.median_us / 1e3, a2 = (double)r->size / r->ip.median_us / 1e3;
    const double f = (double)(n - 1) / n;
    busbw_sum += a1 * f;
    fprintf(fp, "%12zu  %12zu  %8s  %6s  %6d  %7s  %6.2f  %6.2f  %6ld  %7s  %6.2f  %6.2f  %6ld\n", r->size, r->count,
            "bfloat16", "none", -1, t1, a1, a1 * f, r->wrong_oop, t2, a2, a2 * f, r->wrong_ip);
  }
  fprintf(fp, "# Out of bounds values : 0 OK\n");
  fprintf(fp, "# Avg bus bandwidth    : %g \n#\n", o->nsizes ? busbw_sum / (double)o->nsizes : 0.0);
  fprintf(fp, "# Collective test concluded: all_gather_perf\n");
  return ferror(fp) ? -1 : 0;
}

/* One placement's columns (out-of-place "oop" or in-place "ip"), nccl-tests' -J names:
 * PRE_time_us, PRE_min_us, PRE_max_us, PRE_algbw_gbps, PRE_busbw_gbps (f = (n-1)/n), PRE_wrong. */
static void json_placement(json_t *x, const char *pre, const tps_timing *t, size_t size, double f, long wrong) {
  char key[32];
  const double algbw = (double)size / t->median_us / 1e3;
  snprintf(key, sizeof key, "%s_time_us", pre);
  tps_json_set_num(x, key, t->median_us);
  snprintf(key, sizeof key, "%s_min_us", pre);
  tps_json_set_num(x, key, t->min_us);
  snprintf(key, sizeof key, "%s_max_us", pre);
  tps_json_set_num(x, key, t->max_us);
  snprintf(key, sizeof key, "%s_algbw_gbps", pre);
  tps_json_set_num(x, key, algbw);
  snprintf(key, sizeof key, "%s_busbw_gbps", pre);
  tps_json_set_num(x, key, algbw * f);
  snprintf(key, sizeof key, "%s_wrong", pre);
  json_object_set_new(x, key, json_integer(wrong));
}

static int print_json(tps_bench_cmd *c) {
  const ag_cmd *a = (ag_cmd *)c;
  const tps_bench_ag_opts *o = &a->o;
  const tps_bench_prov *pv = &a->r.w.prov;
  const int n = o->w.tp;
  char driver[64], date[32];
  tps_bench_driver(pv, driver, sizeof driver);
  tps_bench_date("%Y-%m-%d %H:%M:%S UTC", date, sizeof date);
  json_t *root = json_object(), *rows = json_array();
  json_object_set_new(root, "gpu_name", json_string(pv->gpu_name));
  json_object_set_new(root, "ranks", json_integer(n));
  json_object_set_new(root, "gather", json_string(tps_gather_name(o->w.gather)));
  json_object_set_new(root, "samples", json_integer(o->w.samples));
  json_object_set_new(root, "nccl", json_string(pv->nccl));
  json_object_set_new(root, "driver", json_string(driver));
  json_object_set_new(root, "date", json_string(date));
  const double f = (double)(n - 1) / n;
  for (size_t i = 0; i < o->nsizes; i++) {
    const tps_bench_ag_row *r = &a->r.rows[i];
    if (!r->size) continue;
    json_t *x = json_object();
    json_object_set_new(x, "size_bytes", json_integer((json_int_t)r->size));
    json_object_set_new(x, "count", json_integer((json_int_t)r->count));
    json_object_set_new(x, "type", json_string("bfloat16"));
    json_object_set_new(x, "gather", json_string(tps_gather_name(r->used)));
    json_placement(x, "oop", &r->oop, r->size, f, r->wrong_oop);
    json_placement(x, "ip", &r->ip, r->size, f, r->wrong_ip);
    json_array_append_new(rows, x);
  }
  json_object_set_new(root, "rows", rows);
  return tps_json_print(root);
}

int cmd_bench_allgather(int argc, char **argv) {
  ag_cmd a;
  memset(&a, 0, sizeof a);
  a.bytes_arg = "1K..64M";
  const tps_cmdopt own[] = {
    {.name = "bytes", .kind = TPS_ARG_STR, .metavar = "A..B", .dst = &a.bytes_arg,
     .help = "sizes of the whole gathered buffer, powers of two from A to B; K/M/G are binary; or a comma list S1,S2,..."},
  };
  a.c = (tps_bench_cmd){.name = "allgather", .own = own, .nown = sizeof own / sizeof own[0],
                        .synopsis = "[--tp N] [--bytes A..B | --bytes S1,S2,...] [--gather G] [--samples S] [--warmup W] "
                                    "[--cap-bytes B] [-o FILE] [--json]",
                        .about = "Time the all-gather alone over N GPUs and write the rows in the nccl-tests all_gather_perf\n"
                                 "layout (size count type redop root, then time algbw busbw #wrong out-of-place and in-place),\n"
                                 "which `tpsplit inspect` and `tpsplit fit` read like nccl-tests logs.",
                        .validate = validate, .run = run, .on_row = on_row, .write = write_log,
                        .json = print_json, .r = &a.r.w};
  a.c.w = defaults();
  const int rc = tps_bench_cmd_main(&a.c, argc, argv);
  free((void *)a.o.sizes);
  free(a.r.rows);
  return rc;
}
