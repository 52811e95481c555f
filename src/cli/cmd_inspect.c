/* cmd_inspect.c: `tpsplit inspect [--json] [-o OUT] FILE...`
 *
 * Reads every FILE (split, gemm or all-gather TSV, or an nccl-tests all_gather_perf log;
 * src/io/table.h), then prints each one normalized with derived columns.  All files are
 * read before anything is printed, so a bad file gives one error line and no output.
 *
 * Derived columns (units in the names; times in us, so X / t_us / 1e3 is GB/s and
 * flops / t_us / 1e6 is TFLOPS):
 *   split:      speedup = replicated_us / split_us;
 *               replicated_tflops = 2 * tokens * k * n / replicated_us / 1e6 (k, n known);
 *               gather_bytes = tokens * out_bytes_per_token (the useful gathered output);
 *               gather_bytes_per_rank = rows_per_rank * out_bytes_per_token (each rank's
 *               shard; = gather_bytes / tp when tp divides tokens);
 *               gather = custom when the shard is <= gather_cap_bytes, else nccl (for
 *               '#@ gather: auto'; the file's fixed backend otherwise);
 *               gather_algbw_lb_gbps = gather_bytes / split_us / 1e3, a lower bound of the
 *               gather's algbw, since split_us also holds the 1/tp GEMM.
 *   gemm:       tflops = 2 * rows * k * n / time_us / 1e6 (k, n known);
 *               gbps = (k*n*weight_bytes + rows*k*act_bytes + rows*n*out_bytes) / time_us / 1e3,
 *               the HBM traffic of one pass (weight and activation bytes from the kernel
 *               path, '#@ path'; out_bytes = out_bytes_per_token / n, else 2 (bf16)).
 *   all-gather: bytes_per_rank = bytes / ranks; algbw_gbps = bytes / time_us / 1e3;
 *               busbw_gbps = algbw_gbps * (ranks - 1) / ranks (nccl-tests' definitions,
 *               out-of-place time).
 * -o OUT writes the normalized table (our TSV, no derived columns) to OUT through a
 * temporary file renamed into place: a failed run leaves no OUT. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/aic.h"
#include "src/io/measure.h"
#include "model/latency/allgather.h"
#include "src/cli/cmdopt.h"
#include "src/base/jsonout.h"
#include "model/core/path.h"
#include "src/io/table.h"
#include "src/cli/tpsplit.h"
#include "src/base/util.h"

/* ------------------------------------------------------------------ derived values */

typedef struct {
  double *speedup, *repl_tflops, *gbytes, *gbytes_rank, *galgbw_lb; /* split */
  const char **gather;                                                /* split */
  double *tflops, *gbps;                                              /* gemm */
  double *bytes_rank, *algbw, *busbw;                                 /* all-gather */
} derived;

static double *col(size_t n) {
  double *v = malloc((n ? n : 1) * sizeof *v);
  if (v) for (size_t i = 0; i < n; i++) v[i] = NAN;
  return v;
}

static void derived_free(derived *d) {
  free(d->speedup); free(d->repl_tflops); free(d->gbytes); free(d->gbytes_rank); free(d->galgbw_lb);
  free(d->gather); free(d->tflops); free(d->gbps); free(d->bytes_rank); free(d->algbw); free(d->busbw);
  memset(d, 0, sizeof *d);
}

