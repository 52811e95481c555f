/* cmd_bench_split.c: `tpsplit bench split`: its options, messages, table and JSON; the
 * measuring is kernels/bench/bench_split.cu's (kernels/bench/bench.h), the command skeleton
 * src/cli/cmd_bench.c's.
 *
 * The table has the format of data/h20_tp8_fused_wqa_wkv.tsv (src/io/table.c reads it):
 * '#' provenance lines, '#@ key: value' metadata, then tokens, rows_per_rank,
 * replicated_us, split_us. */
#include "config.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "src/cli/cmdopt.h"
#include "src/cli/tpsplit.h"
#include "src/base/err.h"
#include "src/base/util.h"
#include "src/base/jsonout.h"
#include "src/cli/cmd_bench.h"

static const char *const default_tokens = "6,12,24,48,96,384,1024,2048,4096,8192,16384";

typedef struct {
  tps_bench_cmd c;        /* first: the command skeleton's view */
  tps_bench_split_opts o;
  tps_bench_split_result r;
  const char *tokens_arg;
  const tps_path *path;    /* --path, NULL: not given */
  long seed;
} split_cmd;

static tps_bench_world_opts defaults(void) {
  tps_bench_world_opts d = {.tp = 1, .gather = tps_gather_rule(), .samples = 50, .warmup = 5,
                            .cap_bytes = (size_t)tps_gather_cap_default()};
  return d;
}

static int validate(tps_bench_cmd *c) {
  split_cmd *s = (split_cmd *)c;
  tps_bench_split_opts *o = &s->o;
  char names[128];
  if (s->path) o->path = s->path->id;
  o->seed = (unsigned long)s->seed;
  if (!s->path) {
    tps_usage_msg("--path is required (%s)", tps_path_names(TPS_PATH_F_BENCH, names, sizeof names));
    return TPS_EXIT_USAGE;
  }
  tps_err err;
  tps_err_clear(&err);
  long *tokens;
  if (tps_parse_tokens(s->tokens_arg, &tokens, &o->ntok, &err) != 0) { tps_err_print(&err); return TPS_EXIT_USAGE; }
  o->tokens = tokens;
  if (o->ntok == 0 || o->tokens[0] < 1 || o->tokens[o->ntok - 1] > 1048576) {
    tps_usage_msg("--tokens '%s': token counts from 1 to 1048576", s->tokens_arg);
    return TPS_EXIT_USAGE;
  }
  if (tps_gather_is_capped(c->w.gather)) {
    for (size_t i = 0; i < o->ntok; i++) {
      const size_t stride = (size_t)((o->tokens[i] + c->w.tp - 1) / c->w.tp) * o->n * 2;
      if (stride > c->w.cap_bytes) {
        tps_die_msg("--gather %s: %ld tokens at tp %d put %zu bytes on each rank, over the cap of %zu (use %s)",
                    tps_gather_name(tps_gather_capped()), o->tokens[i], c->w.tp, stride, c->w.cap_bytes,
                    tps_gather_name(tps_gather_rule()));
        return TPS_EXIT_USAGE;
      }
    }
  }
  s->r.rows = calloc(o->ntok, sizeof *s->r.rows);
  if (!s->r.rows) { tps_die_msg("out of memory"); return TPS_EXIT_FAIL; }
  return TPS_EXIT_OK;
}

static int run(tps_bench_cmd *c) {
  split_cmd *s = (split_cmd *)c;
  s->o.w = c->w;
  return tps_bench_split_run(&s->o, &s->r);
}

/* The path name in '#@ path' and JSON "path": the model path the measurement stands for
 * (our w8a16 kernels measure the model's marlin-w8a16), else the path's own name. */
static const char *model_path(tps_path_id p) {
  return tps_path_record_name(tps_path_get(p));
}

