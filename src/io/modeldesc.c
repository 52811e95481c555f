/* modeldesc.c: reader of model descriptions (see modeldesc.h and
 * data/models/deepseek-v4.1-flash.tsv for the format). */
#include "config.h"
#include "src/io/modeldesc.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "src/io/text.h"
#include "src/base/util.h"

static const char *const columns[] = {"name", "out_features", "path", "out_dtype", "layers", "split", "stream"};
#define NCOL (sizeof columns / sizeof columns[0])

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n')) s[--n] = '\0';
  return s;
}

/* -1 with e when a data or '#@' line ends in a blank or tab (padding cells, a value with blanks after it):
 * refused, not trimmed.  Comments and blank lines pass. */
static int ends_blank(const char *path, long ln, const char *line, tps_err *e) {
  size_t n = strlen(line);
  const char *s = line + strspn(line, " \t");
  if (!n || !isspace((unsigned char)line[n - 1]) || !*s || (s[0] == '#' && s[1] != '@')) return 0;
  return tps_err_set(e, path, ln, "blanks or tabs at the end of the line (empty cells after the last column?)");
}

static int parse_dtype(const char *s, double *bytes) {
  if (strcasecmp(s, "bf16") == 0 || strcasecmp(s, "fp16") == 0) *bytes = 2;
  else if (strcasecmp(s, "fp32") == 0) *bytes = 4;
  else if (strcasecmp(s, "fp8") == 0) *bytes = 1;
  else return -1;
  return 0;
}

static int parse_yesno(const char *s, int *v) {
  if (strcasecmp(s, "yes") == 0) *v = 1;
  else if (strcasecmp(s, "no") == 0) *v = 0;
  else return -1;
  return 0;
}

/* "2,8,14" or "0-39" or mixtures; every index in [0, layers). */
static int parse_layers(const char *s, int layers, unsigned char *in, char *why, size_t whysz) {
  char buf[1024];
  if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf) { snprintf(why, whysz, "layer list too long"); return -1; }
  int any = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    tok = trim(tok);
    long a, b;
    char *dash = strchr(tok, '-');
    if (dash) {
      *dash = '\0';
      if (tps_parse_long(trim(tok), &a) || tps_parse_long(trim(dash + 1), &b)) goto bad;
    } else {
      if (tps_parse_long(tok, &a)) goto bad;
      b = a;
    }
    if (a < 0 || b < a) goto bad;
    if (b >= layers) {
      snprintf(why, whysz, "layer %ld out of range (the model has layers 0-%d)", b, layers - 1);
      return -1;
    }
    for (long l = a; l <= b; l++) {
      if (in[l]) { snprintf(why, whysz, "layer %ld listed twice", l); return -1; }
      in[l] = 1;
    }
    any = 1;
  }
  if (!any) goto bad;
  return 0;
bad:
  snprintf(why, whysz, "bad layer list '%s' (want e.g. 0-39 or 2,8,14: 0-based, ranges ascending)", s);
  return -1;
}

int tps_modeldesc_read(const char *path, tps_sim_model *m, tps_err *e) {
  memset(m, 0, sizeof *m);
  tps_buf b;
  if (tps_buf_read(path, &b, e)) return -1;
  int rc = tps_modeldesc_read_mem(path, b.data, b.len, m, e);
  tps_buf_free(&b);
  return rc;
}

