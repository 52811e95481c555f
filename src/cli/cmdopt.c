/* cmdopt.c: the table-driven option parser and --help writer (see cmdopt.h). */
#include "config.h"
#include "src/cli/cmdopt.h"
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "model/core/harness.h"
#include "model/latency/allgather.h"
#include "src/cli/envvars.h"
#include "src/cli/tpsplit.h"
#include "src/base/util.h"
#include "src/base/iocheck.h"
#include "model/predict/uncertainty.h"

#define SAMPLES_MAX 100000
#define HELP_COL 24  /* column of the help text in the options list */
#define HELP_WIDTH 80

/* The common options: name, short letter, value in --help (NULL: none). */
static const struct {
  const char *name;
  char shortopt;
  const char *metavar;
} common[TPS_OI_N] = {
  [TPS_OI_GPU] = {"gpu", 0, "G"},          [TPS_OI_GPUS] = {"gpus", 0, "LIST"},
  [TPS_OI_TP] = {"tp", 0, "N"},            [TPS_OI_TPS] = {"tp", 0, "LIST"},
  [TPS_OI_PATH] = {"path", 0, "P"},        [TPS_OI_PATHS] = {"paths", 0, "LIST"},
  [TPS_OI_FIT] = {"fit", 0, "FIT"},        [TPS_OI_SCALING] = {"scaling", 0, "S"},
  [TPS_OI_GATHER] = {"gather", 0, "B"},    [TPS_OI_CAP] = {"cap-bytes", 0, "B"},
  [TPS_OI_IB] = {"ib-gbps", 0, "X"},       [TPS_OI_ROUND] = {"round", 0, "R"},
  [TPS_OI_SAMPLES] = {"samples", 0, "N"},  [TPS_OI_SEED] = {"seed", 0, "S"},
  [TPS_OI_GPUS_FILE] = {"gpus-file", 0, "F"}, [TPS_OI_JSON] = {"json", 0, NULL},
  [TPS_OI_OUTPUT] = {"output", 'o', "X"},
  [TPS_OI_GEMM] = {"gemm", 0, "FILE"},     [TPS_OI_KDIM] = {"k", 0, "K"},
  [TPS_OI_NDIM] = {"n", 0, "N"},           [TPS_OI_MEASURED_ONLY] = {"measured-only", 0, NULL},
  [TPS_OI_NO_BUNDLED] = {"no-bundled", 0, NULL}, [TPS_OI_HARNESS] = {"harness", 0, "H"},
  [TPS_OI_THR_OUT] = {"thresholds-out", 0, "FILE"},
};

void tps_cmdopt_init(tps_cmdopt_values *v) {
  memset(v, 0, sizeof *v);
  v->path = &tps_path_marlin_w8a16;
  v->scaling = TPS_SCALING_PARTS;
  tps_pred_opts_default(&v->po);
  v->k = TPS_PRED_DEFAULT_K;
  v->n = TPS_PRED_DEFAULT_N;
  v->samples = TPS_PRED_DEFAULT_SAMPLES;
  v->seed = 1;
  v->harness = -1;
}

void tps_cmdopt_free(tps_cmdopt_values *v) {
  if (v->gpus) tps_free_list(v->gpus, v->ngpus);
  v->gpus = NULL;
  v->ngpus = 0;
}

/* ------------------------------------------------------------------ help */