static void on_row(void *arg, size_t i, int phase, const void *row) {
  const split_cmd *s = arg;
  const tps_bench_split_row *r = row;
  const long T = s->o.tokens[i];
  const size_t n = s->o.ntok;
  if (phase == TPS_BENCH_ROW_START) {
    tps_die_msg("tokens %ld (%zu/%zu): checking", T, i + 1, n);
  } else if (phase == TPS_BENCH_ROW_CHECKED && r->bad) {
    if (r->nan > 0) tps_die_msg("tokens %ld: %.0f NaN outputs (unwritten rows?)", T, r->nan);
    if (r->gathered_bad > 0) tps_die_msg("tokens %ld: %.0f gathered elements differ from the shards", T, r->gathered_bad);
    if (!(r->relfrob <= r->split_rel_diff))
      tps_die_msg("tokens %ld: split vs replicated relative error %.3g > %g", T, r->relfrob, r->split_rel_diff);
    if (r->bitwise_bad > 0) tps_die_msg("tokens %ld: shards run by the same kernel configuration differ from the replicated rows", T);
    if (r->hash_bad > 0) tps_die_msg("tokens %ld: replicated outputs differ between ranks", T);
  } else if (phase == TPS_BENCH_ROW_CHECKED) {
    tps_die_msg("tokens %ld (%zu/%zu): timing replicated and split (%s), %d samples each",
            T, i + 1, n, tps_gather_name(r->used), s->o.w.samples);
  } else {
    tps_die_msg("tokens %ld (%zu/%zu): replicated %.2f us, split %.2f us (%s, %ld rows per rank), max |diff| %.3g",
            T, i + 1, n, r->rep.median_us, r->split.median_us, tps_gather_name(r->used), r->rows, r->maxdiff);
  }
}

static void stopped(tps_bench_cmd *c, long i) {
  tps_die_msg("stopped at tokens %ld: no table written", ((split_cmd *)c)->o.tokens[i]);
}

