/* ncclt_ranks.c: pass 3 of the nccl-tests log reader (see ncclt.c) after the rows are read:
 * the rank count (Rank lines, --ranks, size / count, or the one count every row's printed
 * bandwidths fit), the bandwidth conventions, and the collective the rows point to when
 * they are not an all-gather. */
#include "config.h"
#include "src/io/ncclt.h"
#include "src/io/ncclt_int.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "src/base/util.h"

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
