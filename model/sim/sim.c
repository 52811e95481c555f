/* sim.c: prefill simulation of the input-projection stage (see sim.h for the maths). */
#include "model/sim/sim.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

unsigned tps_sim_default_mask(const tps_sim_model *m) {
  unsigned mask = 0;
  for (size_t j = 0; j < m->nproj; j++)
    if (m->proj[j].split) mask |= 1u << j;
  return mask;
}

static unsigned layer_mask(const tps_sim_model *m, int layer) {
  unsigned mask = 0;
  for (size_t j = 0; j < m->nproj; j++)
    if (m->proj[j].in_layer[layer]) mask |= 1u << j;
  return mask;
}

/* Append "a-b" or "a" to a comma list. */
static void append_range(char *buf, size_t sz, int a, int b) {
  size_t len = strlen(buf);
  if (len >= sz - 1) return;
  if (a == b) snprintf(buf + len, sz - len, "%s%d", len ? "," : "", a);
  else snprintf(buf + len, sz - len, "%s%d-%d", len ? "," : "", a, b);
}

static void kind_label(const tps_sim_model *m, unsigned mask, char *buf, size_t sz) {
  buf[0] = '\0';
  for (size_t j = 0; j < m->nproj; j++) {
    if (!(mask & (1u << j)) || !m->proj[j].aux) continue;
    size_t len = strlen(buf);
    snprintf(buf + len, sz - len, "%s%s/%ld", len ? "+" : "", m->proj[j].name, m->proj[j].n);
  }
  if (!buf[0]) snprintf(buf, sz, "%s", "plain");
}

int tps_sim_kinds(const tps_sim_model *m, tps_sim_kind *kinds, size_t maxk, size_t *nk) {
  *nk = 0;
  if (!m || m->layers < 1 || m->layers > TPS_SIM_MAXLAYERS || m->nproj > TPS_SIM_MAXPROJ)
    return TPS_EINVAL;
  for (int l = 0; l < m->layers; l++) {
    unsigned mask = layer_mask(m, l);
    size_t k;
    for (k = 0; k < *nk; k++)
      if (kinds[k].mask == mask) break;
    if (k == *nk) {
      if (*nk == maxk) return TPS_EINVAL;
      memset(&kinds[k], 0, sizeof kinds[k]);
      kinds[k].mask = mask;
      kinds[k].first_layer = l;
      kind_label(m, mask, kinds[k].label, sizeof kinds[k].label);
      (*nk)++;
    }
    kinds[k].count++;
  }
  /* layer lists, as ranges */
  for (size_t k = 0; k < *nk; k++) {
    int start = -1;
    for (int l = 0; l <= m->layers; l++) {
      int in = l < m->layers && layer_mask(m, l) == kinds[k].mask;
      if (in && start < 0) start = l;
      if (!in && start >= 0) {
        append_range(kinds[k].layer_list, sizeof kinds[k].layer_list, start, l - 1);
        start = -1;
      }
    }
  }
  return TPS_OK;
}

double tps_sim_stage_us(const tps_sim_model *m, unsigned mask, const double *t_us, long tokens) {
  double main_us = 0, aux_us = 0;
  for (size_t j = 0; j < m->nproj; j++) {
    if (!(mask & (1u << j))) continue;
    if (m->proj[j].aux) aux_us += t_us[j];
    else main_us += t_us[j];
  }
  if (tokens <= m->side_max_tokens && aux_us > 0)
    return main_us > aux_us ? main_us : aux_us;
  return main_us + aux_us;
}

int tps_sim_chunk_eval(const tps_sim_model *m, const tps_sim_kind *kinds, size_t nk,
                       unsigned split_mask, long threshold, long tokens, const tps_sim_cost *cost,
                       tps_sim_chunk *out) {
  if (!m || !kinds || !cost || !cost->fn || !out || tokens < 1 || nk > TPS_SIM_MAXKINDS)
    return TPS_EINVAL;
  memset(out, 0, sizeof *out);
  out->tokens = tokens;
  out->split_on = tokens >= threshold && split_mask != 0;
  for (size_t j = 0; j < m->nproj; j++) {
    if (cost->fn(cost->ctx, j, tokens, &out->proj_rep_us[j], &out->proj_split_us[j]) != 0 ||
        !isfinite(out->proj_rep_us[j]) || !isfinite(out->proj_split_us[j]) ||
        out->proj_rep_us[j] < 0 || out->proj_split_us[j] < 0)
      return TPS_ECOST;
  }
  double t_split[TPS_SIM_MAXPROJ];
  for (size_t j = 0; j < m->nproj; j++)
    t_split[j] = out->split_on && (split_mask & (1u << j)) ? out->proj_split_us[j] : out->proj_rep_us[j];
  for (size_t k = 0; k < nk; k++) {
    out->kind_main_us[k] = tps_sim_stage_us(m, kinds[k].mask, out->proj_rep_us, tokens);
    out->kind_split_us[k] = tps_sim_stage_us(m, kinds[k].mask, t_split, tokens);
    out->main_us += kinds[k].count * out->kind_main_us[k];
    out->split_us += kinds[k].count * out->kind_split_us[k];
  }
  out->saving_us = out->main_us - out->split_us;
  return TPS_OK;
}

