/* gpus.c: the GPU specification table (data/gpus.tsv or a user file) -> tps_gpu_table.
 *
 * Tab-separated; '#' lines are comments; the header names the 13 required columns (any
 * order): name aliases sms cc bf16_tflops fp8_tflops hbm_gbps l2_mb link links link_gbps
 * nccl_link_gbps source, and may name the optional base_mhz boost_mhz (datasheet base and
 * boost graphics clocks; a file without them reads as before, the clocks 0 = unknown) and
 * the optional name columns (a file without them reads as before, each "" = unknown; '-' in a
 * cell = unknown too):
 *   cuda_names   comma list of the device names the runtime reports (cudaGetDeviceProperties
 *                .name, torch.cuda.get_device_name()), the first the one thresholds files
 *                write; looked up by tps_gpus_find like the aliases
 *   engine_key   the key engines file thresholds under ("NVIDIA_H200"): no blank, ',' or '"';
 *                with cuda_names, the first CUDA name with blanks as '_' (the thresholds schema)
 *   plot_colour  "#RRGGBB", the GPU's colour in every figure
 *   arch         architecture family, e.g. sm90-hopper, sm100-blackwell: no blank
 * and the optional fp4_tflops (dense FP4 tensor peak, the nvfp4 path's bound; absent or 0 =
 * no FP4 tensor cores, 0.01..1e5 otherwise; '?' uncertain -> TPS_GPU_U_PEAK).
 * The link column is the fabric family (NVLink4, NVLink5, PCIe4, xGMI ...), kept lower-cased
 * in tps_gpu.fabric.
 * Units: TFLOPS dense, GB/s (1e9 B/s), MB, MHz.  A number followed by
 * '?' is uncertain: kept, and flagged in tps_gpu.uncertain (sms -> TPS_GPU_U_SMS, l2_mb ->
 * TPS_GPU_U_L2, bf16/fp8 peaks -> TPS_GPU_U_PEAK, hbm_gbps -> TPS_GPU_U_HBM, links,
 * link_gbps, nccl_link_gbps -> TPS_GPU_U_LINK, base_mhz, boost_mhz -> TPS_GPU_U_CLOCK).
 * cc is "major.minor".  nvlink = link column starts with "NVLink" (case-insensitive).
 *
 * Lookup (tps_gpus_find): case-insensitive on the name and the comma-separated aliases;
 * if that fails, the CUDA device name forms are tried: a leading "NVIDIA " removed, then
 * memory words ("80GB", "HBM3", "HBM3e") dropped and the rest joined with '-'
 * ("NVIDIA H100 80GB HBM3" -> "H100"; "NVIDIA H100 PCIe" -> "H100-PCIe", unknown).
 *
 * Ranges (outside: an error naming the line; a GPU with 0 SMs or no link bandwidth cannot
 * be modelled):
 *   sms 1..100000 (whole), cc major 0..99 and minor 0..9 (0.0: not CUDA),
 *   bf16_tflops 0.01..1e5, fp8_tflops 0 (none) or 0.01..1e5, hbm_gbps 1..1e6,
 *   l2_mb 0 (unknown) or 0.01..1e5, links 0..1024 (whole; 0 = PCIe only),
 *   link_gbps 0.01..1e5, nccl_link_gbps 0 (n/a) or 0.01..1e4,
 *   base_mhz, boost_mhz 0 (unknown) or 1..1e5, base_mhz <= boost_mhz when both are known. */
#include "config.h"
#include "src/io/gpus.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "src/io/table.h"
#include "src/io/thresholds.h"
#include "src/base/util.h"

/* G_REQ required columns, then the optional ones (absent: 0 = unknown) */
enum { G_NAME, G_ALIASES, G_SMS, G_CC, G_BF16, G_FP8, G_HBM, G_L2, G_LINK, G_LINKS, G_LINK_GBPS, G_NCCL, G_SOURCE,
       G_REQ, G_BASE = G_REQ, G_BOOST, G_CUDA, G_KEY, G_COLOUR, G_ARCH, G_FP4, G_N };
static const char *const gcols[G_N] = {"name", "aliases", "sms", "cc", "bf16_tflops", "fp8_tflops", "hbm_gbps",
                                       "l2_mb", "link", "links", "link_gbps", "nccl_link_gbps", "source",
                                       "base_mhz", "boost_mhz", "cuda_names", "engine_key", "plot_colour", "arch",
                                       "fp4_tflops"};

