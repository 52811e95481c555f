/* evidence_use.c: the parts of one context (tps_partset_context), the grid prepared in
 * threads, and where each part came from (printed and JSON); see evidence.h. */
#include "config.h"
#include "src/evidence/ev_int.h"
#include "src/base/parallel.h"
#include "model/core/harness.h"
#include "model/predict/crossover.h"

/* ------------------------------------------------------------------ contexts */
/* Tables made once, by the first context that needs one, the others waiting for it (state 0
 * not made, 1 being made, 2 made; ps->lock guards the states).  fill_claim, with the lock held:
 * 1 when the caller must make it (state 1, lock released: make it, then fill_done), else 0
 * once it is made (lock still held). */
static int fill_claim(tps_partset *ps, int *state) {
  if (*state == 0) {
    *state = 1;
    pthread_mutex_unlock(&ps->lock);
    return 1;
  }
  while (*state == 1) pthread_cond_wait(&ps->tab_cond, &ps->lock);
  return 0;
}

/* fill_done: the table is made (takes the lock, wakes the waiters, keeps the lock) */
static void fill_done(tps_partset *ps, int *state) {
  pthread_mutex_lock(&ps->lock);
  *state = 2;
  pthread_cond_broadcast(&ps->tab_cond);
}

/* A context's gather table (crossover.h), shared by the contexts of the same gathers (the
 * paths of one GPU and TP, and its moved copies' own): made once, by the first context that
 * needs it (the others wait), after tps_partset_prepare; NULL before, or out of memory. */
struct ev_gtab {
  struct tps_gathertab *t;
  int state; /* fill_claim: 0 not made, 1 being made, 2 made */
};

void ev_gather_tables_free(tps_partset *ps) {
  for (size_t i = 0; i < ps->ngtab; i++) {
    tps_gathertab_free(ps->gtab[i]->t);
    free(ps->gtab[i]);
  }
  free(ps->gtab);
  ps->gtab = NULL;
  ps->ngtab = ps->capgtab = 0;
}

static const struct tps_gathertab *ev_gather_table(tps_partset *ps, const tps_pred *p) {
  if (!ps->tab_late || ps->defer_tab) return NULL;
  pthread_mutex_lock(&ps->lock);
  struct ev_gtab *g = NULL;
  for (size_t i = 0; i < ps->ngtab && !g; i++)
    if (tps_gathertab_fits(ps->gtab[i]->t, p, ps->o.tmax)) g = ps->gtab[i];
  if (!g) {
    if (ps->ngtab == ps->capgtab) {
      size_t nc = ps->capgtab ? 2 * ps->capgtab : 64;
      struct ev_gtab **a = realloc(ps->gtab, nc * sizeof *a);
      if (!a) { pthread_mutex_unlock(&ps->lock); return NULL; }
      ps->gtab = a;
      ps->capgtab = nc;
    }
    g = calloc(1, sizeof *g);
    if (g && !(g->t = tps_gathertab_new(p, ps->o.tmax))) { free(g); g = NULL; }
    if (!g) { pthread_mutex_unlock(&ps->lock); return NULL; }
    ps->gtab[ps->ngtab++] = g;
  }
  if (fill_claim(ps, &g->state)) {
    tps_gathertab_fill(g->t, p);
    fill_done(ps, &g->state);
  }
  pthread_mutex_unlock(&ps->lock);
  return g->t;
}

/* The launch structure for a GEMM part's table (call with ps->lock held): its path's, built
 * on first use; NULL where the part's model is not a gemm.h one (or out of memory). */
static const struct tps_gemmgrid *ev_launches(tps_partset *ps, const tps_part *p) {
  if (p->model.kind != TPS_PM_GEMM || p->model.gm.kind != TPS_GEMM_PARAMETRIC || !p->model.gm.path) return NULL;
  const tps_path *path = p->model.gm.path;
  for (int i = 0; i < ps->nlaunch; i++)
    if (ps->lpath[i] == path) return ps->lgrid[i];
  if (ps->nlaunch >= (int)(sizeof ps->lgrid / sizeof *ps->lgrid)) return NULL;
  struct tps_gemmgrid *c = tps_gemmgrid_launches(path, ps->o.tmax);
  if (c) {
    ps->lpath[ps->nlaunch] = path;
    ps->lgrid[ps->nlaunch++] = c;
  }
  return c;
}

