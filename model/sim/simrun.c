/* simrun.c: one simulation run (see simrun.h). */
#include "model/sim/simrun.h"
#include "model/predict/uncertainty.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <gsl/gsl_sort_long.h>

/* Whether projection j is the first in mask with its name (names repeat for projections of
 * different widths in different layers). */
static int first_of_name(const tps_sim_model *m, size_t j, unsigned mask) {
  for (size_t i = 0; i < j; i++)
    if ((mask & (1u << i)) && strcmp(m->proj[i].name, m->proj[j].name) == 0) return 0;
  return 1;
}

int tps_sim_mask_from_names(const tps_sim_model *m, char *const *names, size_t n, unsigned *mask, size_t *bad) {
  const unsigned all = m->nproj >= 32 ? ~0u : (1u << m->nproj) - 1;
  *mask = 0;
  for (size_t i = 0; i < n; i++) {
    if (strcasecmp(names[i], "none") == 0) continue;
    if (strcasecmp(names[i], "all") == 0) { *mask = all; continue; }
    unsigned found = 0;
    for (size_t j = 0; j < m->nproj; j++)
      if (strcmp(m->proj[j].name, names[i]) == 0) found |= 1u << j;
    if (!found) { *bad = i; return TPS_EINVAL; }
    *mask |= found;
  }
  return TPS_OK;
}

const char *tps_sim_mask_names(const tps_sim_model *m, unsigned mask, const char *sep, char *buf, size_t bufsz) {
  size_t len = 0;
  buf[0] = 0;
  for (size_t j = 0; j < m->nproj && len < bufsz; j++) {
    if (!(mask & (1u << j)) || !first_of_name(m, j, mask)) continue;
    int w = snprintf(buf + len, bufsz - len, "%s%s", len ? sep : "", m->proj[j].name);
    if (w > 0) len += (size_t)w;
  }
  if (!buf[0]) snprintf(buf, bufsz, "none");
  return buf;
}

size_t tps_sim_threshold_proj(const tps_sim_model *m, unsigned mask) {
  for (size_t j = 0; j < m->nproj; j++)
    if ((mask & (1u << j)) && !m->proj[j].aux) return j;
  for (size_t j = 0; j < m->nproj; j++)
    if (mask & (1u << j)) return j;
  return m->nproj;
}

void tps_simrun_free(tps_simrun_out *out) {
  free(out->chunk);
  free(out->chunk_lo_us);
  free(out->prompt);
  free(out->prompt_lo_ms);
  memset(out, 0, sizeof *out);
}

/* The chunk sizes: the full chunk and every distinct last chunk, increasing. */
static int chunk_sizes(const tps_simrun_in *in, long *sizes, size_t *ns) {
  size_t n = 0;
  sizes[n++] = in->chunk_tokens;
  for (size_t i = 0; i < in->nprompt; i++) {
    long nch, last;
    if (tps_sim_chunking(in->prompt_tokens[i], in->chunk_tokens, &nch, &last) != TPS_OK) return TPS_EINVAL;
    int seen = 0;
    for (size_t k = 0; k < n; k++) seen |= sizes[k] == last;
    if (seen) continue;
    if (n == TPS_SIMRUN_MAXCHUNKS) return TPS_EINVAL;
    sizes[n++] = last;
  }
  gsl_sort_long(sizes, 1, n);
  *ns = n;
  return TPS_OK;
}

static size_t chunk_index(const tps_simrun_out *out, long tokens) {
  for (size_t k = 0; k < out->nchunks; k++)
    if (out->chunk[k].tokens == tokens) return k;
  return 0;
}

/* Intervals of the chunk and prompt savings from the priors' spread. */
static int saving_intervals(const tps_simrun_in *in, const long *sizes, long thr, int S, double level,
                            unsigned long seed, tps_simrun_out *out) {
  const size_t ns = out->nchunks;
  double *samp = malloc(ns * (size_t)S * sizeof *samp), *tmp = malloc((size_t)S * sizeof *tmp);
  int st = samp && tmp ? TPS_OK : TPS_ENOMEM;
  if (st == TPS_OK)
    st = tps_sim_sample_savings(in->model, in->kinds, in->nkinds, in->split_mask, thr, sizes, ns, in->costs, S, seed, samp);
  for (size_t k = 0; st == TPS_OK && k < ns; k++) {
    memcpy(tmp, samp + k * (size_t)S, (size_t)S * sizeof *tmp);
    st = tps_sim_interval(tmp, (size_t)S, level, &out->chunk_lo_us[k], &out->chunk_hi_us[k]);
  }
  for (size_t i = 0; st == TPS_OK && i < out->nprompt; i++) {
    const tps_sim_prompt *p = &out->prompt[i];
    const double *full = samp + out->full * (size_t)S, *last = samp + chunk_index(out, p->last_tokens) * (size_t)S;
    for (int q = 0; q < S; q++) tmp[q] = ((double)(p->nchunks - 1) * full[q] + last[q]) * 1e-3;
    st = tps_sim_interval(tmp, (size_t)S, level, &out->prompt_lo_ms[i], &out->prompt_hi_ms[i]);
  }
  free(samp);
  free(tmp);
  return st;
}