int tps_sim_chunking(long prompt_tokens, long chunk_tokens, long *nchunks, long *last_tokens) {
  if (prompt_tokens < 1 || chunk_tokens < 1) return TPS_EINVAL;
  long n = (prompt_tokens + chunk_tokens - 1) / chunk_tokens;
  *nchunks = n;
  *last_tokens = prompt_tokens - (n - 1) * chunk_tokens;
  return TPS_OK;
}

int tps_sim_prompt_eval(long prompt_tokens, long chunk_tokens, const tps_sim_chunk *full,
                        const tps_sim_chunk *last, tps_sim_prompt *out) {
  long n, last_tokens;
  if (!full || !last || !out || tps_sim_chunking(prompt_tokens, chunk_tokens, &n, &last_tokens))
    return TPS_EINVAL;
  if (last->tokens != last_tokens || (n > 1 && full->tokens != chunk_tokens)) return TPS_EINVAL;
  memset(out, 0, sizeof *out);
  out->prompt_tokens = prompt_tokens;
  out->nchunks = n;
  out->last_tokens = last_tokens;
  out->last_split_on = last->split_on;
  out->full_split_on = n > 1 ? full->split_on : 0;
  double nfull = (double)(n - 1);
  out->main_ms = (nfull * full->main_us + last->main_us) * 1e-3;
  out->split_ms = (nfull * full->split_us + last->split_us) * 1e-3;
  out->saving_ms = (nfull * full->saving_us + last->saving_us) * 1e-3;
  return TPS_OK;
}

int tps_sim_ttft(double baseline_ms, double saving_ms, double *predicted_ms, double *change_pct) {
  if (!(baseline_ms > 0) || !isfinite(saving_ms)) return TPS_EINVAL;
  *predicted_ms = baseline_ms - saving_ms;
  *change_pct = 100.0 * (*predicted_ms - baseline_ms) / baseline_ms;
  return TPS_OK;
}

int tps_sim_models_cost(void *ctx, size_t proj, long tokens, double *replicated_us, double *split_us) {
  const tps_sim_models *ms = ctx;
  if (!ms || proj >= ms->nproj || tokens < 1) return TPS_EINVAL;
  const tps_sim_proj_model *p = &ms->p[proj];
  if (p->rep_curve && p->split_curve) {
    tps_gemm_model g = {.kind = TPS_GEMM_CURVE};
    g.curve = p->rep_curve;
    *replicated_us = tps_gemm_time_us(&g, NULL, tokens);
    g.curve = p->split_curve;
    *split_us = tps_gemm_time_us(&g, NULL, tokens);
  } else if (p->pred) {
    *replicated_us = tps_pred_replicated_us(p->pred, tokens);
    *split_us = tps_pred_split_us(p->pred, tokens, NULL);
  } else {
    if (!p->ag || ms->tp < 1) return TPS_EINVAL;
    long rows = (tokens + ms->tp - 1) / ms->tp;
    double bytes = (double)tokens * (double)p->shape.n * p->shape.out_bytes;
    *replicated_us = tps_gemm_time_us(&p->gemm, &p->shape, tokens);
    *split_us = tps_gemm_time_us(&p->gemm, &p->shape, rows) +
                tps_ag_time_us(p->ag, bytes, ms->tp, p->gather_backend, NULL, NULL);
  }
  return isfinite(*replicated_us) && isfinite(*split_us) ? TPS_OK : TPS_ECOST;
}