static int derive(const tps_table *t, derived *d) {
  memset(d, 0, sizeof *d);
  size_t n = t->nrows;
  double k = (double)t->k, nn = (double)t->n, obpt = t->out_bytes_per_token;
  if (t->kind == TPS_TABLE_SPLIT) {
    d->speedup = col(n); d->repl_tflops = col(n); d->gbytes = col(n); d->gbytes_rank = col(n); d->galgbw_lb = col(n);
    d->gather = calloc(n ? n : 1, sizeof *d->gather);
    if (!d->speedup || !d->repl_tflops || !d->gbytes || !d->gbytes_rank || !d->galgbw_lb || !d->gather) return -1;
    for (size_t i = 0; i < n; i++) {
      d->speedup[i] = t->replicated_us[i] / t->split_us[i];
      if (k > 0 && nn > 0) d->repl_tflops[i] = 2.0 * (double)t->tokens[i] * k * nn / t->replicated_us[i] / 1e6;
      if (obpt > 0) {
        d->gbytes[i] = (double)t->tokens[i] * obpt;
        d->gbytes_rank[i] = (double)t->rows_per_rank[i] * obpt;
        d->galgbw_lb[i] = d->gbytes[i] / t->split_us[i] / 1e3;
      }
      if (tps_gather_is_rule(tps_gather_parse(t->gather))) /* the backend the rule picked (model/core/backend.h) */
        d->gather[i] = obpt > 0 ? tps_gather_name(tps_gather_pick(tps_gather_parse(t->gather), d->gbytes_rank[i], t->gather_cap_bytes, 1)) : "";
      else
        d->gather[i] = t->gather;
    }
  } else if (t->kind == TPS_TABLE_GEMM) {
    d->tflops = col(n); d->gbps = col(n);
    if (!d->tflops || !d->gbps) return -1;
    const tps_path *p = t->kpath[0] ? tps_path_find(t->kpath) : NULL;
    double ob = (obpt > 0 && nn > 0) ? obpt / nn : 2.0;
    for (size_t i = 0; i < n; i++) {
      double m = (double)t->rows[i];
      if (k > 0 && nn > 0) d->tflops[i] = 2.0 * m * k * nn / t->time_us[i] / 1e6;
      if (k > 0 && nn > 0 && p)
        d->gbps[i] = (k * nn * p->weight_bytes + m * k * p->act_bytes + m * nn * ob) / t->time_us[i] / 1e3;
    }
  } else {
    d->bytes_rank = col(n); d->algbw = col(n); d->busbw = col(n);
    if (!d->bytes_rank || !d->algbw || !d->busbw) return -1;
    double r = t->ranks;
    for (size_t i = 0; i < n; i++) {
      d->algbw[i] = t->bytes[i] / t->time_us[i] / 1e3;
      if (r > 0) {
        d->bytes_rank[i] = t->bytes[i] / r;
        d->busbw[i] = d->algbw[i] * (r - 1) / r;
      }
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ text output */

#define MAXC 96
typedef struct {
  const char *name[MAXC];
  char fmt[MAXC];      /* 'l' long, 'g' as read (tps_fmt_num), '3' %.3f, '1' %.1f, '0' %.0f, 's' string */
  const long *l[MAXC];
  const double *d[MAXC];
  const char **s[MAXC];
  int n;
} columns;

static void add_l(columns *c, const char *name, const long *v) {
  if (c->n < MAXC) { c->name[c->n] = name; c->fmt[c->n] = 'l'; c->l[c->n] = v; c->n++; }
}
/* The table has an input column of that name (an extra column of our TSV). */
static int has_col(const tps_table *t, const char *name) {
  for (size_t j = 0; j < t->nextra; j++)
    if (!strcmp(t->extra_name[j], name)) return 1;
  return 0;
}

static void add_d(columns *c, const char *name, const double *v, char fmt) {
  if (c->n < MAXC) { c->name[c->n] = name; c->fmt[c->n] = fmt; c->d[c->n] = v; c->n++; }
}
static void add_s(columns *c, const char *name, const char **v) {
  if (c->n < MAXC) { c->name[c->n] = name; c->fmt[c->n] = 's'; c->s[c->n] = v; c->n++; }
}

static void cell(const columns *c, int j, size_t i, char *buf, size_t sz) {
  switch (c->fmt[j]) {
    case 'l': snprintf(buf, sz, "%ld", c->l[j][i]); return;
    case 's': snprintf(buf, sz, "%s", c->s[j][i] && c->s[j][i][0] ? c->s[j][i] : "-"); return;
    default: break;
  }
  double x = c->d[j][i];
  if (isnan(x)) { snprintf(buf, sz, "-"); return; }
  switch (c->fmt[j]) {
    case '3': snprintf(buf, sz, "%.3f", x); break;
    case '1': snprintf(buf, sz, "%.1f", x); break;
    case '0': snprintf(buf, sz, "%.0f", x); break;
    default: tps_fmt_num(buf, sz, x); break;
  }
}

static void columns_for(const tps_table *t, const derived *d, columns *c) {
  memset(c, 0, sizeof *c);
  if (t->kind == TPS_TABLE_SPLIT) {
    add_l(c, "tokens", t->tokens);
    add_l(c, "rows_per_rank", t->rows_per_rank);
    add_d(c, "replicated_us", t->replicated_us, 'g');
    add_d(c, "split_us", t->split_us, 'g');
  } else if (t->kind == TPS_TABLE_GEMM) {
    add_l(c, "rows", t->rows);
    add_d(c, "time_us", t->time_us, 'g');
  } else {
    add_d(c, "bytes", t->bytes, '0');
    if (t->count) add_l(c, "count", t->count);
    add_d(c, "time_us", t->time_us, 'g');
    if (t->time_inplace_us) {
      int any = 0;
      for (size_t i = 0; i < t->nrows; i++) if (!isnan(t->time_inplace_us[i])) any = 1;
      if (any) add_d(c, "time_inplace_us", t->time_inplace_us, 'g');
    }
  }
  for (size_t j = 0; j < t->nextra; j++) add_d(c, t->extra_name[j], t->extra[j], 'g');
  if (t->kind == TPS_TABLE_SPLIT) {
    add_d(c, "speedup", d->speedup, '3');
    add_d(c, "replicated_tflops", d->repl_tflops, '1');
    add_d(c, "gather_bytes", d->gbytes, '0');
    add_d(c, "gather_bytes_per_rank", d->gbytes_rank, '0');
    add_s(c, "gather", d->gather);
    add_d(c, "gather_algbw_lb_gbps", d->galgbw_lb, '1');
  } else if (t->kind == TPS_TABLE_GEMM) {
    /* a bench table holds its own tflops and gbps (its byte count): the derived ones beside them are named apart, or
     * the JSON row (one key a name) kept only one of the two */
    add_d(c, has_col(t, "tflops") ? "derived_tflops" : "tflops", d->tflops, '1');
    add_d(c, has_col(t, "gbps") ? "derived_gbps" : "gbps", d->gbps, '1');
  } else {
    add_d(c, "bytes_per_rank", d->bytes_rank, '0');
    add_d(c, "algbw_gbps", d->algbw, '3');
    add_d(c, "busbw_gbps", d->busbw, '3');
  }
}

static void print_text(const tps_table *t, const derived *d, int first) {
  if (!first) putchar('\n');
  printf("# %s: %s table, %zu rows (%s)\n", t->path, tps_table_kind_names[t->kind], t->nrows, t->source);
  printf("#");
  if (t->gpu[0]) printf(" gpu %s", t->gpu);
  if (t->type[0]) printf(", type %s", t->type);
  if (t->tp) printf(", tp %d", t->tp);
  if (t->ranks) printf(", ranks %d", t->ranks);
  if (t->k) printf(", k %ld", t->k);
  if (t->n) printf(", n %ld", t->n);
  if (t->kpath[0]) printf(", path %s", t->kpath);
  if (t->out_bytes_per_token > 0) printf(", out_bytes_per_token %.0f", t->out_bytes_per_token);
  if (t->gather[0]) printf(", gather %s", t->gather);
  if (t->kind == TPS_TABLE_SPLIT && tps_gather_is_rule(tps_gather_parse(t->gather)))
    printf(", gather_cap_bytes %.0f", t->gather_cap_bytes);
  putchar('\n');
  if (t->note[0]) printf("# read as: %s\n", t->note);
  columns c;
  columns_for(t, d, &c);
  int w[MAXC];
  char buf[64];
  for (int j = 0; j < c.n; j++) {
    w[j] = (int)strlen(c.name[j]);
    for (size_t i = 0; i < t->nrows; i++) {
      cell(&c, j, i, buf, sizeof buf);
      if ((int)strlen(buf) > w[j]) w[j] = (int)strlen(buf);
    }
  }
  for (int j = 0; j < c.n; j++) printf("%s%*s", j ? "  " : "", w[j], c.name[j]);
  putchar('\n');
  for (size_t i = 0; i < t->nrows; i++) {
    for (int j = 0; j < c.n; j++) {
      cell(&c, j, i, buf, sizeof buf);
      printf("%s%*s", j ? "  " : "", w[j], buf);
    }
    putchar('\n');
  }
}

/* ------------------------------------------------------------------ JSON output */

static json_t *json_int_or_null(long v) { return v ? json_integer(v) : json_null(); }
static json_t *json_str_or_null(const char *s) { return s && s[0] ? json_string(s) : json_null(); }

static json_t *to_json(const tps_table *t, const derived *d) {
  json_t *o = json_object();
  json_object_set_new(o, "file", json_string(t->path));
  json_object_set_new(o, "kind", json_string(tps_table_kind_names[t->kind]));
  json_object_set_new(o, "source", json_string(t->source));
  json_object_set_new(o, "gpu", json_str_or_null(t->gpu));
  json_object_set_new(o, "type", json_str_or_null(t->type));
  json_object_set_new(o, "kernel_path", json_str_or_null(t->kpath));
  json_object_set_new(o, "gather", json_str_or_null(t->gather));
  json_object_set_new(o, "tp", json_int_or_null(t->tp));
  json_object_set_new(o, "ranks", json_int_or_null(t->ranks));
  json_object_set_new(o, "k", json_int_or_null(t->k));
  json_object_set_new(o, "n", json_int_or_null(t->n));
  tps_json_set_num(o, "out_bytes_per_token", t->out_bytes_per_token > 0 ? t->out_bytes_per_token : NAN);
  tps_json_set_num(o, "gather_cap_bytes", t->gather_cap_bytes);
  json_object_set_new(o, "nrows", json_integer((json_int_t)t->nrows));
  json_t *prov = json_array();
  for (size_t i = 0; i < t->nprov; i++) json_array_append_new(prov, json_string(t->prov[i]));
  json_object_set_new(o, "provenance", prov);
  json_t *meta = json_object();
  for (size_t i = 0; i < t->nmeta; i++) json_object_set_new(meta, t->meta_key[i], json_string(t->meta_val[i]));
  json_object_set_new(o, "metadata", meta);
  columns c;
  columns_for(t, d, &c);
  json_t *rows = json_array();
  for (size_t i = 0; i < t->nrows; i++) {
    json_t *r = json_object();
    for (int j = 0; j < c.n; j++) {
      if (c.fmt[j] == 'l') json_object_set_new(r, c.name[j], json_integer(c.l[j][i]));
      else if (c.fmt[j] == 's') json_object_set_new(r, c.name[j], json_str_or_null(c.s[j][i]));
      else tps_json_set_num(r, c.name[j], c.d[j][i]);
    }
    json_object_set_new(r, "line", json_integer(t->line[i]));
    json_array_append_new(rows, r);
  }
  json_object_set_new(o, "rows", rows);
  return o;
}

/* ------------------------------------------------------------------ command */

/* AIConfigurator GEMM/NCCL tables (src/io/aic.h: gzipped or plain, "FILE:dtype=fp8,n=2048"). */
static int inspect_aic(char *const *files, int nfiles, int json, const char *out) {
  if (out) { tps_usage_msg("-o does not take an AIConfigurator table"); return TPS_EXIT_USAGE; }
  return tps_aic_inspect(files, nfiles, json);
}

/* --run N / --ranks N of nccl-tests logs: checked here, then handed to the reader (src/io/ncclt_rows.c). */
static int parse_count(const char *name, long max, const char *arg, char *why, size_t whysz) {
  long v;
  if (tps_parse_long(arg, &v) != 0 || v < 1 || v > max) {
    snprintf(why, whysz, "an integer in 1..%ld", max);
    return -1;
  }
  return tps_table_opt("inspect", name, arg);
}
static int parse_run(void *dst, const char *arg, char *why, size_t whysz) {
  (void)dst;
  return parse_count("run", 1000, arg, why, whysz);
}
static int parse_ranks(void *dst, const char *arg, char *why, size_t whysz) {
  (void)dst;
  return parse_count("ranks", 65536, arg, why, whysz);
}

int cmd_inspect(int argc, char **argv) {
  int unused = 0;
  const tps_cmdopt own[] = {
    {.name = "run", .kind = TPS_ARG_FN, .metavar = "N", .dst = &unused, .parse = parse_run,
     .help = "the run to read of an nccl-tests log holding several (they are listed otherwise)"},
    {.name = "ranks", .kind = TPS_ARG_FN, .metavar = "N", .dst = &unused, .parse = parse_ranks,
     .help = "the ranks of an nccl-tests table pasted without its '#  Rank' lines (default: from busbw/algbw)"},
  };
  const tps_cmdspec spec = {
    .opts = own,
    .nopts = sizeof own / sizeof own[0],
    .name = "inspect",
    .synopsis = "[--json] [-o OUT] FILE...",
    .about = "Read measurement files and print them normalized, with derived columns.\n\n"
             "FILE is a split-vs-replicated table (tokens rows_per_rank replicated_us split_us),\n"
             "a GEMM table (rows time_us ...), an all-gather table (bytes ranks time_us ...), or an\n"
             "nccl-tests all_gather_perf log, unmodified (any layout since 2.x, or its -J JSON), or an\n"
             "AIConfigurator GEMM/NCCL table (gzipped or plain; FILE:dtype=fp8,n=2048 selects rows).\n\n"
             "Derived columns: split: speedup, replicated_tflops, gather_bytes,\n"
             "gather_bytes_per_rank, gather, gather_algbw_lb_gbps; gemm: tflops, gbps;\n"
             "all-gather: bytes_per_rank, algbw_gbps, busbw_gbps.",
    .common = TPS_OPT(TPS_OI_JSON) | TPS_OPT(TPS_OI_OUTPUT),
    .args = "FILE...",
    .args_min = 1,
    .output_single = 1,
    .output_metavar = "OUT",
    .text = {[TPS_OI_JSON] = "print JSON (stable snake_case keys, NaN as null)",
             [TPS_OI_OUTPUT] = "also write the normalized table of the (single) FILE to OUT as tpsplit TSV (an "
                               "nccl-tests log becomes an all-gather table)"},
    .exit_status = "0 ok, 2 usage or input error (one line: tpsplit: FILE:LINE: ...).",
  };
  tps_cmdopt_values v;
  tps_cmdopt_init(&v);
  int prc = tps_cmdopt_parse(&spec, argc, argv, &v);
  if (prc >= 0) return prc;
  const int nfiles = v.nargs, json = v.json;
  const char *out = v.output;
  if (tps_meas_sniff_spec(v.args[0]) == TPS_MEAS_AIC) return inspect_aic(v.args, nfiles, json, out);
  tps_table *t = calloc((size_t)nfiles, sizeof *t);
  derived *d = calloc((size_t)nfiles, sizeof *d);
  int rc = TPS_EXIT_OK, nread = 0;
  tps_err e;
  tps_err_clear(&e);
  if (!t || !d) { tps_die_msg("out of memory"); free(t); free(d); return TPS_EXIT_FAIL; }
  for (int i = 0; i < nfiles; i++) {
    if (tps_table_read(v.args[i], &t[i], &e)) { tps_err_print(&e); rc = tps_err_exit_code(&e); break; }
    nread++;
    if (derive(&t[i], &d[i])) { tps_die_msg("out of memory"); rc = TPS_EXIT_FAIL; break; }
  }
  if (rc == TPS_EXIT_OK && out) {
    tps_outfile of;
    if (tps_out_open(&of, out, &e) || (tps_table_write(of.fp, &t[0]), tps_out_commit(&of, &e))) { /* commit names a write error */
      if (!e.set) tps_err_set(&e, out, 0, "write error");
      tps_out_abort(&of);
      tps_err_print(&e);
      rc = tps_err_exit_code(&e);
    }
  }
  if (rc == TPS_EXIT_OK) {
    if (json) {
      json_t *root = json_object(), *files = json_array();
      for (int i = 0; i < nfiles; i++) json_array_append_new(files, to_json(&t[i], &d[i]));
      json_object_set_new(root, "files", files);
      if (tps_json_print(root)) rc = TPS_EXIT_FAIL;
    } else {
      for (int i = 0; i < nfiles; i++) print_text(&t[i], &d[i], i == 0);
    }
  }
  for (int i = 0; i < nread; i++) { tps_table_free(&t[i]); derived_free(&d[i]); }
  free(t);
  free(d);
  return rc;
}
