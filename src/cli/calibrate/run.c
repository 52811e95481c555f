/* run.c: `tpsplit calibrate` on the GPUs at hand: the plan of a run and the thresholds file.
 *
 * Plan of a run, in order, each step checked against the budget before it starts (a step
 * is not interrupted: the budget is wall time from the start, and a step that would end
 * past it by the estimate of its kind is not started; the file is then marked partial):
 *   1. per (shape, path) a bench gemm run of the first-phase sweep rows (tps_cal_sweep_rows);
 *   2. per TP <= GPUs visible, a bench allgather run per concrete backend (nccl; custom for
 *      custom/auto), ~10 sizes from 1 to max-tokens tokens of the shapes' outputs;
 *   2b. per (shape, path) rounds of adaptive rows (tps_cal_adapt_rows), then the held-out
 *      check: those rows, predicted by the first-phase fit, choose shaped or Steffen
 *      (tps_cal_heldout_choose); the method chosen is kept by the refits after it;
 *   3. per (shape, path) a second bench gemm run of the rows the break-even needs
 *      (T* and ceil(T* / TP) of each TP: tps_cal_breakeven_rows), when not near a row had;
 *   4. the calibrated models, break-even, interval and threshold per (shape, path, TP,
 *      backend), written to a temporary file renamed into place (SIGINT/SIGTERM/a watchdog
 *      remove the temporary file: an interrupted run leaves no file that looks complete).
 * A TP above the GPUs visible (or every TP on one GPU) takes its gather from --gather FILE
 * (nccl-tests all_gather log, bench allgather log, AIConfigurator NCCL table), else from the
 * transferred model (model/latency/xgather.h fitted to the AIConfigurator all_gather tables of the
 * other GPUs of this GPU's fabric) and, for the custom backend, its spec-only priors; every
 * entry's provenance says which (gather.c). */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "model/core/harness.h"
#include "src/cli/calibrate/cal.h"
#include "src/cli/tpsplit.h"
#include "src/base/util.h"

/* The GEMM provenance's method: the calibrated model, and how the held-out check chose it. */
static void gemm_method_text(const run_t *r, const gpart *p, char *buf, size_t sz) {
  const char *m;
  if (p->fit.method == TPS_CAL_SHAPED && p->fit.base == TPS_CAL_BASE_XW8)
    m = "shaped: model/latency/xgemm.h tps_xw8 (our w8a16 dispatch) fitted to the sweep x its measured residuals, per dispatch regime (model/calib/calib.h)";
  else if (p->fit.method == TPS_CAL_SHAPED)
    m = "shaped: model/latency/xgemm.h best-of-tilings fitted to the sweep (this GPU's datasheet as input) x its measured residuals interpolated in log M (model/calib/calib.h)";
  else
    m = "Steffen interpolation in log-log of the sweep (model/calib/calib.h)";
  if (!p->have_ho || !p->ho.n) {
    snprintf(buf, sz, "%s", m);
    return;
  }
  char a[2][16];
  const char *how = p->fit.method != p->rec.first_method ? "chosen by the held-out check"
                    : r->o->no_heldout                    ? "the first phase's (--no-heldout); the held-out check"
                    : r->o->method != TPS_CAL_AUTO        ? "as --method forces; the held-out check"
                                                          : "kept by the held-out check";
  snprintf(buf, sz, "%s; %s of %zu adaptive rows (first-phase fit's max |error| steffen %s, shaped %s)", m, how, p->ho.n,
           cal_pct_text(p->ho.max_abs_rel[TPS_CAL_STEFFEN], a[0]), cal_pct_text(p->ho.max_abs_rel[TPS_CAL_SHAPED], a[1]));
}

