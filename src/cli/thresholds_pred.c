/* thresholds_pred.c: predictions as the thresholds file (see thresholds_pred.h). */
#include "config.h"
#include "src/cli/thresholds_pred.h"
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "model/latency/allgather.h"
#include "model/core/path.h"

#include "model/numeric/robust.h"

static void cat(char *buf, size_t sz, const char *s) {
  size_t u = strlen(buf);
  if (u + 1 < sz) snprintf(buf + u, sz - u, "%.*s", (int)(sz - u - 1), s);
}

void tps_thrpred_init(tps_thr_file *f, const tps_predref *ref, int scaling, const char *interval_method) {
  tps_thr_init(f);
  char desc[4400];
  tps_predref_describe(ref, scaling, desc, sizeof desc);
  char *below = strstr(desc, " (sources below)"); /* the printed output's, not the file's */
  if (below) memmove(below, below + 16, strlen(below + 16) + 1);
  tps_thr_add_note(f, "predicted by tpsplit, not measured on these devices (gpus_visible 0; driver, runtime and clocks "
                      "not known): %.700s", desc);
  if (interval_method && *interval_method) tps_thr_add_note(f, "interval_tokens: 90%%, %.400s", interval_method);
}


static void union_names(char *dst, size_t sz, const char *add);

static const char *kind_method(int kind) {
  switch (kind) {
    case TPS_PROV_CONVERTED: return "measured on this GPU in the other harness, converted to this one (source: by what)";
    case TPS_PROV_FITTED: return "a model fitted to this GPU's own measurements";
    case TPS_PROV_SIBLING: return "measured on a sibling GPU (from_gpus: same architecture, or fabric for a gather), moved to this GPU by the regime's spec ratio";
    case TPS_PROV_TRANSFERRED: return "a model fitted on other GPUs (from_gpus), moved to this GPU by its datasheet";
    case TPS_PROV_SPEC: return "this GPU's datasheet x the path's priors (no measurement)";
    default: return "measured";
  }
}

/* The provenance of one resolved part; outside: the question leaves its measured range. */
static tps_thr_prov src_prov(const tps_part_source *s, int outside, double rsd) {
  tps_thr_prov p;
  if (tps_prov_is_own_measurement(s->prov) && s->part.meas) {
    char where[600];
    snprintf(where, sizeof where, "%.500s:%ld-%ld", s->file, s->line_lo, s->line_hi);
    p = tps_thr_prov_make(s->prov, where, s->src);
    p.points = (int)tps_mcurve_n(s->part.meas);
    if (outside && tps_part_source_model(s)[0]) {
      cat(p.method, sizeof p.method, "; outside the measured range: ");
      cat(p.method, sizeof p.method, tps_part_source_model(s));
    }
  } else {
    p = tps_thr_prov_make(s->prov, s->src, kind_method(s->prov));
    if (tps_prov_is_own_measurement(s->prov)) p.points = 0; /* a measured part has its curve; the schema wants points */
  }
  if (p.kind == TPS_PROV_TRANSFERRED || s->from[0]) union_names(p.from_gpus, sizeof p.from_gpus, s->from[0] ? s->from : "unknown");
  if (rsd > 0 && isfinite(rsd)) p.w90_log = TPS_Z90 * rsd;
  if (s->part.what == TPS_PART_GEMM) p.harness = s->harness;
  return p;
}

/* The gather of one backend of a parts context. */
static tps_thr_prov gather_prov(const tps_pred *p, const tps_partuse *u, int b, long tmax) {
  const tps_part_source *s = u->gather[b];
  if (!s) {
    tps_thr_prov q = tps_thr_prov_make(TPS_PROV_SPEC, u->gather_spec_src[0] ? u->gather_spec_src
                                                                            : "spec-only: the datasheet NCCL model (model/latency/allgather.h)",
                                       kind_method(TPS_PROV_SPEC));
    q.w90_log = TPS_Z90 * TPS_PRED_GATHER_RSD;
    return q;
  }
  double x0 = tps_pred_gathered_bytes(p, 1), x1 = tps_pred_gathered_bytes(p, tmax);
  return src_prov(s, u->gather_outside[b], tps_part_rsd(&s->part, x0, x1));
}

