/* predfile.c: reading `tpsplit predict`'s printed prediction (see predfile.h). */
#include "config.h"
#include "src/io/predfile.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/text.h"
#include "src/base/util.h"

#define MAXROWS 4096
static const char *const cols[6] = {"tokens", "rows_per_rank", "replicated_us", "split_us", "speedup", "gather_backend"};

/* Split on runs of blanks into f[0..max); returns the count. */
static int words(char *s, char **f, int max) {
  int n = 0;
  for (char *t = strtok(s, " \t\r\n"); t && n < max; t = strtok(NULL, " \t\r\n")) f[n++] = t;
  return n;
}

static int is_header(const char *line) {
  char buf[512], *f[8];
  snprintf(buf, sizeof buf, "%s", line);
  int n = words(buf, f, 8);
  if (n < 6) return 0;
  for (int i = 0; i < 6; i++) if (strcmp(f[i], cols[i])) return 0;
  return 1;
}

/* "# GPU TPn PATH, gather B": predict's first line (other '#' lines may come before it). */
static int what_line(const char *line, char *gpu, int *tp, char *kp, char *gather) {
  return sscanf(line, "# %63s TP%d %31[^,], gather %15[a-z-]", gpu, tp, kp, gather) == 4 && *tp >= 1;
}

int tps_predtext_is(const char *path) {
  tps_text tx; /* tps_text_read: bounded, and a pipe read once (its bytes kept for the reader) */
  tps_err e;
  if (tps_text_read(path, &tx, &e)) return 0;
  char line[1024], gpu[64], kp[32], ga[16];
  int tp, what = 0, is = 0;
  for (size_t i = 0; i < tx.n && i < 200 && !is; i++) {
    snprintf(line, sizeof line, "%s", tx.line[i]);
    if (line[0] == '#') { what |= what_line(line, gpu, &tp, kp, ga); continue; }
    is = what && is_header(line);
  }
  tps_text_free(&tx);
  return is;
}

int tps_predtext_read(const char *path, tps_table *t, tps_err *e) {
  memset(t, 0, sizeof *t);
  tps_text tx;
  if (tps_text_read(path, &tx, e)) return -1;
  char line[4096];
  long ln = 0, hdr = 0;
  int rc = 0, ncol = 0, what = 0;
  t->kind = TPS_TABLE_SPLIT;
  t->path = strdup(path);
  t->tokens = malloc(MAXROWS * sizeof *t->tokens);
  t->rows_per_rank = malloc(MAXROWS * sizeof *t->rows_per_rank);
  t->replicated_us = malloc(MAXROWS * sizeof *t->replicated_us);
  t->split_us = malloc(MAXROWS * sizeof *t->split_us);
  t->line = malloc(MAXROWS * sizeof *t->line);
  t->prov = calloc(256, sizeof *t->prov);
  snprintf(t->source, sizeof t->source, "predict");
  if (!t->path || !t->tokens || !t->rows_per_rank || !t->replicated_us || !t->split_us || !t->line || !t->prov) {
    tps_text_free(&tx);
    tps_table_free(t);
    return tps_err_oom(e, "reading %s", path);
  }
  for (size_t i = 0; !rc && i < tx.n; i++) {
    ln = (long)i + 1;
    if (strlen(tx.line[i]) >= sizeof line) { rc = tps_err_set(e, path, ln, "line longer than %zu bytes", sizeof line - 1); break; }
    snprintf(line, sizeof line, "%s", tx.line[i]);
    if (line[0] == '#' && !what && !hdr) what = what_line(line, t->gpu, &t->tp, t->kpath, t->gather);
    if (line[0] == '#') {
      if (t->nprov < 256) {
        line[strcspn(line, "\r\n")] = 0;
        t->prov[t->nprov++] = strdup(line[1] == ' ' ? line + 2 : line + 1);
      }
      continue;
    }
    if (!hdr) {
      if (!what) {
        rc = tps_err_set(e, path, ln, "not `tpsplit predict` output (want a line '# GPU TPn PATH, gather B' first)");
        break;
      }
      if (is_header(line)) {
        char *f[8];
        ncol = words(line, f, 8);
        hdr = ln;
      }
      continue;
    }
    char *f[8];
    int n = words(line, f, 8);
    long tok, rpr;
    double rep, spl;
    if (n == 0 || tps_parse_long(f[0], &tok) != 0) break; /* the rows end ("break-even: ...") */
    if (n != ncol || tps_parse_long(f[1], &rpr) || tps_parse_double(f[2], &rep) || tps_parse_double(f[3], &spl) || tok < 1 ||
        rpr < 1 || !(rep > 0) || !(spl > 0) || !isfinite(rep) || !isfinite(spl)) {
      rc = tps_err_set(e, path, ln, "a row of %d columns (tokens rows_per_rank replicated_us split_us ...) with positive numbers", ncol);
      break;
    }
    if (rpr != (tok + t->tp - 1) / t->tp) { rc = tps_err_set(e, path, ln, "rows_per_rank %ld != ceil(%ld / %d)", rpr, tok, t->tp); break; }
    if (t->nrows && tok <= t->tokens[t->nrows - 1]) { rc = tps_err_set(e, path, ln, "tokens %ld not above the row before", tok); break; }
    if (t->nrows == MAXROWS) { rc = tps_err_set(e, path, ln, "more than %d rows", MAXROWS); break; }
    t->tokens[t->nrows] = tok;
    t->rows_per_rank[t->nrows] = rpr;
    t->replicated_us[t->nrows] = rep;
    t->split_us[t->nrows] = spl;
    t->line[t->nrows] = ln;
    t->nrows++;
  }
  tps_text_free(&tx);
  if (!rc && !hdr) rc = tps_err_set(e, path, 0, "no header line 'tokens rows_per_rank replicated_us split_us speedup gather_backend'");
  if (!rc && t->nrows < 2) rc = tps_err_set(e, path, hdr, "fewer than 2 rows after the header");
  if (rc) tps_table_free(t);
  return rc;
}