static void build_entries(run_t *r, const char *date) {
  tps_thr_device *d = &r->out.dev[0];
  for (int i = 0; i < r->nparts; i++) {
    gpart *p = &r->part[i];
    *tps_thr_add_gemm(d) = p->rec;
    if (!p->fitted) continue;
    for (int ti = 0; ti < r->o->ntps; ti++)
      for (int b = 0; b < r->o->nbackends; b++) {
        const int backend = r->o->backend[b];
        tps_cal_be be;
        tps_bands bands;
        const int bst = cal_part_be(r, p, ti, backend, &be, &bands);
        if (bst < 0) continue;
        tps_thr_entry *e = tps_thr_add_entry(d);
        if (!e) continue;
        e->k = p->k;
        e->n = p->n;
        e->path = p->path;
        e->tp = r->o->tp[ti];
        e->backend = backend;
        e->out_bytes_per_token = 2.0 * (double)p->n;
        tps_thr_entry_answer(e, be.threshold, be.breakeven, be.lo, be.hi, r->o->t_max);
        char why[256] = "a part cannot be evaluated on the grid";
        if (bst || tps_thr_entry_bands(e, &bands, why, sizeof why))
          tps_thr_add_note(&r->out, "%ldx%ld %s TP%d %s: no win_bands_tokens: %s", p->k, p->n, tps_path_name(p->path), e->tp,
                           tps_gather_name(backend), why);
        char src[512];
        snprintf(src, sizeof src, "tpsplit calibrate on this GPU (%s), %s: bench gemm sweep, %d samples per row", d->name, date,
                 p->rec.samples);
        char mtext[512];
        gemm_method_text(r, p, mtext, sizeof mtext);
        e->gemm = tps_thr_prov_make(TPS_PROV_MEASURED, src, mtext);
        e->gemm.harness = p->h_ratio ? TPS_HARNESS_AIC : TPS_HARNESS_BENCH; /* calibrate times with tpsplit bench's */
        if (p->h_ratio) {
          size_t l = strlen(e->gemm.method);
          snprintf(e->gemm.method + l, sizeof e->gemm.method - l, "; %s", p->h_how);
        }
        e->gemm.points = (int)p->rec.npts;
        e->gemm.w90_log = cal_gemm_w90(p);
        gsel s = {&r->gc[ti][0], tps_gather_is_fallback(backend) ? NULL : &r->gc[ti][1], e->tp};
        e->gather = gsel_prov(&s, backend);
      }
  }
  for (int ti = 0; ti < r->o->ntps; ti++)
    for (int c = 0; c < 2; c++) {
      const gcurve *g = &r->gc[ti][c];
      if (!g->have && !g->status[0]) continue;
      tps_thr_gather *x = tps_thr_add_gather(d);
      if (!x) continue;
      x->tp = g->tp;
      x->backend = g->backend;
      snprintf(x->status, sizeof x->status, "%s", g->status[0] ? g->status : "not-run");
      snprintf(x->reason, sizeof x->reason, "%s", g->reason);
      x->samples = g->samples;
      if (g->have == 1) {
        x->npts = g->n;
        memcpy(x->bytes, g->bytes, g->n * sizeof *g->bytes);
        memcpy(x->t_us, g->t, g->n * sizeof *g->t);
      }
      x->prov = g->prov.source[0] ? g->prov : tps_thr_prov_make(TPS_PROV_SPEC, "none", "no gather: no thresholds at this TP");
    }
}

/* Bad input first, before any GPU work: the --gather files, the GPU table, the output; then
 * the GPUs.  TPS_EXIT_OK, or the exit code (said). */