/* Append printf output to buf[0..sz) at *len. */
static void cat(char *buf, size_t sz, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void cat(char *buf, size_t sz, size_t *len, const char *fmt, ...) {
  if (*len >= sz) return;
  va_list ap;
  va_start(ap, fmt);
  int w = vsnprintf(buf + *len, sz - *len, fmt, ap);
  va_end(ap);
  if (w > 0) *len = *len + (size_t)w < sz ? *len + (size_t)w : sz - 1;
}

static int scaling_ok(const tps_cmdspec *s, int sc) { return sc >= 0 && (!s->scalings || (s->scalings >> sc) & 1u); }

/* The accepted scalings, ", " joined. */
static const char *scaling_names(const tps_cmdspec *s, char *buf, size_t sz) {
  size_t len = 0;
  buf[0] = 0;
  for (int i = 0; i < TPS_NSCALINGS; i++)
    if (scaling_ok(s, i)) cat(buf, sz, &len, "%s%s", len ? ", " : "", tps_scaling_names[i]);
  return buf;
}

static int common_on(const tps_cmdspec *s, int i) { return (s->common >> i) & 1u; }

/* The generic help of common option i, with the command's defaults. */
static void common_help(const tps_cmdspec *s, const tps_cmdopt_values *v, int i, char *buf, size_t sz) {
  size_t len = 0;
  const char *d = s->dflt[i];
  int req = (s->required >> i) & 1u;
  char names[320];
  buf[0] = 0;
  switch (i) {
  case TPS_OI_GPU:
    cat(buf, sz, &len, "target GPU: a name or alias of the GPU table%s", req ? " (required)" : "");
    break;
  case TPS_OI_GPUS:
    cat(buf, sz, &len, "target GPUs, comma separated names or aliases of the GPU table (default: %s)",
        d ? d : "every GPU of the table");
    break;
  case TPS_OI_TP:
    cat(buf, sz, &len, "TP size, 1..64: 2, 4, 8 in one NVLink domain, 16 across two 8-GPU nodes");
    if (req) cat(buf, sz, &len, " (required)");
    else if (v->tp > 0) cat(buf, sz, &len, " (default %ld)", v->tp);
    break;
  case TPS_OI_TPS:
    cat(buf, sz, &len, "TP sizes, comma separated, each 1..64; 16 spans two 8-GPU nodes (default%s", d ? ": " : " ");
    if (d) cat(buf, sz, &len, "%s", d);
    for (size_t k = 0; !d && k < v->ntps; k++) cat(buf, sz, &len, "%s%d", k ? "," : "", v->tps[k]);
    cat(buf, sz, &len, ")");
    break;
  case TPS_OI_PATH:
    cat(buf, sz, &len, "kernel path: %s (default %s)", tps_path_names(TPS_PATH_F_MODEL, names, sizeof names),
        v->path ? v->path->name : "-");
    break;
  case TPS_OI_PATHS:
    cat(buf, sz, &len, "kernel paths, comma separated, of %s (default: %s)",
        tps_path_names(TPS_PATH_F_MODEL, names, sizeof names), d ? d : "all of them");
    break;
  case TPS_OI_FIT:
    cat(buf, sz, &len, "reference fit, written by `tpsplit fit -o FIT`%s (default: %s)", s->fits ? "; repeatable" : "",
        d ? d : "a fit of the bundled H20 table made on the spot");
    if (s->fit_model_only) cat(buf, sz, &len, "; with --scaling model (implied when --scaling is not given)");
    break;
  case TPS_OI_GEMM:
    cat(buf, sz, &len, "the GEMM from this file instead of the bundled measurement or the model (repeatable, one per GPU "
        "and path): a `tpsplit bench gemm` table, a split table (its replicated column), an AIConfigurator GEMM table "
        "(FILE:dtype=bfloat16|fp8[,backend=B]; K and N from --k, --n, N interpolated between the measured ones), or a fit "
        "file; between its points in log-log, outside them the model (flagged)");
    break;
  case TPS_OI_KDIM:
    cat(buf, sz, &len, "GEMM reduction size K (default %ld)", v->k);
    break;
  case TPS_OI_NDIM:
    cat(buf, sz, &len, "GEMM output width N; the gather moves N x 2 bytes (bf16) per token (default %ld)", v->n);
    break;
  case TPS_OI_MEASURED_ONLY:
    cat(buf, sz, &len, "every part from a measurement that covers the question: no model outside a measured range "
        "(an error instead)");
    break;
  case TPS_OI_HARNESS:
    cat(buf, sz, &len, "the harness every GEMM part represents: bench (tpsplit bench: L2 flushed, median of CUPTI "
        "spans, our quantization) or aic (AIConfigurator: TRT-LLM Linear, CUDA-graph mean, no flush); a part measured in "
        "the other is converted by a GPU of its architecture measured in both (H100, H200), else by the cross-GPU model's "
        "two harness forms learned on them (default: each part in the harness of its measurement, named in its source)");
    break;
  case TPS_OI_NO_BUNDLED:
    cat(buf, sz, &len, "ignore the bundled measurements (data/parts.tsv): every part from --gemm/--gather files or a "
        "model (to check a model against a measurement it did not see)");
    break;
  case TPS_OI_SCALING:
    cat(buf, sz, &len, "how the prediction is made:");
    for (int k = 0, n = 0; k < TPS_NSCALINGS; k++)
      if (scaling_ok(s, k)) cat(buf, sz, &len, "%s %s = %s", n++ ? ";" : "", tps_scaling_names[k], tps_scaling_desc[k]);
    cat(buf, sz, &len, " (default %s)", tps_scaling_names[v->scaling]);
    break;
  case TPS_OI_GATHER:
    cat(buf, sz, &len, "gather backend:");
    for (int k = 0; k < TPS_NGATHERS; k++)
      cat(buf, sz, &len, "%s %s = %s", k ? ";" : "", tps_gathers[k].name, tps_gathers[k].desc);
    cat(buf, sz, &len, " (default %s)", tps_gather_name(v->po.backend));
    if (common_on(s, TPS_OI_GEMM))
      cat(buf, sz, &len, "; or a measured gather [BACKEND=]FILE (repeatable, one per GPU, backend and TP): an nccl-tests "
          "all_gather_perf or `tpsplit bench allgather` log (ranks = TP), an AIConfigurator NCCL table (num_gpus = TP), "
          "a split table (split - replicated at its TP), or a fit file; BACKEND defaults to the file's own; BACKEND=FILE also makes BACKEND the answer's backend (--gather nccl=FILE: NCCL alone) unless --gather B names another");
    break;
  case TPS_OI_CAP:
    cat(buf, sz, &len, "per-rank input cap of the custom gather, bytes (default %.0f)",
        v->po.cap_bytes > 0 ? v->po.cap_bytes : (double)tps_gather_cap_default());
    break;
  case TPS_OI_IB:
    cat(buf, sz, &len, "per-GPU inter-node bandwidth for TP beyond one node, Gb/s (default %g)", v->po.ib_gbps);
    break;
  case TPS_OI_ROUND:
    cat(buf, sz, &len, "round the threshold (least predicted excess) up to a multiple of R (default: not rounded)");
    break;
  case TPS_OI_SAMPLES:
    cat(buf, sz, &len, "bootstrap samples of each %.0f%% interval, %ld..%d (default %ld)", 100 * TPS_INTERVAL_LEVEL,
        s->samples_min > 0 ? s->samples_min : 2, SAMPLES_MAX, v->samples);
    break;
  case TPS_OI_SEED:
    cat(buf, sz, &len, "random seed of the samples (default %ld)", v->seed);
    break;
  case TPS_OI_THR_OUT:
    /* the command's .dflt says what the file holds */
    cat(buf, sz, &len, "also write the answer as an engine-facing thresholds file (the schema `tpsplit calibrate` writes; "
        "`tpsplit decide --thresholds FILE` reads it)%s%s", d ? ": " : ", devices keyed as engines key them", d ? d : "");
    break;
  case TPS_OI_GPUS_FILE:
    cat(buf, sz, &len, "GPU table (default: the bundled data/gpus.tsv)");
    break;
  case TPS_OI_JSON:
    cat(buf, sz, &len, "JSON output (NaN as null)");
    break;
  case TPS_OI_OUTPUT:
    cat(buf, sz, &len, "output %s (default: %s)", s->output_metavar && !strcmp(s->output_metavar, "DIR") ? "folder" : "file",
        d ? d : v->output ? v->output : "none");
    break;
  }
}

/* Words of text from the current column at, wrapped before HELP_WIDTH at column col. */
static void wrap(FILE *fp, const char *text, int col, int at) {
  for (const char *w = text; *w;) {
    if (*w == '\n') { fprintf(fp, "\n%*s", col, ""); at = col; w++; continue; }
    size_t l = strcspn(w, " \n");
    if (at > col && at + 1 + (int)l >= HELP_WIDTH) { fprintf(fp, "\n%*s", col, ""); at = col; }
    else if (at > col) { fputc(' ', fp); at++; }
    fprintf(fp, "%.*s", (int)l, w);
    at += (int)l;
    w += l;
    while (*w == ' ') w++;
  }
  fputc('\n', fp);
}

/* "  LEFT" then its help from HELP_COL (on the next line when LEFT is too wide). */
static void item(FILE *fp, const char *left, const char *help) {
  int at = fprintf(fp, "  %s", left);
  if (at >= HELP_COL - 1) { fputc('\n', fp); at = 0; }
  at += fprintf(fp, "%*s", HELP_COL - at, "");
  wrap(fp, help, HELP_COL, at);
}

/* One option: "-x, --name METAVAR" and its help. */
static void opt_line(FILE *fp, char shortopt, const char *name, const char *metavar, int optional, const char *help) {
  char left[96];
  size_t len = 0;
  left[0] = 0;
  if (shortopt) cat(left, sizeof left, &len, "-%c, ", shortopt);
  cat(left, sizeof left, &len, "--%s", name);
  if (metavar) cat(left, sizeof left, &len, optional ? "[=%s]" : " %s", metavar);
  item(fp, left, help);
}


/* The order of the options in --help: targets and models first, output last. */
static const int help_order[] = {TPS_OI_GPU, TPS_OI_GPUS, TPS_OI_TP, TPS_OI_TPS, TPS_OI_PATH, TPS_OI_PATHS,
                                 TPS_OI_FIT, TPS_OI_SCALING, TPS_OI_GEMM, TPS_OI_GATHER, TPS_OI_KDIM,
                                 TPS_OI_NDIM, TPS_OI_MEASURED_ONLY, TPS_OI_NO_BUNDLED, TPS_OI_HARNESS, TPS_OI_CAP, TPS_OI_IB,
                                 TPS_OI_ROUND, TPS_OI_SAMPLES, TPS_OI_SEED};
static const int help_order_last[] = {TPS_OI_THR_OUT, TPS_OI_GPUS_FILE, TPS_OI_JSON, TPS_OI_OUTPUT};

static void common_line(FILE *fp, const tps_cmdspec *s, const tps_cmdopt_values *v, int i) {
  if (!common_on(s, i)) return;
  char buf[1024];
  if (s->text[i]) snprintf(buf, sizeof buf, "%s", s->text[i]);
  else common_help(s, v, i, buf, sizeof buf);
  const char *mv = i == TPS_OI_OUTPUT && s->output_metavar ? s->output_metavar : common[i].metavar;
  opt_line(fp, common[i].shortopt, common[i].name, mv, 0, buf);
}

void tps_cmdopt_env_help(FILE *fp, const char *cmd) {
  int any = 0;
  for (size_t i = 0; i < tps_nenvvars; i++) {
    const tps_envvar *e = &tps_envvars[i];
    if (!tps_envvar_read_by(e, cmd)) continue;
    if (!any++) fputs("\nEnvironment:\n", fp);
    char text[512];
    size_t len = 0;
    text[0] = 0;
    if (!cmd && strcmp(e->commands, "*") != 0) { /* which commands read it: "(plot, the main job) " */
      for (const char *w = e->commands; *w;) {
        int l = (int)strcspn(w, " ");
        int main_job = l == 4 && strncmp(w, "main", 4) == 0;
        cat(text, sizeof text, &len, "%s%.*s", len ? ", " : "(", main_job ? 12 : l, main_job ? "the main job" : w);
        w += l;
        while (*w == ' ') w++;
      }
      cat(text, sizeof text, &len, ") ");
    }
    cat(text, sizeof text, &len, "%s", e->meaning);
    item(fp, e->name, text);
  }
}

/* Where the text of line l (n bytes) continues: under the help column of an option line
 * ("  --name V    help"), 9 after "Usage: ", else at its own indentation. */
static int cont_col(const char *l, size_t n) {
  int ind = (int)strspn(l, " ");
  const char *gap = ind && ind < (int)n ? strstr(l + ind, "  ") : NULL;
  if (gap && gap < l + n) {
    int hang = (int)(gap + strspn(gap, " ") - l);
    if (hang < HELP_WIDTH / 2 && hang < (int)n) return hang;
  }
  return !strncmp(l, "Usage: ", 7) ? 9 : ind;
}

/* Words of text[0..n) from column at, broken before HELP_WIDTH, continued at column col. */
static void flow(FILE *fp, const char *text, size_t n, int col, int at) {
  const char *w = text, *end = text + n;
  while (w < end && *w == ' ') w++;
  while (w < end) {
    size_t l = 0;
    while (w + l < end && w[l] != ' ') l++;
    if (at > col && at + 1 + (int)l > HELP_WIDTH) { fprintf(fp, "\n%*s", col, ""); at = col; }
    else if (at > col) { fputc(' ', fp); at++; }
    fprintf(fp, "%.*s", (int)l, w);
    at += (int)l;
    w += l;
    while (w < end && *w == ' ') w++;
  }
  fputc('\n', fp);
}

void tps_cmdopt_fitted(FILE *fp, const char *text) {
  for (const char *l = text; *l;) {
    /* a block: the line and the lines that continue it (at its continuation column, not an option) */
    size_t n = strcspn(l, "\n"), wide = n;
    int ind = (int)strspn(l, " "), cont = cont_col(l, n);
    const char *end = l + n;
    while (*end && n && l[n - 1] != ':') {
      const char *nx = end + 1;
      size_t m = strcspn(nx, "\n");
      int nind = (int)strspn(nx, " ");
      int deeper = cont > ind ? nind > ind && nind <= cont : ind == 0 && nind == 0;
      if (!m || !deeper || nind >= (int)m || nx[nind] == '-') break;
      if (m > wide) wide = m;
      end = nx + m;
    }
    if (wide <= HELP_WIDTH) { /* every line fits: as written */
      fprintf(fp, "%.*s\n", (int)(end - l), l);
    } else { /* the block's words again: its first line's indentation, then the continuation column */
      char buf[4096];
      size_t k = 0;
      int lead = cont > ind ? cont : ind; /* an option line keeps "  --name V    " as written */
      for (const char *p = l + lead; p < end && k + 1 < sizeof buf; p++) buf[k++] = *p == '\n' ? ' ' : *p;
      fprintf(fp, "%.*s", lead, l);
      flow(fp, buf, k, cont, lead);
    }
    l = *end ? end + 1 : end;
  }
}

void tps_cmdopt_fitted_from(FILE *fp, void (*write)(FILE *)) {
  char *buf = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&buf, &n);
  if (!m) { write(fp); return; }
  write(m);
  if (fclose(m) == 0 && buf) tps_cmdopt_fitted(fp, buf);
  free(buf);
}