/* s cut to at most max bytes at a word boundary, "..." marking the cut. */
static void clip(char *dst, size_t sz, const char *s, size_t max) {
  if (max >= sz) max = sz - 1;
  size_t n = strlen(s);
  if (n <= max) { snprintf(dst, sz, "%s", s); return; }
  size_t cut = max > 3 ? max - 3 : 0;
  while (cut > 0 && s[cut] != ' ') cut--;
  snprintf(dst, sz, "%.*s...", (int)cut, s);
}

/* Append the comma-joined names of add to the list in dst (sz bytes), each once. */
static void union_names(char *dst, size_t sz, const char *add) {
  char buf[512], *save = NULL;
  snprintf(buf, sizeof buf, "%s", add);
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char pad[300], have[300];
    snprintf(pad, sizeof pad, ",%s,", t);
    snprintf(have, sizeof have, ",%s,", dst);
    if (strstr(have, pad)) continue;
    if (dst[0]) cat(dst, sz, ",");
    cat(dst, sz, t);
  }
}

/* The auto rule's two gathers as one record (as calibrate writes it). */
static tps_thr_prov gather_pair(const tps_thr_prov *c, const tps_thr_prov *n, double cap) {
  tps_thr_prov p = tps_thr_prov_make(c->kind > n->kind ? c->kind : n->kind, "", "");
  char cs[256], ns[256];
  clip(cs, sizeof cs, c->source, 240);
  clip(ns, sizeof ns, n->source, 240);
  snprintf(p.source, sizeof p.source, "custom: %.240s | nccl: %.240s", cs, ns);
  snprintf(p.method, sizeof p.method, "custom one-shot while the per-rank part <= %.0f bytes (%s), NCCL above (%s)", cap,
           tps_prov_kind_names[c->kind], tps_prov_kind_names[n->kind]);
  p.points = tps_prov_is_own_measurement(c->kind) && tps_prov_is_own_measurement(n->kind) ? c->points + n->points : -1;
  union_names(p.from_gpus, sizeof p.from_gpus, n->from_gpus);
  union_names(p.from_gpus, sizeof p.from_gpus, c->from_gpus);
  if ((p.kind == TPS_PROV_TRANSFERRED || p.kind == TPS_PROV_SIBLING) && !p.from_gpus[0]) snprintf(p.from_gpus, sizeof p.from_gpus, "unknown");
  p.w90_log = isfinite(c->w90_log) && isfinite(n->w90_log) ? fmax(c->w90_log, n->w90_log)
              : isfinite(c->w90_log) ? c->w90_log : n->w90_log;
  return p;
}

static void parts_prov(const tps_pred *p, const tps_partuse *u, long tmax, tps_thr_entry *e) {
  if (u->gemm) e->gemm = src_prov(u->gemm, u->gemm_outside, tps_part_rsd(&u->gemm->part, 1, (double)tmax));
  else e->gemm = tps_thr_prov_make(u->gemm_prov, u->gemm_src, kind_method(u->gemm_prov));
  int b[3], nb = tps_partuse_backends(u, p->backend, p->tp, tps_pred_custom_possible(p), b);
  if (nb == 2) {
    tps_thr_prov c = gather_prov(p, u, b[0], tmax), n = gather_prov(p, u, b[1], tmax);
    if (!tps_gather_is_capped(b[0])) { tps_thr_prov t = c; c = n; n = t; }
    e->gather = gather_pair(&c, &n, p->ag.custom_cap_bytes);
  } else if (nb == 1) {
    e->gather = gather_prov(p, u, b[0], tmax);
  } else {
    e->gather = tps_thr_prov_make(TPS_PROV_SPEC, "no gather", "one rank");
  }
}

/* Other scalings: the records of tps_predref_prov_json. */
static tps_thr_prov json_prov(const json_t *o, const tps_pred *p, const char *method) {
  const char *k = json_string_value(json_object_get(o, "provenance")), *s = json_string_value(json_object_get(o, "source"));
  int kind = TPS_PROV_SPEC;
  for (int i = 0; k && i < TPS_NPROV; i++)
    if (!strcmp(k, tps_prov_kind_names[i])) kind = i;
  if (kind == TPS_PROV_MEASURED) kind = TPS_PROV_FITTED; /* a fit, not its points */
  tps_thr_prov q = tps_thr_prov_make(kind, s ? s : "", method);
  if (kind == TPS_PROV_TRANSFERRED) snprintf(q.from_gpus, sizeof q.from_gpus, "%s", p->ref_gpu.name[0] ? p->ref_gpu.name : "unknown");
  return q;
}