/* A GEMM part first resolved after tps_partset_prepare (the moved GPUs of gpu_doubt.c: one
 * part per GPU, fact, factor and path, asked by every TP): its table made once, by the first
 * thread that asks (the others wait for it), instead of a fill of 1..tmax rows by every
 * context (tps_gemmgrid_load; the same values: tps_part_tabulate stores tps_part_fill's). */
static void late_table(tps_partset *ps, tps_part_source *g) {
  pthread_mutex_lock(&ps->lock);
  if (!ps->tab_late || ps->defer_tab || g->part.what != TPS_PART_GEMM || g->tab_state == 2) { pthread_mutex_unlock(&ps->lock); return; }
  if (g->tab_state == 0 && g->part.tab) g->tab_state = 2; /* tps_partset_prepare's */
  const struct tps_gemmgrid *lg = g->tab_state == 0 ? ev_launches(ps, &g->part) : NULL;
  if (fill_claim(ps, &g->tab_state)) {
    tps_part_tabulate_on(&g->part, ps->o.tmax, lg); /* on failure the contexts fill as before */
    fill_done(ps, &g->tab_state);
  }
  pthread_mutex_unlock(&ps->lock);
}

static void use_ranges(const tps_pred *p, long tmax, int b, double *xlo, double *xhi) {
  /* the T served by backend b under the context's rule */
  long tc = p->tp * (long)floor(p->ag.custom_cap_bytes / p->out_bytes_per_token); /* last T of the custom gather */
  long a = 1, z = tmax;
  if (tps_gather_is_rule(p->backend) && !tps_gather_is_rule(b) && p->ag.custom_cap_bytes > 0 && p->tp <= p->opts.node_gpus) {
    if (tps_gather_is_capped(b)) z = tc < tmax ? tc : tmax;
    else a = tc + 1;
  }
  if (a > z) { *xlo = *xhi = NAN; return; }
  *xlo = tps_pred_gathered_bytes(p, a);
  *xhi = tps_pred_gathered_bytes(p, z);
}