/* The --help text. */
static void cmdopt_help(const tps_cmdspec *s, const tps_cmdopt_values *v, FILE *fp) {
  char usage[2048];
  snprintf(usage, sizeof usage, "Usage: tpsplit%s%s %s", s->name ? " " : "", s->name ? s->name : "", s->synopsis);
  tps_cmdopt_fitted(fp, usage);
  if (s->about) tps_cmdopt_fitted(fp, s->about);
  fprintf(fp, "\nOptions:\n");
  for (size_t k = 0; k < sizeof help_order / sizeof help_order[0]; k++) common_line(fp, s, v, help_order[k]);
  for (size_t k = 0; k < s->nopts; k++) {
    const tps_cmdopt *o = &s->opts[k];
    char help[1024];
    size_t len = 0;
    help[0] = 0;
    cat(help, sizeof help, &len, "%s", o->help);
    if (o->required) {
      cat(help, sizeof help, &len, " (required)");
    } else if (!strstr(o->help, "(default")) { /* the default is the destination's value */
      if (o->kind == TPS_ARG_LONG) cat(help, sizeof help, &len, " (default %ld)", *(const long *)o->dst);
      if (o->kind == TPS_ARG_DOUBLE) cat(help, sizeof help, &len, " (default %g)", *(const double *)o->dst);
      if (o->kind == TPS_ARG_STR && *(const char *const *)o->dst)
        cat(help, sizeof help, &len, " (default %s)", *(const char *const *)o->dst);
    }
    opt_line(fp, o->shortopt, o->name, o->metavar, o->optional, help);
  }
  for (size_t k = 0; k < sizeof help_order_last / sizeof help_order_last[0]; k++) common_line(fp, s, v, help_order_last[k]);
  opt_line(fp, 'h', "help", NULL, 0, "print this help and exit");
  opt_line(fp, 'V', "version", NULL, 0, "print the version and exit");
  if (s->notes) { fputc('\n', fp); tps_cmdopt_fitted(fp, s->notes); }
  tps_cmdopt_env_help(fp, s->name ? s->name : "main");
  if (s->exit_status) {
    fputc('\n', fp);
    wrap(fp, s->exit_status, 0, fprintf(fp, "Exit status:"));
  }
}

