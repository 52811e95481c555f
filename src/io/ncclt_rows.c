/* ncclt_rows.c: the result rows of an nccl-tests log (see ncclt.c): one row's layout (lead
 * fields, -I statistics, -S timestamp), its cells range-checked, its printed precision kept
 * for the bandwidth check; then pass 3 of the reader, after the rows are read: the rank count
 * (Rank lines, --ranks, size / count, or the one count every row's printed bandwidths fit),
 * the bandwidth conventions, and the collective the rows point to when they are not an
 * all-gather. */
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

/* ================================================================== the rank count and the collective (pass 3) */

/* ------------------------------------------------------------------ bandwidth conventions */

/* Does block k of row r fit n ranks: current convention (old = 0: algbw = S/t, busbw =
 * algbw (n-1)/n) or the pre-June-2020 one (old = 1: algbw = busbw = S/t (n-1)/n)? */
static int bw_fits(const tps_ncclt_row *r, const row_toks *rt, int k, int n, int old) {
  double t = k ? r->ip_time_us : r->oop_time_us;
  double a = k ? r->ip_algbw_gbps : r->oop_algbw_gbps, b = k ? r->ip_busbw_gbps : r->oop_busbw_gbps;
  double alg = r->size_bytes / t / 1e3, f = n > 0 ? (double)(n - 1) / n : 0;
  double ea = old ? alg * f : alg, eb = alg * f;
  double rel_t = rt->ht[k] / t;
  double tola = 1.5 * (rt->ha[k] + ea * rel_t) + 0.005 * ea + 1e-9;
  double tolb = 1.5 * (rt->hb[k] + eb * rel_t) + 0.005 * eb + 1e-9;
  return fabs(a - ea) <= tola && fabs(b - eb) <= tolb;
}

static int all_fit(const tps_ncclt_row *row, const row_toks *rt, size_t n, int ranks, int old, size_t *bad) {
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 2; k++)
      if (!bw_fits(&row[i], &rt[i], k, ranks, old)) { if (bad) *bad = i; return 0; }
  return 1;
}

/* busbw/algbw of the row with the largest printed algbw (the most digits), NaN when none. */
static double bus_factor(const tps_ncclt_row *row, size_t n) {
  size_t best = n;
  for (size_t i = 0; i < n; i++)
    if (row[i].oop_algbw_gbps > 0 && (best == n || row[i].oop_algbw_gbps > row[best].oop_algbw_gbps)) best = i;
  return best == n ? NAN : row[best].oop_busbw_gbps / row[best].oop_algbw_gbps;
}

/* The collective the rows' signs point to when it is not an all-gather ("" when they fit
 * one), with why.  n: the rank count (0 when unknown). */
static void guess_collective(const run_t *R, int lead, const tps_ncclt_row *row, size_t nr, int n, char *name,
                             size_t namesz, char *why, size_t whysz) {
  name[0] = why[0] = '\0';
  if (nr == 0) return;
  const tps_ncclt_row *r = &row[0];
  int ts = tps_ncclt_type_size(r->type);
  double sc = ts && r->count > 0 ? r->size_bytes / ((double)r->count * ts) : NAN; /* n for a gather, 1 otherwise */
  double f = bus_factor(row, nr);
  if (r->redop[0] && ncclt_is_reduction(r->redop)) {
    if (r->root >= 0) snprintf(name, namesz, "reduce_perf");
    else if ((n > 1 && sc == n) || (isfinite(f) && f < 1.0 - 1e-9 && !(isfinite(sc) && sc == 1)))
      snprintf(name, namesz, "reduce_scatter_perf");
    else snprintf(name, namesz, "all_reduce_perf");
    snprintf(why, whysz, "redop %s: a reduction", r->redop);
    return;
  }
  if (lead >= 4 && r->root >= 0) {
    snprintf(name, namesz, "broadcast_perf");
    snprintf(why, whysz, "root %d: a rooted collective (broadcast, reduce, gather, scatter)", r->root);
    return;
  }
  if (lead == 3 && R->hdr && R->hdr_redop) {
    snprintf(name, namesz, "alltoall_perf");
    snprintf(why, whysz, "a pre-2.13 header with a redop column but rows without one, as alltoall_perf printed it");
    return;
  }
  int ip_na = 1, oop_num = 1;
  for (size_t i = 0; i < nr; i++) {
    if (!isnan(row[i].ip_wrong)) ip_na = 0;
    if (isnan(row[i].oop_wrong)) oop_num = 0;
  }
  if (ip_na && oop_num) {
    snprintf(name, namesz, "alltoall_perf");
    snprintf(why, whysz, "in-place #wrong N/A while out-of-place is checked: alltoall has no in-place check");
    return;
  }
  if (isfinite(sc) && sc == 1 && n > 1) {
    snprintf(name, namesz, isfinite(f) && f > 1.05 ? "all_reduce_perf" : "broadcast_perf");
    snprintf(why, whysz, "size = count x %d bytes: nothing gathered from %d ranks", ts, n);
    return;
  }
  if (isfinite(f) && f > 1.05) {
    snprintf(name, namesz, "all_reduce_perf");
    snprintf(why, whysz, "busbw = %.3g x algbw: the 2(n-1)/n factor of an all-reduce", f);
  }
}

