/* ncclt_rows.c: one result row of an nccl-tests log (see ncclt.c): its layout (lead fields,
 * -I statistics, -S timestamp), its cells range-checked, its printed precision kept for the
 * bandwidth check. */
#include "config.h"
#include "src/io/ncclt.h"
#include "src/io/ncclt_int.h"
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/table.h"
#include "src/base/util.h"

static int is_number(const char *s) {
  double v;
  return tps_parse_double(s, &v) == 0;
}


static int is_date(const char *s) { /* YYYY-MM-DD */
  if (strlen(s) != 10) return 0;
  for (int i = 0; i < 10; i++) {
    if (i == 4 || i == 7) { if (s[i] != '-') return 0; }
    else if (!isdigit((unsigned char)s[i])) return 0;
  }
  return 1;
}

static int is_clock(const char *s) { /* HH:MM:SS */
  if (strlen(s) != 8) return 0;
  for (int i = 0; i < 8; i++) {
    if (i == 2 || i == 5) { if (s[i] != ':') return 0; }
    else if (!isdigit((unsigned char)s[i])) return 0;
  }
  return 1;
}


/* Half a unit of the last printed digit of a number token ("12.10" -> 0.005, "1.1e+07" ->
 * 5e5, "337015" -> 0.5). */
static double half_ulp(const char *s) {
  const char *e = strpbrk(s, "eE"), *dot = strchr(s, '.');
  int dec = 0;
  if (dot && (!e || dot < e)) {
    const char *p = dot + 1;
    while (isdigit((unsigned char)*p)) { dec++; p++; }
  }
  long ex = e ? strtol(e + 1, NULL, 10) : 0; /* strtol saturates: "0e999999999999999999999" */
  if (ex > 300) ex = 300;
  if (ex < -300) ex = -300;
  return 0.5 * pow(10.0, (double)(ex - dec));
}

/* The numeric cell tok named what: finite, and > 0 when positive is set. */
static int num(const char *path, long ln, const char *tok, const char *what, int positive, double *out, tps_err *e) {
  if (tps_parse_double(tok, out) != 0) return tps_err_set(e, path, ln, "%s '%s' is not a finite number", what, tok);
  if (positive && !(*out > 0)) return tps_err_set(e, path, ln, "%s %s is not positive", what, tok);
  return 0;
}

static int wrong_cell(const char *path, long ln, const char *tok, const char *which, double *out, tps_err *e) {
  if (strcmp(tok, "N/A") == 0) { *out = NAN; return 0; }
  if (tps_parse_double(tok, out) != 0 || *out < 0 || *out > 1e15 || *out != floor(*out))
    return tps_err_set(e, path, ln, "#wrong (%s) '%s' is neither a count nor N/A", which, tok);
  if (*out > 0)
    return tps_err_set(e, path, ln, "%s elements wrong (%s): the run failed its data check, its times are not usable",
                       tok, which);
  return 0;
}

/* Read one block (time algbw busbw #wrong [i_min i_max i_p99 i_cv%]) starting at tok. */
static int block(const char *path, long ln, char **tok, int stats, const char *which, double *time, double *alg,
                 double *bus, double *wrong, double st[4], tps_err *e) {
  char what[48];
  snprintf(what, sizeof what, "time (%s)", which);
  if (num(path, ln, tok[0], what, 1, time, e)) return -1;
  if (*time < TPS_TABLE_MIN_US || *time > TPS_TABLE_MAX_US)
    return tps_err_set(e, path, ln, "time (%s) %s us is outside the range %g..%g us", which, tok[0], TPS_TABLE_MIN_US,
                       TPS_TABLE_MAX_US);
  snprintf(what, sizeof what, "algbw (%s)", which);
  if (num(path, ln, tok[1], what, 0, alg, e)) return -1;
  snprintf(what, sizeof what, "busbw (%s)", which);
  if (num(path, ln, tok[2], what, 0, bus, e)) return -1;
  if (*alg < 0 || *alg > MAX_BW_GBPS || *bus < 0 || *bus > MAX_BW_GBPS)
    return tps_err_set(e, path, ln, "bandwidth (%s) %s / %s GB/s is outside 0..%g GB/s", which, tok[1], tok[2], MAX_BW_GBPS);
  if (wrong_cell(path, ln, tok[3], which, wrong, e)) return -1;
  static const char *const names[4] = {"i_min", "i_max", "i_p99", "i_cv%"};
  for (int k = 0; k < 4; k++) {
    st[k] = NAN;
    if (!stats) continue;
    snprintf(what, sizeof what, "%s (%s)", names[k], which);
    if (num(path, ln, tok[4 + k], what, 0, &st[k], e)) return -1;
    if (st[k] < 0 || st[k] > TPS_TABLE_MAX_US)
      return tps_err_set(e, path, ln, "%s (%s) %s is outside 0..%g", names[k], which, tok[4 + k], TPS_TABLE_MAX_US);
  }
  return 0;
}


/* The row layout of a token count: lead fields before the blocks (3, 4 or 5), -I stats, -S.
 * -1 when no layout fits. */
int ncclt_layout_of(char **tok, int nt, int *lead, int *stats, int *ts) {
  *ts = nt >= 2 && is_date(tok[nt - 2]) && is_clock(tok[nt - 1]);
  int m = nt - (*ts ? 2 : 0);
  for (int st = 0; st < 2; st++) {
    int l = m - (st ? 16 : 8);
    if (l >= 3 && l <= 5) { *lead = l; *stats = st; return 0; }
  }
  return -1;
}