/* ------------------------------------------------------------------ parsing */

/* "tpsplit CMD: message (try 'tpsplit CMD --help')" (src/base/err.h); returns TPS_EXIT_USAGE. */
static int usage_error(const tps_cmdspec *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const tps_cmdspec *s, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  (void)s; /* the command is the one main.c named (tps_err_command) */
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return tps_usage_msg("%s", msg);
}

int tps_cmdopt_yesno(const char *arg, int *v) {
  static const char *const yes[] = {"yes", "on", "1"}, *const no[] = {"no", "off", "0"};
  for (int i = 0; i < 3; i++) {
    if (strcasecmp(arg, yes[i]) == 0) { *v = 1; return 0; }
    if (strcasecmp(arg, no[i]) == 0) { *v = 0; return 0; }
  }
  return -1;
}

/* A comma list with an empty item ("", ",4", "2,", "2,,4"), which the list parsers would skip. */
static int has_empty_item(const char *arg) {
  const size_t len = strlen(arg);
  return !len || arg[0] == ',' || arg[len - 1] == ',' || strstr(arg, ",,") != NULL;
}

/* A comma list of TP sizes, each 1..64, none empty or given twice, into tps[0..max).  0, or -1 with why. */
static int parse_tp_list(const char *arg, int *tps, size_t max, size_t *n, char *why, size_t whysz) {
  double v[TPS_CMDOPT_MAXTP];
  if (has_empty_item(arg)) {
    snprintf(why, whysz, "an empty item; each 1..64, e.g. 2,4,8,16");
    return -1;
  }
  if (max > TPS_CMDOPT_MAXTP || tps_parse_numbers(arg, v, max, n, 1, 64, 1) != 0) {
    snprintf(why, whysz, "each 1..64, e.g. 2,4,8,16");
    return -1;
  }
  for (size_t i = 0; i < *n; i++) {
    tps[i] = (int)v[i];
    for (size_t j = 0; j < i; j++)
      if (tps[j] == tps[i]) { snprintf(why, whysz, "TP %d given twice", tps[i]); return -1; }
  }
  return 0;
}