int ncclt_rank_count(const char *path, const run_t *R, const tps_ncclt_read_opts *o, const row_toks *rt, int lead,
                     tps_ncclt *log, char *from, size_t fromsz, int *nout, tps_err *e) {
  int n = 0;
  const tps_ncclt_row *r0 = &log->row[0];
  int tsz = tps_ncclt_type_size(r0->type);
  int sc_n = 0; /* size / (count * type size), when whole and the same in every row */
  if (tsz) {
    sc_n = -1;
    for (size_t i = 0; i < log->n; i++) {
      const tps_ncclt_row *r = &log->row[i];
      if (r->count <= 0) continue;
      double q = r->size_bytes / ((double)r->count * tsz);
      int qi = q == floor(q) && q >= 1 && q <= MAX_RANKS ? (int)q : 0;
      if (sc_n == -1) sc_n = qi;
      else if (sc_n != qi) sc_n = 0;
    }
    if (sc_n < 0) sc_n = 0;
  }
  if (R->nranks_lines > 0) {
    n = R->nranks_lines;
    log->ranks_from = TPS_NCCLT_RANKS_LINES;
    snprintf(from, fromsz, "%d '#  Rank' lines", n);
    if (o->ranks > 0 && o->ranks != n) {
      tps_err_set(e, path, 0, "--ranks %d, but the log has %d '#  Rank' lines", o->ranks, n);
      return -1;
    }
  } else if (R->using_devices || R->nthread_seen) {
    tps_err_set(e, path, 0, "no '#  Rank' lines after the preamble: cannot tell the number of ranks (lines lost? "
                            "give --ranks N)");
    return -1;
  } else if (o->ranks > 0) {
    n = o->ranks;
    log->ranks_from = TPS_NCCLT_RANKS_OPTION;
    snprintf(from, fromsz, "--ranks %d", n);
  } else if (sc_n > 0) {
    n = sc_n;
    log->ranks_from = TPS_NCCLT_RANKS_SIZE;
    snprintf(from, fromsz, "size / (count x %d bytes), no '#  Rank' lines", tsz);
  } else {
    /* the one rank count for which every row fits a convention */
    int found = 0, lo = 0, hi = 0;
    for (int c = 1; c <= 1024; c++) {
      if (all_fit(log->row, rt, log->n, c, 0, NULL) || (c > 1 && all_fit(log->row, rt, log->n, c, 1, NULL))) {
        if (!found) lo = c;
        hi = c;
        found++;
      }
    }
    if (found == 1) {
      n = lo;
      log->ranks_from = TPS_NCCLT_RANKS_RATIO;
      snprintf(from, fromsz, "the busbw/algbw ratio, no '#  Rank' lines");
    } else if (found == 0) {
      char name[32], why[160];
      guess_collective(R, lead, log->row, log->n, 0, name, sizeof name, why, sizeof why);
      if (name[0])
        tps_err_set(e, path, log->row[0].line, "%s log, not all_gather: %s (not an all_gather_perf log (%s))", name, why,
                    name);
      else
        tps_err_set(e, path, 0, "no '#  Rank' lines, and no rank count fits the printed bandwidths: "
                                "cannot tell the number of ranks (give --ranks N)");
      return -1;
    } else {
      tps_err_set(e, path, 0, "no '#  Rank' lines: the printed bandwidths fit %d to %d ranks, cannot tell which "
                              "(give --ranks N)", lo, hi);
      return -1;
    }
  }
  log->nranks = n;
  *nout = n;
  if (log->nthread > 0 && log->ngpus > 0 && R->nranks_lines > 0 && n % (log->nthread * log->ngpus) != 0) {
    tps_err_set(e, path, 0, "%d '#  Rank' lines, not a multiple of nThread %d x nGpus %d (lines lost?)", n, log->nthread,
                log->ngpus);
    return -1;
  }

  return 0;
}