static int write_table(tps_bench_cmd *c, FILE *fp) {
  const split_cmd *s = (split_cmd *)c;
  const tps_bench_split_opts *o = &s->o;
  const tps_bench_prov *pv = &s->r.w.prov;
  const int tp = o->w.tp;
  const char *nvls = getenv("NCCL_NVLS_ENABLE");
  char driver[64], rt[16], api[16], date[32], gpu[256];
  tps_bench_driver(pv, driver, sizeof driver);
  tps_bench_cuda_version(pv->runtime, rt, sizeof rt);
  tps_bench_cuda_version(pv->driver_api, api, sizeof api);
  tps_bench_date("%Y-%m-%d %H:%M:%S UTC", date, sizeof date);
  tps_bench_gpu_short(pv->gpu_name, gpu, sizeof gpu);
  fprintf(fp, "# Split vs replicated %s GEMM (K=%d -> N=%d, bf16 activations and output), measured by\n"
              "# tpsplit bench split.\n",
          tps_path_name(o->path), o->k, o->n);
  fprintf(fp, "# Hardware: %dx %s (%d SMs, CC %d.%d, SM clock max %d MHz, memory clock %d MHz, L2 %d bytes), host %s.\n",
          tp, pv->gpu_name, pv->sms, pv->cc_major, pv->cc_minor, pv->sm_clock_mhz, pv->mem_clock_mhz,
          pv->l2_bytes, pv->host);
  fprintf(fp, "# Software: driver %s, CUDA runtime %s (driver API %s), NCCL %s, cuBLASLt %zu, tpsplit %s.\n",
          driver, rt, api, pv->nccl, pv->cublaslt, PACKAGE_VERSION);
  fprintf(fp, "# Date: %s.  Command: %s\n", date, tps_cmdline());
  fprintf(fp, "# Launch: %s; NCCL_NVLS_ENABLE=%s (no NVLink multicast).\n",
          pv->mpi ? "MPI, one process per GPU" : "one thread per GPU in one process", nvls ? nvls : "(unset)");
  fprintf(fp, "# Timing: one CUDA graph per candidate; L2 flushed (%zu bytes written) and a device-side barrier of\n"
              "# all ranks before each replay, outside the timed span; time = %s;\n"
              "# each sample = max over %d ranks; value = median of %d samples (after %d warm-up rounds);\n"
              "# candidates alternated; correctness checked before timing.\n",
          pv->flush_bytes, pv->timer_text, tp, o->w.samples, o->w.warmup);
  fprintf(fp, "# replicated_us: every rank runs the GEMM on all tokens (rows = tokens).\n"
              "# split_us: each rank runs the GEMM on its ceil(tokens/%d) rows (the last ranks fewer), then an\n"
              "# all-gather of the bf16 output (%d bytes per token) rebuilds all rows.  Gather: %s (custom one-shot\n"
              "# NVLink all-gather while the per-rank input is <= %zu bytes, else NCCL); per row below.\n",
          tp, 2 * o->n, tps_gather_name(o->w.gather), o->w.cap_bytes);
  fprintf(fp, "# Correctness (every row, before timing): gathered rows bitwise equal to each rank's shard\n"
              "# recomputed locally; split vs replicated relative Frobenius error <= 1e-2, no NaN, max |diff| over\n"
              "# all rows %.6g; shards run by the replicated kernel configuration bitwise equal; replicated output\n"
              "# bitwise equal on every rank.\n",
          s->r.maxdiff_all);
  fprintf(fp, "# Per row: tokens gather replicated_min/median/max_us split_min/median/max_us max_abs_diff rel_frob bitwise_shards\n");
  for (size_t i = 0; i < o->ntok; i++) {
    const tps_bench_split_row *r = &s->r.rows[i];
    fprintf(fp, "#   %ld %s %.2f/%.2f/%.2f %.2f/%.2f/%.2f %.6g %.3g %ld\n", r->tokens, tps_gather_name(r->used),
            r->rep.min_us, r->rep.median_us, r->rep.max_us, r->split.min_us, r->split.median_us, r->split.max_us,
            r->maxdiff, r->relfrob, r->same_cfg_shards);
  }
  fprintf(fp, "#@ gpu: %s\n#@ tp: %d\n#@ k: %d\n#@ n: %d\n#@ path: %s\n#@ out_bytes_per_token: %d\n"
              "#@ gather: %s\n#@ gather_cap_bytes: %zu\n",
          gpu, tp, o->k, o->n, model_path(o->path), 2 * o->n, tps_gather_name(o->w.gather), o->w.cap_bytes);
  fprintf(fp, "tokens\trows_per_rank\treplicated_us\tsplit_us\n");
  for (size_t i = 0; i < o->ntok; i++) {
    const tps_bench_split_row *r = &s->r.rows[i];
    fprintf(fp, "%ld\t%ld\t%.2f\t%.2f\n", r->tokens, r->rows, r->rep.median_us, r->split.median_us);
  }
  return ferror(fp) ? -1 : 0;
}