/* A comma list of kernel paths with a model. 0, or -1 with why. */
static int parse_paths(const char *arg, const tps_path **paths, size_t *n, char *why, size_t whysz) {
  char **w;
  size_t nw;
  if (tps_parse_list(arg, &w, &nw) != 0) {
    if (w) tps_free_list(w, nw);
    snprintf(why, whysz, "a comma list of kernel paths");
    return -1;
  }
  size_t m = 0;
  for (size_t i = 0; i < nw; i++) {
    const tps_path *p = tps_path_find_for(w[i], TPS_PATH_F_MODEL);
    if (!p) {
      tps_path_unknown(w[i], TPS_PATH_F_MODEL, why, whysz);
      tps_free_list(w, nw);
      return -1;
    }
    int seen = 0;
    for (size_t k = 0; k < m; k++) seen |= paths[k] == p;
    if (!seen) paths[m++] = p;
  }
  tps_free_list(w, nw);
  *n = m;
  return 0;
}

/* Common option i with its value: 0, or -1 with why (empty: "bad --NAME 'ARG'" says it). */
static int set_common(const tps_cmdspec *s, tps_cmdopt_values *v, int i, const char *arg, char *why, size_t whysz) {
  double x;
  char names[320];
  why[0] = 0;
  switch (i) {
  case TPS_OI_GPU: v->gpu = arg; return 0;
  case TPS_OI_GPUS:
    tps_cmdopt_free(v);
    if (has_empty_item(arg)) {
      snprintf(why, whysz, "an empty item in a comma list of GPU names");
      return -1;
    }
    if (tps_parse_list(arg, &v->gpus, &v->ngpus) != 0) { snprintf(why, whysz, "a comma list of GPU names"); return -1; }
    for (size_t a = 0; a < v->ngpus; a++)
      for (size_t b = 0; b < a; b++)
        if (!strcasecmp(v->gpus[a], v->gpus[b])) { snprintf(why, whysz, "%s given twice", v->gpus[a]); return -1; }
    return 0;
  case TPS_OI_TP:
    if (tps_parse_long(arg, &v->tp) == 0 && v->tp >= 1 && v->tp <= 64) return 0;
    snprintf(why, whysz, "1..64");
    return -1;
  case TPS_OI_TPS:
    return parse_tp_list(arg, v->tps, TPS_CMDOPT_MAXTP, &v->ntps, why, whysz);
  case TPS_OI_PATH:
    if ((v->path = tps_path_find_for(arg, TPS_PATH_F_MODEL))) return 0;
    tps_path_unknown(arg, TPS_PATH_F_MODEL, why, whysz);
    return -1;
  case TPS_OI_PATHS: return parse_paths(arg, v->paths, &v->npaths, why, whysz);
  case TPS_OI_FIT:
    if (v->fits.n == (s->fits ? TPS_STRLIST_MAX : 1)) {
      snprintf(why, whysz, s->fits ? "at most %d" : "given %d times", s->fits ? TPS_STRLIST_MAX : 2);
      return -1;
    }
    v->fits.v[v->fits.n++] = arg;
    return 0;
  case TPS_OI_SCALING:
    if (scaling_ok(s, v->scaling = tps_scaling_find(arg))) return 0;
    snprintf(why, whysz, "%s", scaling_names(s, names, sizeof names));
    return -1;
  case TPS_OI_GATHER: {
    int b = tps_gather_parse(arg);
    if (b >= 0) { v->po.backend = b; v->backend_given = 1; return 0; }
    if (!common_on(s, TPS_OI_GEMM)) {
      snprintf(why, whysz, "%s", tps_gather_names(names, sizeof names));
      return -1;
    }
    if (v->gathers.n == TPS_STRLIST_MAX) { snprintf(why, whysz, "at most %d files", TPS_STRLIST_MAX); return -1; }
    v->gathers.v[v->gathers.n++] = arg; /* a file: read (and checked) by the command */
    return 0;
  }
  case TPS_OI_GEMM:
    if (v->gemms.n == TPS_STRLIST_MAX) { snprintf(why, whysz, "at most %d files", TPS_STRLIST_MAX); return -1; }
    v->gemms.v[v->gemms.n++] = arg;
    return 0;
  case TPS_OI_KDIM:
  case TPS_OI_NDIM: {
    long x;
    if (tps_parse_long(arg, &x) == 0 && x >= 1 && x <= 1000000) { *(i == TPS_OI_KDIM ? &v->k : &v->n) = x; return 0; }
    snprintf(why, whysz, "a whole number 1..1000000");
    return -1;
  }
  case TPS_OI_MEASURED_ONLY: v->measured_only = 1; return 0;
  case TPS_OI_NO_BUNDLED: v->no_bundled = 1; return 0;
  case TPS_OI_HARNESS:
    if ((v->harness = tps_harness_parse(arg)) >= 0) return 0;
    snprintf(why, whysz, "bench or aic");
    return -1;
  case TPS_OI_CAP:
  case TPS_OI_IB:
    if (tps_parse_double(arg, &x) == 0 && x > 0) {
      *(i == TPS_OI_CAP ? &v->po.cap_bytes : &v->po.ib_gbps) = x;
      return 0;
    }
    snprintf(why, whysz, "a number > 0");
    return -1;
  case TPS_OI_ROUND:
    if (tps_parse_long(arg, &v->rounding) == 0 && v->rounding >= 1 && v->rounding <= TPS_TOKENS_MAX) return 0;
    snprintf(why, whysz, "an integer in 1..%ld, the longest scan of the model", TPS_TOKENS_MAX);
    return -1;
  case TPS_OI_SAMPLES: {
    long lo = s->samples_min > 0 ? s->samples_min : 2;
    if (tps_parse_long(arg, &v->samples) == 0 && v->samples >= lo && v->samples <= SAMPLES_MAX) return 0;
    snprintf(why, whysz, "%ld..%d", lo, SAMPLES_MAX);
    return -1;
  }
  case TPS_OI_SEED:
    if (tps_parse_long(arg, &v->seed) == 0 && v->seed >= 0) return 0;
    snprintf(why, whysz, "an integer >= 0");
    return -1;
  case TPS_OI_GPUS_FILE: v->gpus_file = arg; return 0;
  case TPS_OI_JSON: v->json = 1; return 0;
  case TPS_OI_THR_OUT:
    if (!*arg) { snprintf(why, whysz, "a file name, not empty"); return -1; }
    v->thresholds_out = arg;
    return 0;
  case TPS_OI_OUTPUT:
    if (!*arg) { snprintf(why, whysz, "a file or folder name, not empty"); return -1; }
    v->output = arg;
    return 0;
  }
  return -1;
}