int tps_partset_context(tps_partset *ps, const tps_gpu *gpu, int tp, const tps_path *path, const tps_pred_opts *po,
                        const tps_gemm_shape *shape, double obpt, tps_pred *p, tps_partuse *use, tps_err *e) {
  tps_partuse u0;
  tps_partuse *u = use ? use : &u0;
  memset(u, 0, sizeof *u);
  memset(p, 0, sizeof *p);
  tps_pred_parts pp;
  memset(&pp, 0, sizeof pp);
  long k = shape ? shape->k : ps->o.k, n = shape ? shape->n : ps->o.n;
  pp.shape.k = k;
  pp.shape.n = n;
  pp.shape.out_bytes = shape ? shape->out_bytes : TPS_PRED_DEFAULT_OUT_BYTES;
  pp.out_bytes_per_token = obpt > 0 ? obpt : n * pp.shape.out_bytes;
  /* applicability first (no parts for a path that cannot run here) */
  tps_pred_opts o;
  if (po) o = *po; else tps_pred_opts_default(&o);
  int st = tps_pred_init_spec(p, gpu, tp, path, &pp.shape, pp.out_bytes_per_token, &o);
  tps_pred_free(p);
  if (st != TPS_OK) return st;
  pthread_mutex_lock(&ps->lock);
  tps_part_source *g = NULL, *a[TPS_NGATHERS] = {NULL};
  int rc = ev_resolve_gemm(ps, gpu, path, k, n, &g, e);
  for (int b = 0; b < TPS_NGATHERS && !rc; b++) rc = ev_resolve_gather(ps, gpu, tp, b, &a[b], e);
  pthread_mutex_unlock(&ps->lock);
  if (rc) return TPS_EBADDATA;
  late_table(ps, g);
  pp.gemm = &g->part;
  pp.compute_rsd = tps_part_rsd(&g->part, 1, (double)ps->o.tmax);
  for (int b = 0; b < TPS_NGATHERS; b++) pp.gather[b] = a[b] ? &a[b]->part : NULL;
  st = tps_pred_init_parts(p, gpu, tp, path, &pp, &o);
  if (st != TPS_OK) return st;
  /* spreads, coverage and the spec-only gather, for what this rule uses */
  long tmax = ps->o.tmax;
  u->gemm = g;
  u->gemm_prov = g->prov;
  u->gemm_outside = !g->part.meas || !tps_part_covers(&g->part, 1, (double)tmax);
  double grsd = 0;
  int bs[3];
  for (int b = 0; b < TPS_NGATHERS; b++) u->gather[b] = a[b];
  int nb = tps_partuse_backends(u, p->backend, tp, tps_pred_custom_possible(p), bs);
  for (int i = 0; i < nb; i++) {
    int b = bs[i];
    double xlo, xhi;
    use_ranges(p, tmax, b, &xlo, &xhi);
    if (isnan(xlo)) continue;
    if (a[b]) {
      double r = tps_part_rsd(&a[b]->part, xlo, xhi);
      if (r > grsd) grsd = r;
      u->gather_outside[b] = !a[b]->part.meas || !tps_part_covers(&a[b]->part, xlo, xhi);
    } else {
      u->gather_outside[b] = 1;
      if (TPS_PRED_GATHER_RSD > grsd) grsd = TPS_PRED_GATHER_RSD;
      snprintf(u->gather_spec_src, sizeof u->gather_spec_src,
               "spec-only: the datasheet NCCL model (model/latency/allgather.h)%s", tp > p->opts.node_gpus
               ? " across nodes: TP spans more than one 8-GPU NVLink domain, inter-node bandwidth per GPU (--ib-gbps)" : "");
    }
    if (ps->o.measured_only && !u->gather_outside[b] && a[b] && a[b]->prov == TPS_PROV_SIBLING) {
      tps_err_set(e, a[b]->file, a[b]->line_lo, "%s TP%d: the %s gather is %s's measurement, a sibling's (--measured-only "
                  "allows only %s's own; give --gather %s=FILE)", gpu->name, tp, tps_gather_name(b), a[b]->from, gpu->name,
                  tps_gather_name(b));
      tps_pred_free(p);
      return TPS_EBADDATA;
    }
    if (ps->o.measured_only && u->gather_outside[b]) {
      const tps_part_source *s = a[b];
      char b0[32], b1[32];
      fmt_bytes(b0, sizeof b0, xlo);
      fmt_bytes(b1, sizeof b1, xhi);
      if (s && s->part.meas) {
        char m0[32], m1[32];
        fmt_bytes(m0, sizeof m0, s->xlo);
        fmt_bytes(m1, sizeof m1, s->xhi);
        tps_err_set(e, s->file, s->line_lo, "measured %s..%s does not reach the question's %s..%s (%s gather, TP %d, T 1..%ld) and "
                    "--measured-only allows no model", m0, m1, b0, b1, tps_gather_name(b), tp, tmax);
      } else {
        tps_err_set(e, NULL, 0, "%s TP%d: no measurement of the %s gather (--measured-only allows no model; give --gather %s=FILE)",
                    gpu->name, tp, tps_gather_name(b), tps_gather_name(b));
      }
      tps_pred_free(p);
      return TPS_EBADDATA;
    }
  }
  p->gather_rsd = grsd;
  if (ps->o.measured_only && !u->gemm_outside && g->prov == TPS_PROV_SIBLING) {
    tps_err_set(e, g->file, g->line_lo, "%s %s: the GEMM is %s's measurement, a sibling's (--measured-only allows only %s's own; "
                "give --gemm FILE)", gpu->name, path->name, g->from, gpu->name);
    tps_pred_free(p);
    return TPS_EBADDATA;
  }
  if (ps->o.measured_only && u->gemm_outside) {
    if (g->part.meas)
      tps_err_set(e, g->file, g->line_lo, "measured rows %.0f..%.0f do not reach the question's 1..%ld (%s, TP %d) and --measured-only "
                  "allows no model", g->xlo, g->xhi, tmax, path->name, tp);
    else
      tps_err_set(e, NULL, 0, "%s %s: no measurement of the GEMM at K %ld N %ld (--measured-only allows no model; give --gemm FILE)",
                  gpu->name, path->name, k, n);
    tps_pred_free(p);
    return TPS_EBADDATA;
  }
  if (g->part.meas && g->part.model.kind == TPS_PM_NONE && u->gemm_outside) {
    tps_err_set(e, g->file, g->line_lo, "measured rows %.0f..%.0f do not reach the question's 1..%ld and no model of %s on %s exists",
                g->xlo, g->xhi, tmax, path->name, gpu->name);
    tps_pred_free(p);
    return TPS_EBADDATA;
  }
  p->gtab = ev_gather_table(ps, p);
  return TPS_OK;
}

/* Tables of the GEMM parts made on worker threads (tps_parallel_for; each writes its own part). */
typedef struct {
  tps_partset *ps;
  pthread_mutex_t lock;
  int bad;
} tab_job;