void tps_gpus_free(tps_gpu_table *t) {
  for (size_t i = 0; i < t->n; i++) {
    if (t->aliases) free(t->aliases[i]);
    if (t->source) free(t->source[i]);
    if (t->cuda_names) free(t->cuda_names[i]);
  }
  free(t->gpu);
  free(t->aliases);
  free(t->source);
  free(t->cuda_names);
  memset(t, 0, sizeof *t);
}

/* A number cell with an optional trailing '?'. */
static int gnum(const char *path, long ln, const char *col, const char *s, double *v, int *unc, tps_err *e) {
  char buf[64];
  size_t n = strlen(s);
  if (n == 0) return tps_err_set(e, path, ln, "empty cell in column '%s'", col);
  if (n >= sizeof buf) return tps_err_set(e, path, ln, "'%s' in column '%s' is too long", s, col);
  memcpy(buf, s, n + 1);
  *unc = 0;
  if (buf[n - 1] == '?') { *unc = 1; buf[n - 1] = '\0'; }
  if (tps_parse_double(buf, v) != 0) return tps_err_set(e, path, ln, "'%s' in column '%s' is not a number", s, col);
  if (*v < 0) return tps_err_set(e, path, ln, "negative value %s in column '%s'", s, col);
  return 0;
}

/* Does name match any of "A,B,C" case-insensitively? */
static int in_list(const char *list, const char *name) {
  size_t nl = strlen(name);
  for (const char *p = list; *p;) {
    const char *c = strchr(p, ',');
    size_t l = c ? (size_t)(c - p) : strlen(p);
    while (l > 0 && *p == ' ') { p++; l--; }
    while (l > 0 && p[l - 1] == ' ') l--;
    if (l == nl && strncasecmp(p, name, l) == 0) return 1;
    if (!c) break;
    p = c + 1;
  }
  return 0;
}

static const tps_gpu *find_exact(const tps_gpu_table *t, const char *name) {
  for (size_t i = 0; i < t->n; i++)
    if (strcasecmp(t->gpu[i].name, name) == 0) return &t->gpu[i];
  for (size_t i = 0; i < t->n; i++)
    if (in_list(t->aliases[i], name) || in_list(t->cuda_names[i], name)) return &t->gpu[i];
  return NULL;
}

/* A text cell of an optional column: "" when the file has no such column or the cell is '-'. */
static const char *opt_cell(char **f, const int *idx, int col) {
  if (idx[col] < 0) return "";
  const char *c = f[idx[col]];
  return strcmp(c, "-") == 0 ? "" : c;
}

/* The name columns (cuda_names, engine_key, plot_colour, arch) and the fabric of the link column. */
static int name_cols(tps_gpu_table *t, tps_gpu *g, const char *path, long ln, char **f, const int *idx, tps_err *e) {
  const char *cuda = opt_cell(f, idx, G_CUDA), *key = opt_cell(f, idx, G_KEY), *col = opt_cell(f, idx, G_COLOUR),
             *arch = opt_cell(f, idx, G_ARCH), *link = f[idx[G_LINK]];
  size_t first = strcspn(cuda, ",");
  if (first >= sizeof g->cuda_name) return tps_err_set(e, path, ln, "CUDA name '%.*s' is too long", (int)first, cuda);
  if (cuda[0] && (first == 0 || cuda[strlen(cuda) - 1] == ','))
    return tps_err_set(e, path, ln, "cuda_names '%s' has an empty name", cuda);
  snprintf(g->cuda_name, sizeof g->cuda_name, "%.*s", (int)first, cuda);
  if (cuda[0] && find_exact(t, g->cuda_name))
    return tps_err_set(e, path, ln, "CUDA name '%s' already names another GPU", g->cuda_name);
  if (strlen(key) >= sizeof g->engine_key) return tps_err_set(e, path, ln, "engine_key '%s' is too long", key);
  if (key[strcspn(key, " \t,\"")]) return tps_err_set(e, path, ln, "engine_key '%s' has a blank, comma or quote", key);
  snprintf(g->engine_key, sizeof g->engine_key, "%s", key);
  /* the thresholds schema keys a device by its name with blanks as '_' (src/io/thresholds.h) */
  int same = key[0] && g->cuda_name[0] && strlen(key) == strlen(g->cuda_name);
  for (size_t i = 0; same && key[i]; i++) same = key[i] == (g->cuda_name[i] == ' ' ? '_' : g->cuda_name[i]);
  if (key[0] && g->cuda_name[0] && !same)
    return tps_err_set(e, path, ln, "engine_key '%s' is not the CUDA name '%s' with blanks as '_' (how engines key it)", key,
                       g->cuda_name);
  if (col[0] && (strlen(col) != 7 || col[0] != '#' || strspn(col + 1, "0123456789abcdefABCDEF") != 6))
    return tps_err_set(e, path, ln, "plot_colour '%s' is not #RRGGBB", col);
  snprintf(g->colour, sizeof g->colour, "%s", col);
  if (strlen(arch) >= sizeof g->arch || arch[strcspn(arch, " \t,")])
    return tps_err_set(e, path, ln, "arch '%s' is too long or has a blank or comma", arch);
  snprintf(g->arch, sizeof g->arch, "%s", arch);
  if (strlen(link) >= sizeof g->fabric) return tps_err_set(e, path, ln, "link '%s' is too long", link);
  for (size_t i = 0; link[i]; i++) g->fabric[i] = (char)tolower((unsigned char)link[i]);
  if (!(t->cuda_names[t->n] = strdup(cuda))) return tps_err_oom(e, "reading %s", path);
  return 0;
}