/* A command option with its value: 0, or -1 with why. */
static int set_own(const tps_cmdopt *o, const char *arg, char *why, size_t whysz) {
  long l;
  double x;
  why[0] = 0;
  switch (o->kind) {
  case TPS_ARG_FLAG: *(int *)o->dst = 1; return 0;
  case TPS_ARG_YESNO:
    if (!arg) { *(int *)o->dst = 1; return 0; }
    if (tps_cmdopt_yesno(arg, (int *)o->dst) == 0) return 0;
    snprintf(why, whysz, "yes or no");
    return -1;
  case TPS_ARG_STR:
    if (o->io != TPS_IO_NONE && !*arg) { snprintf(why, whysz, "a file name, not empty"); return -1; }
    *(const char **)o->dst = arg;
    return 0;
  case TPS_ARG_LIST: {
    tps_strlist *L = o->dst;
    if (L->n == TPS_STRLIST_MAX) { snprintf(why, whysz, "at most %d", TPS_STRLIST_MAX); return -1; }
    L->v[L->n++] = arg;
    return 0;
  }
  case TPS_ARG_LONG:
    if (tps_parse_long(arg, &l) == 0 && l >= o->min && l <= o->max) { *(long *)o->dst = l; return 0; }
    snprintf(why, whysz, "an integer in %.0f..%.0f", o->min, o->max);
    return -1;
  case TPS_ARG_DOUBLE:
    if (tps_parse_double(arg, &x) == 0 && x > o->min && (o->max <= o->min || x <= o->max)) { *(double *)o->dst = x; return 0; }
    if (o->max > o->min) snprintf(why, whysz, "a number in (%g, %g]", o->min, o->max);
    else snprintf(why, whysz, "a number > %g", o->min);
    return -1;
  case TPS_ARG_FN: return o->parse(o->dst, arg, why, whysz);
  }
  return -1;
}

/* The backend a --gather [B=]FILE names ("nccl=log.txt": nccl; "log.txt", "F:op=all_gather": -1). */
static int spec_backend(const char *spec) {
  const char *eq = strchr(spec, '='), *colon = strchr(spec, ':');
  if (!eq || (colon && colon < eq) || eq - spec >= 32) return -1;
  char b[32];
  snprintf(b, sizeof b, "%.*s", (int)(eq - spec), spec);
  return tps_gather_parse(b);
}

/* `--gather nccl=FILE` answers with NCCL alone, as `--gather nccl --gather FILE` does: the backend
 * of the answer is the one --gather B names, else the one every B=FILE names (a plain FILE names
 * none; files naming two backends, nccl= and custom=, keep the default: auto uses both). */