static void tab_one(void *ctx, int i) {
  tab_job *j = ctx;
  tps_part_source *s = j->ps->res[i];
  if (!s || s->part.what != TPS_PART_GEMM || s->part.tab) return;
  pthread_mutex_lock(&j->ps->lock);
  const struct tps_gemmgrid *lg = ev_launches(j->ps, &s->part);
  pthread_mutex_unlock(&j->ps->lock);
  if (tps_part_tabulate_on(&s->part, j->ps->o.tmax, lg) != TPS_OK) {
    pthread_mutex_lock(&j->lock);
    j->bad = 1;
    pthread_mutex_unlock(&j->lock);
  }
}

int tps_partset_prepare(tps_partset *ps, const tps_gpu *const *gpus, size_t ngpu, const int *tps, size_t ntp,
                        const tps_path *const *paths, size_t npath, const tps_pred_opts *po, tps_err *e) {
  int rc = 0;
  ps->defer_tab = 1;
  for (size_t i = 0; i < ngpu && !rc; i++)
    for (size_t j = 0; j < ntp && !rc; j++)
      for (size_t k = 0; k < npath && !rc; k++) {
        tps_pred p;
        int st = tps_partset_context(ps, gpus[i], tps[j], paths[k], po, NULL, 0, &p, NULL, e);
        tps_pred_free(&p);
        if (st == TPS_EBADDATA) rc = -1;
      }
  ps->defer_tab = 0;
  tab_job job = {ps, PTHREAD_MUTEX_INITIALIZER, 0};
  tps_parallel_for((int)ps->nres, tps_threads_default(), tab_one, &job);
  if (!rc && job.bad) rc = tps_err_set(e, NULL, 0, "a GEMM part has no usable times on 1..%ld rows", ps->o.tmax);
  ps->tab_late = 1;
  return rc;
}

/* ------------------------------------------------------------------ output */
int tps_partuse_backends(const tps_partuse *u, int backend, int tp, int custom_possible, int *b) {
  /* one rank: no gather, unless a one-rank gather was measured */
  int any = 0;
  for (int i = 0; i < TPS_NGATHERS; i++) any |= u->gather[i] != NULL;
  if (tp <= 1 && !any) return 0;
  if (tps_gather_is_rule(backend) && u->gather[tps_gather_rule()]) { b[0] = tps_gather_rule(); return 1; }
  if (tps_gather_is_rule(backend)) {
    int n = 0;
    if (custom_possible) b[n++] = tps_gather_capped();
    b[n++] = tps_gather_fallback();
    return n;
  }
  b[0] = backend;
  return 1;
}

static void short_of(int prov, int outside, int id, int model_ok, char *buf, size_t sz) {
  const char *k = prov >= 0 && prov < TPS_PROV_N ? tps_prov_names[prov] : "?";
  if (prov == TPS_PROV_MEASURED && outside) snprintf(buf, sz, "%s+model%s", k, model_ok ? "" : "?");
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
  if (s->file[0] && s->prov == TPS_PROV_MEASURED) {
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
  json_object_set_new(o, "model_outside", s->model_src[0] ? json_string(s->model_src) : json_null());
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
    if (v[i]->model_src[0]) printf("%s    outside the measured range: %s\n", prefix, v[i]->model_src);
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

int tps_predref_context_use(const tps_predref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                            const tps_pred_opts *o, tps_pred *p, tps_partuse *use, tps_err *e) {
  if (use) memset(use, 0, sizeof *use);
  if (scaling == TPS_SCALING_PARTS) {
    tps_err e2;
    tps_err_clear(&e2);
    if (!r->parts) return TPS_EINVAL;
    return tps_partset_context(r->parts, gpu, tp, path, o, NULL, 0, p, use, e ? e : &e2);
  }
  return tps_predref_context(r, scaling, gpu, tp, path, o, p);
}

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

int tps_predref_context(const tps_predref *r, int scaling, const tps_gpu *gpu, int tp, const tps_path *path,
                        const tps_pred_opts *o, tps_pred *p) {
  switch (scaling) {
  case TPS_SCALING_PARTS: {
    tps_err e2;
    tps_err_clear(&e2);
    if (!r->parts) return TPS_EINVAL;
    return tps_partset_context(r->parts, gpu, tp, path, o, NULL, 0, p, NULL, &e2);
  }
  case TPS_SCALING_MODEL:
    return tps_pred_init_model(p, &r->fit, r->fit_gpu, gpu, tp, path, o);
  case TPS_SCALING_PESSIMISTIC:
    return tps_pred_init_pessimistic(p, &r->split, r->table_gpu, gpu, tp, path, o);
  default:
    return tps_pred_init_spec(p, gpu, tp, path, NULL, 0, o);
  }
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