int ncclt_check_allgather(const char *path, run_t *R, const row_toks *rt, int lead, int n, tps_ncclt *log, tps_err *e) {
  /* not an all-gather by its rows? */
  {
    char name[32], why[200];
    guess_collective(R, lead, log->row, log->n, n, name, sizeof name, why, sizeof why);
    if (name[0]) {
      snprintf(R->guess, sizeof R->guess, "%s", name);
      tps_err_set(e, path, log->row[0].line, "%s log, not all_gather: %s (not an all_gather_perf log (%s))", name, why,
                  name);
      return -1;
    }
  }
  for (size_t i = 0; i < log->n; i++) {
    const tps_ncclt_row *r = &log->row[i];
    int ts = tps_ncclt_type_size(r->type);
    if (ts && r->size_bytes != (double)r->count * ts * n) {
      tps_err_set(e, path, r->line,
                  "size %.0f != count %ld * %d bytes (%s) * %d ranks: not an all-gather of these ranks", r->size_bytes,
                  r->count, ts, r->type, n);
      return -1;
    }
  }
  /* bandwidth convention: every row the current one, or every row the old one */
  size_t bad = 0;
  if (!all_fit(log->row, rt, log->n, n, 0, &bad)) {
    size_t bad_old = 0;
    if (n > 1 && all_fit(log->row, rt, log->n, n, 1, &bad_old)) {
      log->bw_old = 1;
    } else {
      const tps_ncclt_row *r = &log->row[bad];
      int k = bw_fits(r, &rt[bad], 0, n, 0) ? 1 : 0;
      double t = k ? r->ip_time_us : r->oop_time_us, alg = r->size_bytes / t / 1e3, bus = alg * (n - 1) / n;
      double f = bus_factor(log->row, log->n);
      if (isfinite(f) && f > 1.05 && n > 1) {
        tps_err_set(e, path, r->line,
                    "all_reduce_perf log, not all_gather: busbw = %.3g x algbw, the 2(n-1)/n factor of an all-reduce "
                    "(not an all_gather_perf log (all_reduce_perf))", f);
        return -1;
      }
      tps_err_set(e, path, r->line,
                  "printed bandwidth (%s algbw %g, busbw %g GB/s) disagrees with size/time for %d ranks (%.3g, %.3g GB/s): "
                  "columns misread or not an all-gather",
                  k ? "in-place" : "out-of-place", k ? r->ip_algbw_gbps : r->oop_algbw_gbps,
                  k ? r->ip_busbw_gbps : r->oop_busbw_gbps, n, alg, bus);
      return -1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ the read options (table.h) */

static tps_ncclt_opts ncclt_opts;

void tps_table_set_ncclt_opts(const tps_ncclt_opts *o) {
  if (o) ncclt_opts = *o;
  else memset(&ncclt_opts, 0, sizeof ncclt_opts);
}

int tps_table_opt(const char *cmd, const char *name, const char *arg) {
  long v;
  if (strcmp(name, "run") == 0) {
    if (tps_opt_long(cmd, "run", arg, 1, 1000, "the run of an nccl-tests log holding several, in file order", &v)) return -1;
    ncclt_opts.run = (int)v;
  } else {
    if (tps_opt_long(cmd, "ranks", arg, 1, 65536, "the ranks of an nccl-tests table pasted without its Rank lines", &v))
      return -1;
    ncclt_opts.ranks = (int)v;
  }
  return 0;
}

const tps_ncclt_opts *tps_table_ncclt_opts(void) { return &ncclt_opts; }