static int open_inputs(run_t *r, tps_outfile *of, tps_err *e) {
  const opts *o = r->o;
  int rc = TPS_EXIT_OK;
  for (int f = 0; f < o->ngfiles && rc == TPS_EXIT_OK; f++)
    if (gfile_read(o->gfile[f], o, &r->gf[f], e)) { tps_err_print(e); rc = tps_err_exit_code(e); }
  if (rc == TPS_EXIT_OK && tps_gpus_load(NULL, &r->gt, e)) { tps_err_print(e); rc = TPS_EXIT_USAGE; }
  if (rc == TPS_EXIT_OK && tps_out_open(of, o->out, e)) { tps_err_print(e); rc = tps_err_exit_code(e); }
  char why[TPS_BENCH_WHY];
  if (rc == TPS_EXIT_OK && tps_bench_gpus(&r->ngpus, why, sizeof why) != TPS_OK) {
    tps_die_msg("no GPU can be opened: %s. It measures the GPUs of the machine it runs on; "
                "for a GPU not at hand use tpsplit predict or crossover. Nothing written.",
                why);
    rc = TPS_EXIT_FAIL;
  }
  if (rc == TPS_EXIT_OK) {
    int st = tps_bench_device_info(o->device, &r->dev, why, sizeof why);
    if (st != TPS_OK) {
      tps_die_msg("device %d: %s; nothing written", o->device, why);
      rc = st == TPS_EINVAL ? TPS_EXIT_USAGE : TPS_EXIT_FAIL;
    }
  }
  if (rc == TPS_EXIT_OK && tps_bench_mpi()) {
    tps_die_msg("runs as one process (its ranks are threads): not under mpirun; nothing written");
    rc = TPS_EXIT_USAGE;
  }
  return rc;
}

/* The device record of the file, and the GPU's datasheet (r->gpu, NULL when not in the table). */
static tps_thr_device *device_record(run_t *r) {
  const opts *o = r->o;
  tps_thr_init(&r->out);
  r->out.budget_s = o->budget_s;
  tps_thr_device *d = tps_thr_add_device(&r->out, r->dev.gpu_name);
  d->sms = r->dev.sms;
  d->cc_major = r->dev.cc_major;
  d->cc_minor = r->dev.cc_minor;
  d->sm_clock_mhz = r->dev.sm_clock_mhz;
  d->mem_clock_mhz = r->dev.mem_clock_mhz;
  d->l2_bytes = r->dev.l2_bytes;
  d->gpus_visible = r->ngpus;
  d->cublaslt = r->dev.cublaslt ? (long)r->dev.cublaslt : -1; /* 0: cuBLASLt not loadable, null */
  tps_bench_driver(&r->dev, d->driver, sizeof d->driver);
  tps_bench_cuda_version(r->dev.runtime, d->cuda_runtime, sizeof d->cuda_runtime);
  {
    char shortname[128];
    tps_bench_gpu_short(r->dev.gpu_name, shortname, sizeof shortname);
    tps_err ge;
    tps_err_clear(&ge);
    r->gpu = tps_gpus_find(&r->gt, shortname, &ge);
    if (r->gpu) snprintf(d->gpu_spec, sizeof d->gpu_spec, "%s", r->gpu->name);
    else {
      cal_say("%s is not in data/gpus.tsv: the GEMM is interpolated (Steffen) with no structural model, and the gather "
          "of a TP not measured here needs --gather FILE", r->dev.gpu_name);
      tps_thr_add_note(&r->out, "%s is not in data/gpus.tsv: Steffen interpolation only, no transferred gather model", r->dev.gpu_name);
    }
  }
  cal_say("%s (%d SMs, cc %d.%d), %d GPU(s) visible; budget %.0f s", r->dev.gpu_name, r->dev.sms, r->dev.cc_major,
      r->dev.cc_minor, r->ngpus, o->budget_s);

  return d;
}

/* The parts (shape, path); a path this GPU cannot run is skipped and said. */
static void make_parts(run_t *r) {
  const opts *o = r->o;
  const int cc = r->dev.cc_major * 10 + r->dev.cc_minor;
  for (int s = 0; s < o->nshapes; s++)
    for (int pi = 0; pi < o->npaths; pi++) {
      gpart *p = &r->part[r->nparts++];
      p->k = o->k[s];
      p->n = o->n[s];
      p->path = o->path[pi];
      p->rec.k = p->k;
      p->rec.n = p->n;
      p->rec.path = p->path;
      p->rec.w90_log = NAN;
      p->rec.lopo_med[0] = p->rec.lopo_med[1] = p->rec.lopo_max[0] = p->rec.lopo_max[1] = NAN;
      p->rec.heldout_max[0] = p->rec.heldout_max[1] = p->rec.heldout_med[0] = p->rec.heldout_med[1] = NAN;
      p->rec.first_method = -1;
      const tps_path *tp = tps_path_get(p->path);
      if (cc < tp->min_cc) {
        snprintf(p->rec.status, sizeof p->rec.status, "skipped");
        snprintf(p->rec.reason, sizeof p->rec.reason, "%s needs compute capability %d.%d; this GPU has %d.%d", tp->name,
                 tp->min_cc / 10, tp->min_cc % 10, r->dev.cc_major, r->dev.cc_minor);
        cal_say("skipping %s: %s", tp->name, p->rec.reason);
        tps_thr_add_note(&r->out, "%ldx%ld %s skipped: %s", p->k, p->n, tp->name, p->rec.reason);
      }
    }
}