/* buf: scratch of bufsz >= strlen(s) + 1. *lead_out: the row's lead fields (3, 4, 5). */
int ncclt_parse_row(const char *path, long ln, const char *s, int srun, layout_t *L, tps_ncclt_row *r, row_toks *rt,
                     char *buf, size_t bufsz, int *lead_out, tps_err *e) {
  char *tok[MAXTOK];
  int nt = ncclt_tokenize(s, buf, bufsz, tok, srun);
  memset(r, 0, sizeof *r);
  r->line = ln;
  r->root = 0;
  if (nt > MAXTOK) return tps_err_set(e, path, ln, "too many fields for an nccl-tests result row");
  if (nt < 3) return tps_err_set(e, path, ln, "result row cut short (%d fields; truncated log?)", nt);
  double v = ncclt_whole(tok[0]);
  if (v < 0) return tps_err_set(e, path, ln, "size '%s' is not a byte count (a whole number up to 2^50)", tok[0]);
  r->size_bytes = v;
  v = ncclt_whole(tok[1]);
  if (v < 0) return tps_err_set(e, path, ln, "count '%s' is not an element count (a whole number up to 2^50)", tok[1]);
  r->count = (long)v;
  if (!ncclt_is_type_name(tok[2])) return tps_err_set(e, path, ln, "type '%s' is not an nccl-tests type name", tok[2]);
  snprintf(r->type, sizeof r->type, "%s", tok[2]);
  int lead, stats, ts;
  if (ncclt_layout_of(tok, nt, &lead, &stats, &ts) != 0) {
    /* name the fields after the leading ones, as the layout of the rows before has them */
    int l = L->set ? L->lead : (nt >= 5 && !is_number(tok[3])) ? 5 : 3;
    int rest = nt - l - (L->set && L->ts ? 2 : 0);
    return tps_err_set(e, path, ln,
                       "result row has %d fields after '%s', want 8 (time algbw busbw #wrong, out-of-place "
                       "and in-place) or 16 (with -I); truncated log?",
                       rest < 0 ? 0 : rest, tok[l - 1 < nt ? l - 1 : nt - 1]);
  }
  if (ts) snprintf(r->timestamp, sizeof r->timestamp, "%s %s", tok[nt - 2], tok[nt - 1]);
  if (lead == 5) {
    if (is_number(tok[3]) || strlen(tok[3]) >= sizeof r->redop)
      return tps_err_set(e, path, ln, "redop '%s' is not a reduction name", tok[3]);
    snprintf(r->redop, sizeof r->redop, "%s", tok[3]);
    long root;
    if (tps_parse_range(tok[4], -1, 65535, &root) != 0)
      return tps_err_set(e, path, ln, "root '%s' is not a rank (-1..65535)", tok[4]);
    r->root = (int)root;
  } else if (lead == 4) {
    long root;
    if (tps_parse_range(tok[3], 0, 65535, &root) == 0) r->root = (int)root; /* a pre-2.13 root column */
    else if (!is_number(tok[3]) && strlen(tok[3]) < sizeof r->redop) {
      snprintf(r->redop, sizeof r->redop, "%s", tok[3]);
      r->root = -1;
    } else
      return tps_err_set(e, path, ln, "'%s' after the type is neither a redop nor a root", tok[3]);
  }
  if (!L->set) {
    L->lead = lead; L->stats = stats; L->ts = ts; L->set = 1; L->line = ln;
  } else if (L->lead != lead || L->stats != stats || L->ts != ts) {
    return tps_err_set(e, path, ln, "result row layout differs from the row on line %ld (truncated or mixed log?)", L->line);
  }
  int bl = stats ? 8 : 4;
  double st[4];
  if (block(path, ln, tok + lead, stats, "out-of-place", &r->oop_time_us, &r->oop_algbw_gbps, &r->oop_busbw_gbps,
            &r->oop_wrong, st, e))
    return -1;
  r->oop_min_us = st[0]; r->oop_max_us = st[1]; r->oop_p99_us = st[2]; r->oop_cv_pct = st[3];
  if (block(path, ln, tok + lead + bl, stats, "in-place", &r->ip_time_us, &r->ip_algbw_gbps, &r->ip_busbw_gbps,
            &r->ip_wrong, st, e))
    return -1;
  r->ip_min_us = st[0]; r->ip_max_us = st[1]; r->ip_p99_us = st[2]; r->ip_cv_pct = st[3];
  for (int k = 0; k < 2; k++) {
    int o = lead + k * bl;
    rt->ht[k] = half_ulp(tok[o]);
    rt->ha[k] = half_ulp(tok[o + 1]);
    rt->hb[k] = half_ulp(tok[o + 2]);
  }
  *lead_out = lead;
  return 0;
}

/* ------------------------------------------------------------------ element types (moved from ncclt.c) */
int tps_ncclt_type_size(const char *type) {
  static const struct { const char *name; int size; } types[] = {
      {"int8", 1},     {"uint8", 1},    {"char", 1},     {"f8e4m3", 1},   {"f8e5m2", 1},   {"fp8_e4m3", 1},
      {"fp8_e5m2", 1}, {"half", 2},     {"float16", 2},  {"bfloat16", 2}, {"int32", 4},    {"uint32", 4},
      {"int", 4},      {"float", 4},    {"float32", 4},  {"int64", 8},    {"uint64", 8},   {"double", 8},
      {"float64", 8}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(type, types[i].name) == 0) return types[i].size;
  return 0;
}


int ncclt_is_type_name(const char *s) {
  if (!isalpha((unsigned char)s[0]) || strlen(s) >= 16) return 0;
  for (const char *p = s; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return 0;
  return 1;
}