int tps_simrun(const tps_simrun_in *in, tps_simrun_out *out) {
  memset(out, 0, sizeof *out);
  if (!in || !in->model || !in->costs || in->chunk_tokens < 1 || in->nprompt < 1) return TPS_EINVAL;
  const double level = in->level > 0 && in->level < 1 ? in->level : TPS_INTERVAL_LEVEL;
  const int S = in->nsamples > 0 ? in->nsamples : TPS_SIMRUN_SAMPLES;
  const unsigned long seed = in->seed ? in->seed : TPS_SIMRUN_SEED;
  const long thr = in->threshold > 0 ? in->threshold : LONG_MAX;
  const tps_sim_model *m = in->model;
  long sizes[TPS_SIMRUN_MAXCHUNKS];
  int st = chunk_sizes(in, sizes, &out->nchunks);
  if (st != TPS_OK) return st;
  const size_t ns = out->nchunks, np = out->nprompt = in->nprompt;
  out->chunk = calloc(ns, sizeof *out->chunk);
  out->chunk_lo_us = malloc(2 * ns * sizeof *out->chunk_lo_us);
  out->prompt = calloc(np, sizeof *out->prompt);
  out->prompt_lo_ms = malloc(6 * np * sizeof *out->prompt_lo_ms);
  if (!out->chunk || !out->chunk_lo_us || !out->prompt || !out->prompt_lo_ms) return TPS_ENOMEM;
  out->chunk_hi_us = out->chunk_lo_us + ns;
  out->prompt_hi_ms = out->prompt_lo_ms + np;
  out->ttft_ms = out->prompt_hi_ms + np;
  out->ttft_change_pct = out->ttft_ms + np;
  out->ttft_lo_ms = out->ttft_change_pct + np;
  out->ttft_hi_ms = out->ttft_lo_ms + np;

  /* each predicted projection at the chunk */
  for (size_t j = 0; j < TPS_SIM_MAXPROJ; j++)
    for (int k = 0; k < 2; k++) out->proj_lo_us[j][k] = out->proj_hi_us[j][k] = NAN;
  for (size_t j = 0; j < m->nproj; j++) {
    const tps_pred *p = in->costs->p[j].pred;
    if (p && in->costs->p[j].rep_curve == NULL &&
        (st = tps_sim_pred_interval(p, in->chunk_tokens, level, S, seed, out->proj_lo_us[j], out->proj_hi_us[j])) != TPS_OK)
      return st;
  }
  /* chunks, then prompts */
  tps_sim_cost cost = {tps_sim_models_cost, (void *)in->costs};
  for (size_t k = 0; k < ns; k++)
    if (tps_sim_chunk_eval(m, in->kinds, in->nkinds, in->split_mask, thr, sizes[k], &cost, &out->chunk[k]) != TPS_OK)
      return TPS_ECOST;
  out->full = chunk_index(out, in->chunk_tokens);
  for (size_t i = 0; i < np; i++) {
    long nch, last;
    tps_sim_chunking(in->prompt_tokens[i], in->chunk_tokens, &nch, &last);
    st = tps_sim_prompt_eval(in->prompt_tokens[i], in->chunk_tokens, &out->chunk[out->full],
                             &out->chunk[chunk_index(out, last)], &out->prompt[i]);
    if (st != TPS_OK) return st;
  }
  if ((st = saving_intervals(in, sizes, thr, S, level, seed, out)) != TPS_OK) return st;
  for (size_t i = 0; i < np; i++) {
    out->ttft_ms[i] = out->ttft_change_pct[i] = out->ttft_lo_ms[i] = out->ttft_hi_ms[i] = NAN;
    if (!in->baseline_ttft_ms) continue;
    const double b = in->baseline_ttft_ms[i];
    tps_sim_ttft(b, out->prompt[i].saving_ms, &out->ttft_ms[i], &out->ttft_change_pct[i]);
    out->ttft_lo_ms[i] = b - out->prompt_hi_ms[i];
    out->ttft_hi_ms[i] = b - out->prompt_lo_ms[i];
  }
  return TPS_OK;
}