/* Step 4: the thresholds, said and written through the temporary file of. */
static int write_thresholds(run_t *r, tps_thr_device *d, tps_outfile *of, tps_err *e) {
  const opts *o = r->o;
  int rc = TPS_EXIT_OK;
  r->out.partial = r->partial;
  build_entries(r, r->out.date);
  r->out.wall_s = cal_elapsed_s();
  for (size_t i = 0; i < d->nentries; i++) {
    char line[1024];
    tps_thr_entry_line(&d->e[i], line, sizeof line);
    cal_say("%s", line);
    if (tps_thr_entry_bands_line(&d->e[i], line, sizeof line)) cal_say("  %s", line);
  }
  if (!d->nentries) cal_say("no thresholds: nothing measured and modelled enough (see above)");
  {
    json_t *j = tps_thr_to_json(&r->out);
    char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(12));
    json_decref(j);
    if (!s) rc = TPS_EXIT_FAIL;
    else {
      fputs(s, of->fp);
      fputc('\n', of->fp);
      free(s);
      cal_unguard();
      if (tps_out_commit(of, e)) { tps_err_print(e); rc = tps_err_exit_code(e); }
      else cal_say("wrote %s: %zu thresholds in %.1f s%s", o->out, d->nentries, r->out.wall_s, r->partial ? " (partial: the budget was reached)" : "");
    }
  }
  return rc;
}

int cal_run(const opts *o) {
  run_t *r = calloc(1, sizeof *r);
  if (!r) { tps_die_msg("out of memory"); return TPS_EXIT_FAIL; }
  r->o = o;
  r->est_gemm_s = EST_GEMM_S;
  r->est_gather_s = EST_GATHER_S;
  cal_console_start(o);
  tps_err e;
  tps_err_clear(&e);
  tps_outfile of;
  memset(&of, 0, sizeof of);
  int rc = open_inputs(r, &of, &e);
  if (rc != TPS_EXIT_OK) goto out;
  cal_guard(&of, o->budget_s);
  tps_thr_device *d = device_record(r);
  make_parts(r);
  /* 1. first-phase GEMM sweeps */
  cal_first_sweeps(r);
  /* 2. gathers: measured where the GPUs are there, else a file or a model */
  cal_gathers(r);
  /* 2b. the adaptive phase, then the held-out check */
  cal_adaptive(r);
  /* 3. the rows the break-even needs */
  cal_breakeven_rows(r);
  cal_progress_end();
  /* 4. thresholds (in the harness asked: harness.c) */
  if ((rc = cal_harness(r)) == TPS_EXIT_OK) rc = write_thresholds(r, d, &of, &e);
  if (rc == TPS_EXIT_OK && !d->nentries) rc = TPS_EXIT_FAIL;
out:
  cal_unguard();
  tps_out_abort(&of);
  for (int i = 0; i < r->nparts; i++) {
    if (r->part[i].fitted) tps_cal_gemm_free(&r->part[i].fit);
    if (r->part[i].have_first) tps_cal_gemm_free(&r->part[i].first);
    tps_mcurve_free(r->part[i].h_ratio);
  }
  for (int ti = 0; ti < MAX_TPS; ti++) for (int c = 0; c < 2; c++) tps_loo_curve_free(r->gc[ti][c].curve);
  for (int f = 0; f < o->ngfiles; f++) gfile_free(&r->gf[f]);
  tps_gpus_free(&r->gt);
  tps_thr_free(&r->out);
  free(r);
  return rc;
}
