/* evidence_use.c: the grid's parts prepared in threads, and where each part came from
 * (printed and JSON); see evidence.h.  The contexts themselves: evidence_resolve.c. */
#include "config.h"
#include "src/evidence/ev_int.h"
#include "src/base/parallel.h"
#include "model/core/harness.h"
#include "model/predict/crossover.h"

/* Tables of the GEMM parts made on worker threads (tps_parallel_for; each its own part, once:
 * model/predict/parts.h tps_partcache_tabulate). */
typedef struct {
  tps_partset *ps;
  pthread_mutex_t lock;
  int bad;
} tab_job;

static void tab_one(void *ctx, int i) {
  tab_job *j = ctx;
  tps_part_source *s = j->ps->res[i];
  if (!s || s->part.what != TPS_PART_GEMM || s->part.tab) return;
  if (tps_partcache_tabulate(j->ps->cache, &s->part) != TPS_OK || !s->part.tab) {
    pthread_mutex_lock(&j->lock);
    j->bad = 1;
    pthread_mutex_unlock(&j->lock);
  }
}

int tps_partset_prepare(tps_partset *ps, const tps_gpu *const *gpus, size_t ngpu, const int *tps, size_t ntp,
                        const tps_path *const *paths, size_t npath, const tps_pred_opts *po, tps_err *e) {
  int rc = 0;
  tps_partcache_tables(ps->cache, 0);
  for (size_t i = 0; i < ngpu && !rc; i++)
    for (size_t j = 0; j < ntp && !rc; j++)
      for (size_t k = 0; k < npath && !rc; k++) {
        tps_pred p;
        int st = tps_partset_context(ps, gpus[i], tps[j], paths[k], po, NULL, 0, &p, NULL, e);
        tps_pred_free(&p);
        if (st == TPS_EBADDATA) rc = -1;
      }
  tab_job job = {ps, PTHREAD_MUTEX_INITIALIZER, 0};
  tps_parallel_for((int)ps->nres, tps_threads_default(), tab_one, &job);
  if (!rc && job.bad) rc = tps_err_set(e, NULL, 0, "a GEMM part has no usable times on 1..%ld rows", ps->o.tmax);
  tps_partcache_tables(ps->cache, 1);
  return rc;
}

int tps_partuse_backends(const tps_partuse *u, int backend, int tp, int custom_possible, int *b) {
  int have[TPS_NGATHERS];
  for (int i = 0; i < TPS_NGATHERS; i++) have[i] = u->gather[i] != NULL;
  return tps_pred_backends_used(have, backend, tp, custom_possible, b);
}

static void short_of(int prov, int outside, int id, int model_ok, char *buf, size_t sz) {
  const char *k = prov >= 0 && prov < TPS_PROV_N ? tps_prov_names[prov] : "?";
  const int curve = tps_prov_is_own_measurement(prov) || prov == TPS_PROV_SIBLING; /* a measured curve, which T may leave */
  if (curve && outside) snprintf(buf, sz, "%s+model%s", k, model_ok ? "" : "?");
  else snprintf(buf, sz, "%s", k);
  if (id > 0) catf(buf, sz, "[%d]", id);
}

void tps_partuse_gemm_short(const tps_partuse *u, char *buf, size_t sz) {
  if (!u->gemm) { snprintf(buf, sz, "-"); return; }
  short_of(u->gemm->prov, u->gemm_outside, u->gemm->id, u->gemm->part.model.kind != TPS_PM_NONE, buf, sz);
}

void tps_partuse_gather_short(const tps_partuse *u, int backend, int tp, char *buf, size_t sz) {
  int b[3], n = tps_partuse_backends(u, backend, tp, 1, b);
  buf[0] = 0;
  if (!n) { snprintf(buf, sz, "none"); return; }
  for (int i = 0; i < n; i++) {
    char one[64];
    const tps_part_source *s = u->gather[b[i]];
    if (s) short_of(s->prov, u->gather_outside[b[i]], s->id, s->part.model.kind != TPS_PM_NONE || tps_gather_is_rule(b[i]), one,
                    sizeof one);
    else snprintf(one, sizeof one, "spec-only");
    catf(buf, sz, "%s%s", i ? "," : "", one);
  }
}