int tps_modeldesc_read_mem(const char *path, const char *data, size_t len, tps_sim_model *m, tps_err *e) {
  memset(m, 0, sizeof *m);
  tps_text tx;
  if (tps_text_from_buf(path, data, len, 0, &tx, e)) return -1;
  long lineno = 0;
  int have_hidden = 0, have_layers = 0, have_side = 0, have_header = 0;
  static const char *const meta_keys[] = {"model", "hidden", "layers", "side_stream_max_tokens"};
  long meta_line[4] = {0}; /* where each key was given: a second one is refused, not "last wins" */
  int rc = -1;
  for (size_t li = 0; li < tx.n; li++) {
    lineno = (long)li + 1;
    if (ends_blank(path, lineno, tx.line[li], e)) goto out;
    char *s = trim(tx.line[li]);
    if (!*s) continue;
    if (strncmp(s, "#@", 2) == 0) {
      char *kv = trim(s + 2), *colon = strchr(kv, ':');
      if (!colon) { tps_err_set(e, path, lineno, "metadata line without 'key: value'"); goto out; }
      *colon = '\0';
      char *key = trim(kv), *val = trim(colon + 1);
      long v;
      if (have_header) { tps_err_set(e, path, lineno, "metadata after the header row"); goto out; }
      for (int k = 0; k < 4; k++) {
        if (strcmp(key, meta_keys[k]) != 0) continue;
        if (meta_line[k]) { tps_err_set(e, path, lineno, "metadata '%s' given twice (also on line %ld)", key, meta_line[k]); goto out; }
        meta_line[k] = lineno;
      }
      if (strcmp(key, "model") == 0) {
        if (!*val || strlen(val) >= sizeof m->name) { tps_err_set(e, path, lineno, "bad model name"); goto out; }
        snprintf(m->name, sizeof m->name, "%s", val);
      } else if (strcmp(key, "hidden") == 0) {
        if (tps_parse_range(val, 1, TPS_DIM_MAX, &v)) { tps_err_set(e, path, lineno, "hidden must be a positive integer (at most %ld), got '%s'", TPS_DIM_MAX, val); goto out; }
        m->hidden = v; have_hidden = 1;
      } else if (strcmp(key, "layers") == 0) {
        if (tps_parse_long(val, &v) || v < 1 || v > TPS_SIM_MAXLAYERS) {
          tps_err_set(e, path, lineno, "layers must be an integer in 1..%d, got '%s'", TPS_SIM_MAXLAYERS, val);
          goto out;
        }
        m->layers = (int)v; have_layers = 1;
      } else if (strcmp(key, "side_stream_max_tokens") == 0) {
        if (tps_parse_range(val, 0, 16777216L, &v)) { tps_err_set(e, path, lineno, "side_stream_max_tokens must be a whole number from 0 to 16777216, got '%s'", val); goto out; }
        m->side_max_tokens = v; have_side = 1;
      } else {
        tps_err_set(e, path, lineno, "unknown metadata key '%s' (known: model, hidden, layers, side_stream_max_tokens)", key);
        goto out;
      }
      continue;
    }
    if (s[0] == '#') continue;
    char *f[NCOL + 1];
    size_t nf = (size_t)tps_split_tabs(s, f, (int)NCOL);
    if (tps_text_blank_cells(path, lineno, f, nf < NCOL ? nf : NCOL, 1, e)) goto out;
    if (!have_header) {
      int okh = nf == NCOL;
      for (size_t i = 0; okh && i < NCOL; i++) okh = strcmp(f[i], columns[i]) == 0;
      if (!okh) {
        tps_err_set(e, path, lineno, "header row must be: name out_features path out_dtype layers split stream (tab-separated)");
        goto out;
      }
      if (!have_hidden || !have_layers || !have_side) {
        tps_err_set(e, path, lineno, "missing metadata before the header: %s%s%s", have_hidden ? "" : "'#@ hidden' ",
                    have_layers ? "" : "'#@ layers' ", have_side ? "" : "'#@ side_stream_max_tokens'");
        goto out;
      }
      have_header = 1;
      continue;
    }
    if (nf != NCOL) { tps_err_set(e, path, lineno, "%zu fields, want %zu (name out_features path out_dtype layers split stream)", nf > NCOL ? (size_t)NCOL + 1 : nf, (size_t)NCOL); goto out; }
    if (m->nproj == TPS_SIM_MAXPROJ) { tps_err_set(e, path, lineno, "more than %d projections", TPS_SIM_MAXPROJ); goto out; }
    tps_sim_proj *p = &m->proj[m->nproj];
    memset(p, 0, sizeof *p);
    if (!f[0][0] || strlen(f[0]) >= sizeof p->name) { tps_err_set(e, path, lineno, "bad projection name '%s'", f[0]); goto out; }
    for (const char *c = f[0]; *c; c++)
      if (!isalnum((unsigned char)*c) && *c != '_' && *c != '.' && *c != '-') {
        tps_err_set(e, path, lineno, "bad projection name '%s' (letters, digits, _ . -)", f[0]);
        goto out;
      }
    if (strcasecmp(f[0], "all") == 0 || strcasecmp(f[0], "none") == 0) {
      tps_err_set(e, path, lineno, "projection name '%s' is reserved", f[0]);
      goto out;
    }
    snprintf(p->name, sizeof p->name, "%s", f[0]);
    long n;
    if (tps_parse_range(f[1], 1, TPS_DIM_MAX, &n)) { tps_err_set(e, path, lineno, "out_features must be a positive integer (at most %ld), got '%s'", TPS_DIM_MAX, f[1]); goto out; }
    p->n = n;
    p->path = tps_path_find_for(f[2], TPS_PATH_F_MODEL); /* the simulator predicts every projection */
    if (!p->path) {
      char why[320];
      tps_err_set(e, path, lineno, "%s", tps_path_unknown(f[2], TPS_PATH_F_MODEL, why, sizeof why));
      goto out;
    }
    if (parse_dtype(f[3], &p->out_bytes)) { tps_err_set(e, path, lineno, "unknown out_dtype '%s' (bf16, fp16, fp32, fp8)", f[3]); goto out; }
    char why[256];
    if (parse_layers(f[4], m->layers, p->in_layer, why, sizeof why)) { tps_err_set(e, path, lineno, "%s", why); goto out; }
    if (parse_yesno(f[5], &p->split)) { tps_err_set(e, path, lineno, "split must be yes or no, got '%s'", f[5]); goto out; }
    if (strcasecmp(f[6], "main") == 0) p->aux = 0;
    else if (strcasecmp(f[6], "aux") == 0) p->aux = 1;
    else { tps_err_set(e, path, lineno, "stream must be main or aux, got '%s'", f[6]); goto out; }
    for (size_t j = 0; j < m->nproj; j++) {
      if (strcmp(m->proj[j].name, p->name) != 0) continue;
      for (int l = 0; l < m->layers; l++)
        if (m->proj[j].in_layer[l] && p->in_layer[l]) {
          tps_err_set(e, path, lineno, "projection '%s' appears twice in layer %d", p->name, l);
          goto out;
        }
    }
    m->nproj++;
  }
  if (tx.n == 0) { tps_err_set(e, path, 0, "empty file"); goto out; }
  if (!have_header) { tps_err_set(e, path, lineno, "no header row (name out_features path out_dtype layers split stream)"); goto out; }
  if (m->nproj == 0) { tps_err_set(e, path, lineno, "no projection rows after the header"); goto out; }
  if (tps_text_check_end(&tx, e)) goto out;
  if (!m->name[0]) {
    const char *base = strrchr(path, '/');
    snprintf(m->name, sizeof m->name, "%s", base ? base + 1 : path);
  }
  rc = 0;
out:
  tps_text_free(&tx);
  return rc;
}