static void gather_backend_named(tps_cmdopt_values *v) {
  int named = -1;
  if (v->backend_given) return;
  for (size_t i = 0; i < v->gathers.n; i++) {
    int b = spec_backend(v->gathers.v[i]);
    if (b < 0) continue;
    if (named >= 0 && b != named) return;
    named = b;
  }
  if (named >= 0) v->po.backend = named;
}

enum { KEY_COMMON = 1000, KEY_OWN = 2000, KEY_HELP = 3000, KEY_VERSION };

static int parse(const tps_cmdspec *s, int argc, char **argv, tps_cmdopt_values *v);

/* Every file of the command line into src/base/iocheck, then the check (before anything is
 * read): 0, or -1 after one line "tpsplit: OUT: -o would replace the input ...". */
static int record_io(const tps_cmdspec *s, const tps_cmdopt_values *v) {
  tps_io_reset();
  for (size_t i = 0; i < v->fits.n; i++) tps_io_input(v->fits.v[i], "--fit");
  for (size_t i = 0; i < v->gemms.n; i++) tps_io_input_spec(v->gemms.v[i], "--gemm");
  for (size_t i = 0; i < v->gathers.n; i++) tps_io_input_spec(v->gathers.v[i], "--gather");
  tps_io_input(v->gpus_file, "--gpus-file");
  char bundled[4096]; /* the bundled files read when not replaced by an option */
  if (!v->gpus_file && snprintf(bundled, sizeof bundled, "%s/gpus.tsv", tps_data_dir()) < (int)sizeof bundled)
    tps_io_input(bundled, "the bundled GPU table");
  if (common_on(s, TPS_OI_NO_BUNDLED) && !v->no_bundled &&
      snprintf(bundled, sizeof bundled, "%s/parts.tsv", tps_data_dir()) < (int)sizeof bundled)
    tps_io_input(bundled, "the bundled measurements");
  for (int i = 0; i < v->nargs; i++) tps_io_input(v->args[i], "argument");
  for (size_t k = 0; k < s->nopts; k++) {
    const tps_cmdopt *o = &s->opts[k];
    if (o->io == TPS_IO_NONE) continue;
    const tps_strlist *L = o->kind == TPS_ARG_LIST ? o->dst : NULL;
    const char *one = o->kind == TPS_ARG_STR ? *(const char *const *)o->dst : NULL;
    char what[48];
    snprintf(what, sizeof what, "--%s", o->name);
    for (size_t i = 0; L && i < L->n; i++) {
      if (o->io == TPS_IO_OUT) tps_io_output(L->v[i], what);
      else tps_io_input(L->v[i], what);
    }
    if (one && o->io == TPS_IO_OUT) tps_io_output(one, what);
    else if (one) tps_io_input(one, what);
  }
  tps_io_output(v->thresholds_out, "--thresholds-out");
  /* stdout holds the command's own output (its summary even with -o FILE): a thresholds file there too would be
   * two documents in one stream (with --json, two JSON texts no parser reads) */
  if (v->thresholds_out && !strcmp(v->thresholds_out, "-")) {
    tps_usage_msg("--thresholds-out -: stdout holds this command's output; give a file");
    return -1;
  }
  /* -o FOLDER (plot, the main job) writes files inside it, not over it */
  if (!(s->output_metavar && strcmp(s->output_metavar, "DIR") == 0)) tps_io_output(v->output, "-o");
  tps_err e;
  tps_err_clear(&e);
  if (tps_io_check(&e) == 0) return 0;
  tps_err_print(&e);
  return -1;
}

/* A return >= 0 means the command returns at once (help, version, a usage error): what
 * the parse allocated is freed here so that no caller has to. */
int tps_cmdopt_parse(const tps_cmdspec *s, int argc, char **argv, tps_cmdopt_values *v) {
  tps_err_command(s->name); /* every message of the command names it */
  int rc = parse(s, argc, argv, v);
  if (rc < 0 && record_io(s, v) != 0) rc = TPS_EXIT_USAGE;
  if (rc >= 0) tps_cmdopt_free(v);
  return rc;
}