static int print_json(tps_bench_cmd *c) {
  const split_cmd *s = (split_cmd *)c;
  const tps_bench_split_opts *o = &s->o;
  const tps_bench_prov *pv = &s->r.w.prov;
  char driver[64], date[32], gpu[256];
  tps_bench_driver(pv, driver, sizeof driver);
  tps_bench_date("%Y-%m-%d %H:%M:%S UTC", date, sizeof date);
  tps_bench_gpu_short(pv->gpu_name, gpu, sizeof gpu);
  json_t *root = json_object(), *rows = json_array();
  json_object_set_new(root, "gpu", json_string(gpu));
  json_object_set_new(root, "gpu_name", json_string(pv->gpu_name));
  json_object_set_new(root, "tp", json_integer(o->w.tp));
  json_object_set_new(root, "k", json_integer(o->k));
  json_object_set_new(root, "n", json_integer(o->n));
  json_object_set_new(root, "path", json_string(model_path(o->path)));
  json_object_set_new(root, "gemm_path", json_string(tps_path_name(o->path)));
  json_object_set_new(root, "gather", json_string(tps_gather_name(o->w.gather)));
  json_object_set_new(root, "gather_cap_bytes", json_integer((json_int_t)o->w.cap_bytes));
  json_object_set_new(root, "samples", json_integer(o->w.samples));
  json_object_set_new(root, "driver", json_string(driver));
  json_object_set_new(root, "nccl", json_string(pv->nccl));
  json_object_set_new(root, "date", json_string(date));
  for (size_t i = 0; i < o->ntok; i++) {
    const tps_bench_split_row *r = &s->r.rows[i];
    json_t *x = json_object();
    json_object_set_new(x, "tokens", json_integer(r->tokens));
    json_object_set_new(x, "rows_per_rank", json_integer(r->rows));
    json_object_set_new(x, "gather", json_string(tps_gather_name(r->used)));
    tps_json_set_num(x, "replicated_us", r->rep.median_us);
    tps_json_set_num(x, "replicated_min_us", r->rep.min_us);
    tps_json_set_num(x, "replicated_max_us", r->rep.max_us);
    tps_json_set_num(x, "split_us", r->split.median_us);
    tps_json_set_num(x, "split_min_us", r->split.min_us);
    tps_json_set_num(x, "split_max_us", r->split.max_us);
    tps_json_set_num(x, "max_abs_diff", r->maxdiff);
    tps_json_set_num(x, "rel_frob", r->relfrob);
    json_array_append_new(rows, x);
  }
  json_object_set_new(root, "rows", rows);
  return tps_json_print(root);
}

int cmd_bench_split(int argc, char **argv) {
  split_cmd s;
  memset(&s, 0, sizeof s);
  char paths[128], phelp[200], thelp[200];
  snprintf(phelp, sizeof phelp, "GEMM path: %s (required)", tps_path_names(TPS_PATH_F_BENCH, paths, sizeof paths));
  snprintf(thelp, sizeof thelp, "token counts: 6,12,48 or A..B (powers of two) or A..B:S (default %s)", default_tokens);
  s.seed = 1;
  s.tokens_arg = default_tokens;
  s.o.k = 5120;
  s.o.n = 1792;
  const tps_cmdopt own[] = {
    {.name = "path", .kind = TPS_ARG_FN, .metavar = "P", .dst = &s.path, .parse = tps_bench_path, .help = phelp},
    {.name = "tokens", .kind = TPS_ARG_STR, .metavar = "LIST", .dst = &s.tokens_arg, .help = thelp},
    {.name = "k", .kind = TPS_ARG_FN, .metavar = "K", .dst = &s.o.k, .parse = tps_bench_k64,
     .help = "GEMM inner dimension, a multiple of 64 (default 5120, fused_wqa_wkv)"},
    {.name = "n", .kind = TPS_ARG_FN, .metavar = "N", .dst = &s.o.n, .parse = tps_bench_k64,
     .help = "GEMM output columns, a multiple of 64 (default 1792)"},
    {.name = "seed", .kind = TPS_ARG_LONG, .metavar = "S", .dst = &s.seed, .min = 0, .max = TPS_CMDOPT_BIG,
     .help = "random inputs (the same on every rank)"},
  };
  s.c = (tps_bench_cmd){.name = "split", .own = own, .nown = sizeof own / sizeof own[0],
                        .synopsis = "--path P [--gather G] [--tp N] [--tokens LIST] [--k K] [--n N] [--samples S] [--warmup W] "
                                    "[--cap-bytes B] [--blocks B] [--threads T] [--seed S] [-o FILE] [--json]",
                        .about = "Measure replicated vs token-split GEMM + all-gather on N GPUs, end to end, and write a\n"
                                 "split table (the format of data/h20_tp8_fused_wqa_wkv.tsv, '#' provenance, '#@' metadata).\n"
                                 "Correctness is checked for every token count before timing (exit 1 and no table if not).",
                        .validate = validate, .run = run, .on_row = on_row, .stopped = stopped,
                        .write = write_table, .json = print_json, .r = &s.r.w};
  s.c.w = defaults();
  const int rc = tps_bench_cmd_main(&s.c, argc, argv);
  free((void *)s.o.tokens);
  free(s.r.rows);
  return rc;
}