static void other_prov(const tps_predref *ref, const tps_pred *p, tps_thr_entry *e) {
  json_t *j = tps_predref_prov_json(ref, p);
  char method[512];
  snprintf(method, sizeof method, "tpsplit's %s scaling (doc/predict.md)", tps_scaling_names[p->scaling]);
  e->gemm = json_prov(json_object_get(j, "gemm"), p, method);
  const char *key;
  json_t *v;
  e->gather = tps_thr_prov_make(TPS_PROV_SPEC, "no gather", "one rank");
  json_object_foreach(json_object_get(j, "gather"), key, v) e->gather = json_prov(v, p, method);
  json_decref(j);
}

int tps_thrpred_add(tps_thr_file *f, const tps_predref *ref, const tps_pred *p, const tps_partuse *use,
                   const tps_thrpred_answer *a, tps_err *e) {
  char key[256];
  if (!tps_thr_gpu_key(&p->gpu, key, sizeof key) && !tps_thr_find_device(f, key))
    tps_thr_add_note(f, "%s: no cuda_names or engine_key in the GPU table: keyed by its table name %s, which engines may "
                     "not look up", p->gpu.name, key);
  if (p->tp < 2) {
    tps_thr_add_note(f, "%s TP%d %s: not written (the schema keys TP from 2; one rank has no gather to split for)", p->gpu.name,
                     p->tp, p->path->name);
    return 1;
  }
  tps_thr_device *d = (tps_thr_device *)tps_thr_find_device(f, key);
  if (!d && !(d = tps_thr_add_spec_device(f, &p->gpu))) return tps_err_set(e, NULL, 0, "out of memory");
  if (tps_thr_find(d, p->shape.k, p->shape.n, (int)p->path->id, p->tp, p->backend)) {
    tps_thr_add_note(f, "%s %ldx%ld %s TP%d %s: answered twice, the first kept", p->gpu.name, p->shape.k, p->shape.n, p->path->name,
                     p->tp, tps_gather_name(p->backend));
    return 1;
  }
  tps_thr_entry *x = tps_thr_add_entry(d);
  if (!x) return tps_err_set(e, NULL, 0, "out of memory");
  x->k = p->shape.k;
  x->n = p->shape.n;
  x->path = (int)p->path->id;
  x->tp = p->tp;
  x->backend = p->backend;
  x->out_bytes_per_token = p->out_bytes_per_token > 0 ? p->out_bytes_per_token : p->shape.n * p->shape.out_bytes;
  double be = a->breakeven > 0 ? (double)a->breakeven : 0;
  double lo = isfinite(a->lo) && a->lo > 0 ? a->lo : 0, hi = isfinite(a->hi) && a->hi > 0 ? a->hi : 0;
  if (be > 0 && ((lo > 0 && lo > be) || (hi > 0 && hi < be))) {
    tps_thr_add_note(f, "%s %ldx%ld %s TP%d %s: the interval's quantiles [%.0f, %.0f] do not hold the break-even %.0f: widened to it",
                     p->gpu.name, x->k, x->n, p->path->name, p->tp, tps_gather_name(p->backend), lo, hi, be);
    if (lo > be) lo = be;
    if (hi > 0 && hi < be) hi = be;
  }
  tps_thr_entry_answer(x, a->threshold, be, lo, hi, a->tmax);
  char why[256];
  if (a->bands && tps_thr_entry_bands(x, a->bands, why, sizeof why))
    tps_thr_add_note(f, "%s %ldx%ld %s TP%d %s: no win_bands_tokens: %s", p->gpu.name, x->k, x->n, p->path->name, p->tp,
                     tps_gather_name(p->backend), why);
  if (use) parts_prov(p, use, a->tmax, x);
  else other_prov(ref, p, x);
  return 0;
}