static int parse(const tps_cmdspec *s, int argc, char **argv, tps_cmdopt_values *v) {
  struct option lo[TPS_OI_N + TPS_CMDOPT_MAXOWN + 3];
  char shorts[2 * (TPS_OI_N + TPS_CMDOPT_MAXOWN) + 8] = ":hV";
  unsigned long own_given = 0;
  size_t nl = 0, ns = strlen(shorts);
  for (int i = 0; i < TPS_OI_N; i++) {
    if (!common_on(s, i)) continue;
    lo[nl++] = (struct option){common[i].name, common[i].metavar ? required_argument : no_argument, NULL, KEY_COMMON + i};
    if (common[i].shortopt) {
      shorts[ns++] = common[i].shortopt;
      if (common[i].metavar) shorts[ns++] = ':';
    }
  }
  for (size_t k = 0; k < s->nopts && k < TPS_CMDOPT_MAXOWN; k++) {
    const tps_cmdopt *o = &s->opts[k];
    int has = o->kind == TPS_ARG_FLAG ? no_argument
              : o->optional                                      ? optional_argument
                                                                 : required_argument;
    lo[nl++] = (struct option){o->name, has, NULL, KEY_OWN + (int)k};
    if (o->shortopt) {
      shorts[ns++] = o->shortopt;
      if (has != no_argument) shorts[ns++] = ':';
    }
  }
  lo[nl++] = (struct option){"help", no_argument, NULL, KEY_HELP};
  lo[nl++] = (struct option){"version", no_argument, NULL, KEY_VERSION};
  lo[nl] = (struct option){NULL, 0, NULL, 0};
  shorts[ns] = 0;

  /* long options are never abbreviated: getopt_long would read --gpus as --gpus-file, a
   * different meaning (issue 29); a long name must be one of the command's whole */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--")) break;
    if (strncmp(a, "--", 2) != 0 || !a[2]) continue;
    size_t l = strcspn(a + 2, "=");
    int exact = 0, takes = 0;
    const char *near = NULL;
    for (size_t k = 0; k < nl && !exact; k++) {
      if (strlen(lo[k].name) == l && !strncmp(lo[k].name, a + 2, l)) exact = 1, takes = lo[k].has_arg == required_argument;
      else if (!near && !strncmp(lo[k].name, a + 2, l)) near = lo[k].name;
    }
    if (!exact && near)
      return usage_error(s, "bad option '%.*s' (options are not abbreviated: --%s?)", (int)l + 2, a, near);
    if (exact && takes && !a[2 + l]) i++; /* its value, whatever it looks like */
  }
  int c;
  opterr = 0;
  optind = 0;
  while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
    char why[512];
    if (c == 'h' || c == KEY_HELP) { cmdopt_help(s, v, stdout); return TPS_EXIT_OK; }
    if ((c == 'V' || c == KEY_VERSION) && s->name) return tps_print_version(s->name);
    if (c == 'V' || c == KEY_VERSION) { printf("tpsplit (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION); return TPS_EXIT_OK; }
    if (c == ':') return usage_error(s, "option '%s' needs a value", argv[optind - 1]);
    if (c == '?')
      return usage_error(s, "bad option '%s'", argv[optind - 1]);
    /* a short letter: the option that has it */
    if (c < KEY_COMMON) {
      for (int i = 0; i < TPS_OI_N; i++)
        if (common_on(s, i) && common[i].shortopt == c) c = KEY_COMMON + i;
      for (size_t k = 0; c < KEY_COMMON && k < s->nopts; k++)
        if (s->opts[k].shortopt == c) c = KEY_OWN + (int)k;
    }
    if (c >= KEY_COMMON && c < KEY_OWN) {
      int i = c - KEY_COMMON;
      if (set_common(s, v, i, optarg, why, sizeof why) != 0)
        return usage_error(s, "bad --%s '%s'%s%s%s", common[i].name, optarg, why[0] ? " (" : "", why, why[0] ? ")" : "");
      v->given |= TPS_OPT(i);
    } else if (c >= KEY_OWN && c < KEY_HELP) {
      const tps_cmdopt *o = &s->opts[c - KEY_OWN];
      if (set_own(o, optarg, why, sizeof why) != 0)
        return usage_error(s, "bad --%s '%s'%s%s%s", o->name, optarg ? optarg : "", why[0] ? " (" : "", why,
                           why[0] ? ")" : "");
      own_given |= 1ul << (c - KEY_OWN);
    }
  }
  if (optind < argc && !s->args) return usage_error(s, "unexpected argument '%s'", argv[optind]);
  v->nargs = argc - optind;
  v->args = argv + optind;
  if (v->nargs < s->args_min) {
    int l = (int)strcspn(s->args, ".");
    return usage_error(s, "no %.*s given", l, s->args);
  }
  if (s->output_single && v->output && v->nargs != 1)
    return usage_error(s, "-o takes exactly one %.*s, got %d", (int)strcspn(s->args, "."), s->args, v->nargs);
  for (int i = 0; i < TPS_OI_N; i++)
    if ((s->required >> i) & 1u && !((v->given >> i) & 1u))
      return usage_error(s, "--%s is required", common[i].name);
  for (size_t k = 0; k < s->nopts; k++)
    if (s->opts[k].required && !((own_given >> k) & 1ul))
      return usage_error(s, "--%s is required", s->opts[k].name);
  /* --fit alone means the model scaling; measured files mean the parts scaling */
  if (v->fits.n && !((v->given >> TPS_OI_SCALING) & 1u) && scaling_ok(s, TPS_SCALING_MODEL)) v->scaling = TPS_SCALING_MODEL;
  if (s->fit_model_only && v->fits.n && v->scaling != TPS_SCALING_MODEL)
    return usage_error(s, "--fit goes with --scaling model");
  gather_backend_named(v);
  if ((v->gemms.n || v->gathers.n || v->measured_only || v->no_bundled || v->harness >= 0) && v->scaling != TPS_SCALING_PARTS)
    return usage_error(s, "--gemm, --gather FILE, --measured-only, --no-bundled and --harness go with --scaling parts (the default), not %s",
                       tps_scaling_names[v->scaling]);
  return -1;
}

int tps_cmdopt_gpus(const tps_cmdopt_values *v, const tps_gpu_table *t, const tps_gpu ***out, size_t *n, tps_err *e) {
  size_t m = v->gpus ? v->ngpus : t->n;
  const tps_gpu **g = calloc(m ? m : 1, sizeof *g);
  *out = NULL;
  *n = 0;
  if (!g) return tps_err_set(e, NULL, 0, "out of memory");
  for (size_t i = 0; i < m; i++)
    if (!(g[i] = v->gpus ? tps_gpus_find(t, v->gpus[i], e) : &t->gpu[i])) {
      free(g);
      return -1;
    }
  *out = g;
  *n = m;
  return 0;
}