int tps_sim_pred_interval(const tps_pred *p, long tokens, double level, int nsamples, unsigned long seed,
                          double lo[2], double hi[2]) {
  if (!p || tokens < 1 || !(level > 0 && level < 1) || nsamples < 10) return TPS_EINVAL;
  double *v = malloc(2 * (size_t)nsamples * sizeof *v);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  if (!v || !r) { free(v); if (r) gsl_rng_free(r); return TPS_EINVAL; }
  gsl_rng_set(r, seed);
  tps_pred q = *p; /* knobs change the copy only; the copy shares (never frees) p's curves */
  double *rep = v, *split = v + nsamples;
  int rc = TPS_OK;
  for (int i = 0; i < nsamples && rc == TPS_OK; i++) {
    double zc = gsl_ran_ugaussian(r), zs = gsl_ran_ugaussian(r), zg = gsl_ran_ugaussian(r);
    double fg = exp(p->gather_rsd * zg);
    if (tps_pred_set_knob(&q, TPS_PK_GEMM_TFLOPS, exp(p->compute_rsd * zc)) ||
        tps_pred_set_knob(&q, TPS_PK_GEMM_BW, exp(p->stream_rsd * zs)) ||
        tps_pred_set_knob(&q, TPS_PK_AG_NCCL_BW, fg) || tps_pred_set_knob(&q, TPS_PK_AG_CUSTOM_BW, fg))
      rc = TPS_EINVAL;
    rep[i] = tps_pred_replicated_us(&q, tokens);
    split[i] = tps_pred_split_us(&q, tokens, NULL);
    if (!isfinite(rep[i]) || !isfinite(split[i])) rc = TPS_ECOST;
  }
  if (rc == TPS_OK) {
    tps_sim_interval(rep, (size_t)nsamples, level, &lo[0], &hi[0]);
    tps_sim_interval(split, (size_t)nsamples, level, &lo[1], &hi[1]);
  }
  gsl_rng_free(r);
  free(v);
  return rc;
}

int tps_sim_sample_savings(const tps_sim_model *m, const tps_sim_kind *kinds, size_t nk, unsigned split_mask,
                           long threshold, const long *tokens, size_t ntok, const tps_sim_models *ms,
                           int nsamples, unsigned long seed, double *saving_us) {
  if (!m || !ms || !tokens || !saving_us || nsamples < 1 || ms->nproj != m->nproj) return TPS_EINVAL;
  tps_sim_models loc = *ms;
  tps_pred *q = malloc(TPS_SIM_MAXPROJ * sizeof *q);
  tps_sim_chunk *c = malloc(sizeof *c);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  int rc = TPS_OK;
  if (!q || !c || !r) { rc = TPS_EINVAL; goto out; }
  gsl_rng_set(r, seed);
  /* paths of the model, for shared draws */
  const tps_path *paths[TPS_SIM_MAXPROJ];
  size_t np = 0, pidx[TPS_SIM_MAXPROJ];
  for (size_t j = 0; j < m->nproj; j++) {
    size_t k;
    for (k = 0; k < np; k++) if (paths[k] == m->proj[j].path) break;
    if (k == np) paths[np++] = m->proj[j].path;
    pidx[j] = k;
  }
  tps_sim_cost cost = {tps_sim_models_cost, &loc};
  for (int s = 0; s < nsamples && rc == TPS_OK; s++) {
    double zc[TPS_SIM_MAXPROJ], zs[TPS_SIM_MAXPROJ], zg = gsl_ran_ugaussian(r);
    for (size_t k = 0; k < np; k++) { zc[k] = gsl_ran_ugaussian(r); zs[k] = gsl_ran_ugaussian(r); }
    for (size_t j = 0; j < m->nproj; j++) {
      const tps_sim_proj_model *pm = &ms->p[j];
      if ((pm->rep_curve && pm->split_curve) || !pm->pred) continue;
      const tps_pred *p = pm->pred;
      double fg = exp(p->gather_rsd * zg);
      q[j] = *p; /* shares (never frees) p's curves */
      if (tps_pred_set_knob(&q[j], TPS_PK_GEMM_TFLOPS, exp(p->compute_rsd * zc[pidx[j]])) ||
          tps_pred_set_knob(&q[j], TPS_PK_GEMM_BW, exp(p->stream_rsd * zs[pidx[j]])) ||
          tps_pred_set_knob(&q[j], TPS_PK_AG_NCCL_BW, fg) || tps_pred_set_knob(&q[j], TPS_PK_AG_CUSTOM_BW, fg)) {
        rc = TPS_EINVAL;
        break;
      }
      loc.p[j].pred = &q[j];
    }
    for (size_t k = 0; k < ntok && rc == TPS_OK; k++) {
      rc = tps_sim_chunk_eval(m, kinds, nk, split_mask, threshold, tokens[k], &cost, c);
      saving_us[k * (size_t)nsamples + (size_t)s] = c->saving_us;
    }
  }
out:
  if (r) gsl_rng_free(r);
  free(c);
  free(q);
  return rc;
}

int tps_sim_interval(double *v, size_t n, double level, double *lo, double *hi) {
  if (!v || n < 1 || !(level > 0 && level < 1)) return TPS_EINVAL;
  double a = (1.0 - level) / 2.0;
  gsl_sort(v, 1, n);
  *lo = gsl_stats_quantile_from_sorted_data(v, 1, n, a);
  *hi = gsl_stats_quantile_from_sorted_data(v, 1, n, 1.0 - a);
  return TPS_OK;
}