static json_t *src_json(const tps_part_source *s, int outside) {
  json_t *o = json_object();
  json_object_set_new(o, "provenance", json_string(tps_prov_names[s->prov]));
  json_object_set_new(o, "source", json_string(s->src));
  if (s->part.what == TPS_PART_GEMM) json_object_set_new(o, "harness", json_string(tps_harness_name(s->harness)));
  if (s->file[0] && tps_prov_is_own_measurement(s->prov)) {
    json_object_set_new(o, "file", json_string(s->file));
    char l[64];
    snprintf(l, sizeof l, "%ld-%ld", s->line_lo, s->line_hi);
    json_object_set_new(o, "lines", json_string(l));
    tps_json_set_num(o, "measured_from", s->xlo);
    tps_json_set_num(o, "measured_to", s->xhi);
  } else if (s->file[0]) {
    json_object_set_new(o, "file", json_string(s->file));
  }
  if (s->from[0]) json_object_set_new(o, "transferred_from", json_string(s->from));
  json_object_set_new(o, "outside_measured", json_boolean(outside));
  json_object_set_new(o, "model_outside", tps_part_source_model(s)[0] ? json_string(tps_part_source_model(s)) : json_null());
  json_object_set_new(o, "user_file", json_boolean(s->user));
  if (s->id > 0) json_object_set_new(o, "id", json_integer(s->id));
  return o;
}

json_t *tps_partuse_json(const tps_partuse *u, int backend, int tp, int custom_possible) {
  json_t *o = json_object(), *g = json_object();
  if (u->gemm) json_object_set_new(o, "gemm", src_json(u->gemm, u->gemm_outside));
  int b[3], n = tps_partuse_backends(u, backend, tp, custom_possible, b);
  for (int i = 0; i < n; i++) {
    const tps_part_source *s = u->gather[b[i]];
    json_t *x;
    if (s) x = src_json(s, u->gather_outside[b[i]]);
    else {
      x = json_object();
      json_object_set_new(x, "provenance", json_string(tps_prov_names[TPS_PROV_SPEC]));
      json_object_set_new(x, "source", json_string(u->gather_spec_src));
      json_object_set_new(x, "outside_measured", json_true());
    }
    json_object_set_new(g, tps_gather_name(b[i]), x);
  }
  json_object_set_new(o, "gather", g);
  return o;
}

void tps_partset_mark(tps_partset *ps, const tps_partuse *u, int backend, int tp, int custom_possible) {
  int b[3], n = tps_partuse_backends(u, backend, tp, custom_possible, b);
  const tps_part_source *want[4] = {u->gemm, NULL, NULL, NULL};
  for (int i = 0; i < n; i++) want[1 + i] = u->gather[b[i]];
  pthread_mutex_lock(&ps->lock);
  for (int w = 0; w < 1 + n; w++)
    for (size_t i = 0; i < ps->nres && want[w]; i++)
      if (ps->res[i] == want[w] && !ps->used[i]) {
        ps->used[i] = 1;
        ps->res[i]->id = ++ps->next_id;
      }
  pthread_mutex_unlock(&ps->lock);
}

/* the marked parts in id order */
static size_t marked(const tps_partset *ps, const tps_part_source **out, size_t max) {
  size_t n = 0;
  for (int id = 1; id <= ps->next_id; id++)
    for (size_t i = 0; i < ps->nres; i++)
      if (ps->used[i] && ps->res[i] && ps->res[i]->id == id && n < max) out[n++] = ps->res[i];
  return n;
}

void tps_partset_print_sources(const tps_partset *ps, const char *prefix) {
  const tps_part_source *v[512];
  size_t n = marked(ps, v, 512);
  for (size_t i = 0; i < n; i++) {
    printf("%s[%d] %s: %s\n", prefix, v[i]->id, v[i]->what, v[i]->src);
    if (tps_part_source_model(v[i])[0]) printf("%s    outside the measured range: %s\n", prefix, tps_part_source_model(v[i]));
  }
}