static int cmp_name(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static void list_models(char *buf, size_t sz) {
  char dir[4096];
  buf[0] = '\0';
  snprintf(dir, sizeof dir, "%s/models", tps_data_dir());
  DIR *d = opendir(dir);
  if (!d) return;
  char names[64][128];
  size_t n = 0;
  struct dirent *de;
  while ((de = readdir(d)) && n < 64) {
    size_t l = strlen(de->d_name);
    if (l > 4 && l < 128 && strcmp(de->d_name + l - 4, ".tsv") == 0) {
      snprintf(names[n], sizeof names[n], "%.*s", (int)(l - 4), de->d_name);
      n++;
    }
  }
  closedir(d);
  qsort(names, n, sizeof names[0], cmp_name);
  for (size_t i = 0; i < n; i++) {
    size_t len = strlen(buf);
    snprintf(buf + len, sz - len, "%s%s", i ? ", " : "", names[i]);
  }
}

int tps_modeldesc_find(const char *name, char *buf, size_t bufsz, tps_err *e) {
  struct stat st;
  if (strchr(name, '/') || (stat(name, &st) == 0 && S_ISREG(st.st_mode))) {
    if ((size_t)snprintf(buf, bufsz, "%s", name) >= bufsz) return tps_err_set(e, name, 0, "path too long");
    return 0;
  }
  char rel[256], lower[200];
  size_t i;
  for (i = 0; name[i] && i < sizeof lower - 1; i++) lower[i] = (char)tolower((unsigned char)name[i]);
  lower[i] = '\0';
  snprintf(rel, sizeof rel, "models/%s.tsv", lower);
  tps_err tmp;
  tps_err_clear(&tmp);
  if (tps_data_path(rel, buf, bufsz, &tmp) == 0) return 0;
  char known[1024];
  list_models(known, sizeof known);
  return tps_err_set(e, NULL, 0, "unknown model '%s' (not a file; bundled: %s)", name, known[0] ? known : "none found");
}

int tps_modeldesc_check(const char *name, tps_err *e) {
  char path[4096];
  if (tps_modeldesc_find(name, path, sizeof path, e)) return -1;
  tps_sim_model *m = malloc(sizeof *m);
  if (!m) return tps_err_oom(e, "reading %s", path);
  int rc = tps_modeldesc_read(path, m, e);
  free(m);
  return rc;
}