static int row(tps_gpu_table *t, const char *path, long ln, char **f, const int *idx, tps_err *e) {
  tps_gpu *g = &t->gpu[t->n];
  memset(g, 0, sizeof *g);
  const char *name = f[idx[G_NAME]];
  if (!*name) return tps_err_set(e, path, ln, "empty GPU name");
  if (strlen(name) >= sizeof g->name) return tps_err_set(e, path, ln, "GPU name '%s' too long", name);
  for (const char *p = name; *p; p++)
    if (isspace((unsigned char)*p) || *p == ',')
      return tps_err_set(e, path, ln, "GPU name '%s' has a blank or comma", name);
  snprintf(g->name, sizeof g->name, "%s", name);
  double v[G_N] = {0};
  int u[G_N] = {0};
  static const int numeric[] = {G_SMS, G_BF16, G_FP8, G_HBM, G_L2, G_LINKS, G_LINK_GBPS, G_NCCL, G_BASE, G_BOOST, G_FP4};
  for (size_t k = 0; k < sizeof numeric / sizeof numeric[0]; k++) {
    int c = numeric[k];
    if (idx[c] < 0) continue; /* an optional column the file does not have: 0 */
    if (gnum(path, ln, gcols[c], f[idx[c]], &v[c], &u[c], e)) return -1;
  }
  const char *cc = f[idx[G_CC]];
  int maj = 0, min = 0;
  {
    size_t a = strspn(cc, "0123456789");
    size_t b = cc[a] == '.' ? strspn(cc + a + 1, "0123456789") : 0;
    if (a < 1 || a > 2 || cc[a] != '.' || b != 1 || cc[a + 1 + b] != '\0')
      return tps_err_set(e, path, ln, "cc '%s' is not major.minor (e.g. 9.0)", cc);
    maj = (int)strtol(cc, NULL, 10);
    min = cc[a + 1] - '0';
  }
  static const struct { int col; double lo, hi; int zero_ok, whole; } lim[] = {
    {G_SMS, 1, 100000, 0, 1},     {G_BF16, 0.01, 1e5, 0, 0},  {G_FP8, 0.01, 1e5, 1, 0},
    {G_HBM, 1, 1e6, 0, 0},        {G_L2, 0.01, 1e5, 1, 0},    {G_LINKS, 0, 1024, 1, 1},
    {G_LINK_GBPS, 0.01, 1e5, 0, 0}, {G_NCCL, 0.01, 1e4, 1, 0}, {G_BASE, 1, 1e5, 1, 0},
    {G_BOOST, 1, 1e5, 1, 0},      {G_FP4, 0.01, 1e5, 1, 0}};
  for (size_t k = 0; k < sizeof lim / sizeof lim[0]; k++) {
    double x = v[lim[k].col];
    const char *col = gcols[lim[k].col];
    if (x == 0 && lim[k].zero_ok) continue;
    if (x < lim[k].lo || x > lim[k].hi)
      return tps_err_set(e, path, ln, "%s %s is outside %g..%g%s", col, f[idx[lim[k].col]], lim[k].lo, lim[k].hi,
                         lim[k].zero_ok ? " (or 0)" : "");
    if (lim[k].whole && x != floor(x)) return tps_err_set(e, path, ln, "%s %s is not a whole number", col, f[idx[lim[k].col]]);
  }
  if (v[G_BASE] > 0 && v[G_BOOST] > 0 && v[G_BASE] > v[G_BOOST])
    return tps_err_set(e, path, ln, "base_mhz %s is above boost_mhz %s", f[idx[G_BASE]], f[idx[G_BOOST]]);
  g->sms = (int)v[G_SMS];
  g->cc_major = maj;
  g->cc_minor = min;
  g->bf16_tflops = v[G_BF16];
  g->fp8_tflops = v[G_FP8];
  g->fp4_tflops = v[G_FP4];
  g->hbm_gbps = v[G_HBM];
  g->l2_mb = v[G_L2];
  g->links = (int)v[G_LINKS];
  g->link_gbps = v[G_LINK_GBPS];
  g->nccl_link_gbps = v[G_NCCL];
  g->base_mhz = v[G_BASE];
  g->boost_mhz = v[G_BOOST];
  g->nvlink = strncasecmp(f[idx[G_LINK]], "NVLink", 6) == 0;
  if (u[G_SMS]) g->uncertain |= TPS_GPU_U_SMS;
  if (u[G_L2]) g->uncertain |= TPS_GPU_U_L2;
  if (u[G_BF16] || u[G_FP8] || u[G_FP4]) g->uncertain |= TPS_GPU_U_PEAK;
  if (u[G_HBM]) g->uncertain |= TPS_GPU_U_HBM;
  if (u[G_LINKS] || u[G_LINK_GBPS] || u[G_NCCL]) g->uncertain |= TPS_GPU_U_LINK;
  if (u[G_BASE] || u[G_BOOST]) g->uncertain |= TPS_GPU_U_CLOCK;
  /* names and aliases must not collide with earlier rows */
  char *al = strdup(f[idx[G_ALIASES]]);
  if (!al) return tps_err_oom(e, "reading %s", path);
  if (find_exact(t, name)) { free(al); return tps_err_set(e, path, ln, "GPU '%s' is already defined", name); }
  char *save = NULL;
  char *tmp = strdup(al);
  if (!tmp) { free(al); return tps_err_oom(e, "reading %s", path); }
  for (char *a = strtok_r(tmp, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
    while (*a == ' ') a++;
    if (*a && find_exact(t, a)) {
      tps_err_set(e, path, ln, "alias '%s' already names another GPU", a);
      free(tmp); free(al);
      return -1;
    }
  }
  free(tmp);
  if (name_cols(t, g, path, ln, f, idx, e)) { free(al); return -1; }
  char key[sizeof g->engine_key + 64], other[sizeof key]; /* one engine key a GPU: a thresholds file keeps one entry a key */
  tps_thr_gpu_key(g, key, sizeof key);
  for (size_t i = 0; i < t->n; i++) {
    tps_thr_gpu_key(&t->gpu[i], other, sizeof other);
    if (strcmp(key, other)) continue;
    free(al);
    free(t->cuda_names[t->n]);
    t->cuda_names[t->n] = NULL;
    return tps_err_set(e, path, ln, "%s is keyed %s by engines, as %s is: a thresholds file would keep one of them", g->name, key,
                       t->gpu[i].name);
  }
  if (!(t->source[t->n] = strdup(f[idx[G_SOURCE]]))) {
    free(al);
    free(t->cuda_names[t->n]);
    t->cuda_names[t->n] = NULL;
    return tps_err_oom(e, "reading %s", path);
  }
  t->aliases[t->n] = al;
  t->n++;
  return 0;
}

int tps_gpus_load(const char *path, tps_gpu_table *t, tps_err *e) {
  memset(t, 0, sizeof *t);
  char buf[4096];
  if (!path) {
    if (tps_data_path("gpus.tsv", buf, sizeof buf, e)) return -1;
    path = buf;
  }
  tps_buf b;
  if (tps_buf_read(path, &b, e)) return -1;
  int rc = tps_gpus_load_mem(path, b.data, b.len, t, e);
  tps_buf_free(&b);
  return rc;
}

int tps_gpus_load_mem(const char *path, const char *data, size_t len, tps_gpu_table *t, tps_err *e) {
  memset(t, 0, sizeof *t);
  snprintf(t->file, sizeof t->file, "%s", path ? path : "");
  tps_text tx;
  if (tps_text_from_buf(path, data, len, 0, &tx, e)) return -1;
  int rc = 0, have_header = 0, idx[G_N], ncols = 0;
  long header_line = 0;
  if (tx.n == 0) rc = tps_err_set(e, path, 0, "empty file");
  if (!rc) {
    t->gpu = calloc(tx.n, sizeof *t->gpu);
    t->aliases = calloc(tx.n, sizeof *t->aliases);
    t->source = calloc(tx.n, sizeof *t->source);
    t->cuda_names = calloc(tx.n, sizeof *t->cuda_names);
    if (!t->gpu || !t->aliases || !t->source || !t->cuda_names) rc = tps_err_oom(e, "reading %s", path);
  }
  for (size_t i = 0; i < tx.n && !rc; i++) {
    long ln = (long)i + 1;
    char *s = tx.line[i];
    if (s[0] == '#' || s[strspn(s, " \t")] == '\0') continue;
    char *f[G_N + 1];
    int nf = tps_split_tabs(s, f, G_N);
    if (!have_header) {
      for (int k = 0; k < G_N; k++) idx[k] = -1;
      for (int c = 0; c < nf && c < G_N; c++)
        for (int k = 0; k < G_N; k++)
          if (strcmp(f[c], gcols[k]) == 0) {
            if (idx[k] >= 0) rc = tps_err_set(e, path, ln, "column '%s' appears twice", gcols[k]);
            idx[k] = c;
          }
      for (int k = 0; k < G_REQ && !rc; k++)
        if (idx[k] < 0) rc = tps_err_set(e, path, ln, "missing column '%s' in the GPU table header", gcols[k]);
      int known = 0;
      for (int k = 0; k < G_N; k++) known += idx[k] >= 0;
      if (!rc && nf != known)
        rc = tps_err_set(e, path, ln,
                         "GPU table header has %d columns, want the %d: name aliases sms ... source (and optionally "
                         "base_mhz boost_mhz cuda_names engine_key plot_colour arch fp4_tflops), no others",
                         nf > G_N ? G_N + 1 : nf, G_REQ);
      ncols = nf;
      have_header = 1;
      header_line = ln;
      continue;
    }
    if (nf != ncols) {
      rc = tps_err_set(e, path, ln, "row has %s%d cells, the header has %d (tab-separated; empty aliases allowed)",
                       nf > G_N ? "over " : "", nf > G_N ? G_N : nf, ncols);
      break;
    }
    rc = row(t, path, ln, f, idx, e);
  }
  if (!rc && !have_header) rc = tps_err_set(e, path, 0, "no header row");
  if (!rc && t->n == 0) rc = tps_err_set(e, path, header_line, "header but no GPUs");
  if (!rc) rc = tps_text_check_end(&tx, e);
  tps_text_free(&tx);
  if (rc) tps_gpus_free(t);
  return rc;
}

const tps_gpu *tps_gpus_find(const tps_gpu_table *t, const char *name, tps_err *e) {
  const tps_gpu *g = find_exact(t, name);
  if (g) return g;
  /* CUDA device names: "NVIDIA H100 80GB HBM3", "NVIDIA H20" */
  char buf[128], out[128];
  const char *s = name;
  if (strncasecmp(s, "NVIDIA ", 7) == 0) s += 7;
  snprintf(buf, sizeof buf, "%s", s);
  if ((g = find_exact(t, buf))) return g;
  out[0] = '\0';
  char *save = NULL;
  for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
    size_t l = strlen(w);
    int mem = (l > 2 && strcasecmp(w + l - 2, "GB") == 0 && isdigit((unsigned char)w[0])) ||
              strncasecmp(w, "HBM", 3) == 0;
    if (mem) continue;
    if (out[0]) strncat(out, "-", sizeof out - strlen(out) - 1);
    strncat(out, w, sizeof out - strlen(out) - 1);
  }
  if (out[0] && (g = find_exact(t, out))) return g;
  char known[600];
  size_t off = 0;
  known[0] = '\0';
  for (size_t i = 0; i < t->n && off < sizeof known - 8; i++) {
    int w = snprintf(known + off, sizeof known - off, "%s%s", i ? ", " : "", t->gpu[i].name);
    if (w < 0 || (size_t)w >= sizeof known - off) { snprintf(known + off, sizeof known - off, ", ..."); break; }
    off += (size_t)w;
  }
  tps_err_set(e, NULL, 0, "unknown GPU '%s' (known: %s)", name, known);
  return NULL;
}