json_t *tps_partset_sources_json(const tps_partset *ps) {
  const tps_part_source *v[512];
  size_t n = marked(ps, v, 512);
  json_t *a = json_array();
  for (size_t i = 0; i < n; i++) {
    json_t *o = src_json(v[i], 0);
    json_object_del(o, "outside_measured");
    json_object_set_new(o, "part", json_string(v[i]->what));
    json_array_append_new(a, o);
  }
  return a;
}

/* ------------------------------------------------------------------ contexts of the reference (evidence.h) */

json_t *tps_predref_prov_json(const tps_predref *r, const tps_pred *p) {
  json_t *o = json_object(), *g = json_object(), *a = json_object();
  int same = strcmp(p->ref_gpu.name, p->gpu.name) == 0;
  const char *gk, *ak;
  char gs[600], as[600];
  switch (p->scaling) {
  case TPS_SCALING_MODEL:
    gk = same && p->fit && p->fit->gemm.path == p->path ? tps_prov_names[TPS_PROV_FITTED] : tps_prov_names[TPS_PROV_TRANSFERRED];
    ak = same && p->fit && (p->fit->ag.ranks == p->tp || p->fit->tp == p->tp) ? tps_prov_names[TPS_PROV_FITTED]
                                                                             : tps_prov_names[TPS_PROV_TRANSFERRED];
    snprintf(gs, sizeof gs, "the GEMM of the %.400s (%s), by peak x efficiency and HBM bandwidth", r->fit_source, p->ref_gpu.name);
    snprintf(as, sizeof as, "the gather of the %.400s (%s), by link bandwidth and NCCL's ring steps", r->fit_source, p->ref_gpu.name);
    break;
  case TPS_SCALING_PESSIMISTIC:
    gk = ak = tps_prov_names[TPS_PROV_TRANSFERRED];
    snprintf(gs, sizeof gs, "the replicated column of %.400s divided by the seed pull request's speedups (2x/3.7x/6.7x)", r->fit_source);
    snprintf(as, sizeof as, "split - replicated(ceil(T/TP)) of %.400s, unchanged", r->fit_source);
    break;
  default:
    gk = ak = tps_prov_names[TPS_PROV_SPEC];
    snprintf(gs, sizeof gs, "%s's datasheet x the %s priors", p->gpu.name, p->path->name);
    snprintf(as, sizeof as, "%s's datasheet NCCL and custom gather models", p->gpu.name);
  }
  json_object_set_new(g, "provenance", json_string(gk));
  json_object_set_new(g, "source", json_string(gs));
  json_object_set_new(a, "provenance", json_string(ak));
  json_object_set_new(a, "source", json_string(as));
  json_object_set_new(o, "gemm", g);
  json_t *ga = json_object();
  json_object_set_new(ga, p->tp > 1 ? tps_gather_name(p->backend) : "none", a);
  json_object_set_new(o, "gather", ga);
  return o;
}

void tps_predref_describe(const tps_predref *r, int scaling, char *buf, size_t bufsz) {
  switch (scaling) {
  case TPS_SCALING_MODEL:
    snprintf(buf, bufsz, "scaling model: %s (%s), transferred by peak x efficiency, HBM and link bandwidth", r->fit_source,
             r->fit.gpu);
    break;
  case TPS_SCALING_PESSIMISTIC:
    snprintf(buf, bufsz, "scaling pessimistic: the seed vLLM pull request's rule on %s (GEMM 2x/3.7x/6.7x faster at "
             "<=256/512/>=1024 rows, gather as measured)", r->fit_source);
    break;
  case TPS_SCALING_PARTS:
    snprintf(buf, bufsz, "scaling parts: each part from a measurement where one exists, else the cross-GPU model "
             "transferred to the target, else spec-only (sources below)");
    break;
  default:
    snprintf(buf, bufsz, "scaling spec: datasheet x path priors (no measurement)");
  }
}
