/* test_fitfile.c: the saved fit (src/io/fitfile.h) reads back exactly, and bad fit files give
 * one error naming the file and line.
 *
 * Round trip: fit the bundled H20 table (tps_fit_file), save it, read it back; every field
 * must be equal bit for bit (numbers are written in their shortest exact form), the model values
 * tps_fit_split_us at several token counts equal, and their standard errors equal. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_errno.h>
#include "src/io/fitfile.h"
#include "src/io/xgpufile.h"
#include "src/evidence/fit_from_file.h"
#include "model/fit/fit.h"

#include "tests/unit/expect.h"

static int same(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

static char dir[] = "/tmp/tpsplit-fitfile.XXXXXX";

/* Write text to a file in dir and try to read it as a fit; returns the error message. */
static const char *bad(const char *name, const char *text, int *rc) {
  static char path[512];
  static tps_err e;
  static tps_fit f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *fp = fopen(path, "w");
  fputs(text, fp);
  fclose(fp);
  tps_err_clear(&e);
  *rc = tps_fitfile_read(path, &f, &e);
  return e.msg;
}

/* Every fit file tpsplit ships (the fuzz seeds: fits of the bundled tables) and fits made up
 * from random numbers (NaN, -0, huge and tiny values, UTF-8 and control characters in the
 * note and provenance): read -> write gives the bytes read, and what was written reads back to
 * the same fit (a made-up fit is first written, so that it is in the canonical form). */
static int same_bytes(const char *what, const char *data, size_t len) {
  static tps_fit f, g;
  tps_fitfile_prov pv, pw;
  tps_err e;
  tps_err_clear(&e);
  if (tps_fitfile_read_prov(what, data, len, &f, &pv, &e)) { printf("FAIL %s: %s\n", what, e.msg); return 0; }
  char *buf = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&buf, &n);
  int ok = fp && tps_fitfile_write_prov(fp, &f, &pv) == 0;
  if (fp) fclose(fp);
  ok = ok && n == len && memcmp(buf, data, len) == 0;
  if (!ok) printf("FAIL %s: not written back byte for byte\n", what);
  if (ok && tps_fitfile_read_prov(what, buf, n, &g, &pw, &e) == 0) {
    ok = memcmp(&f, &g, sizeof f) == 0 && strcmp(pv.written_by, pw.written_by) == 0 && pv.nsources == pw.nsources;
    tps_fitfile_prov_free(&pw);
  } else if (ok) {
    ok = 0;
    printf("FAIL %s: written, not read back: %s\n", what, e.msg);
  }
  tps_fitfile_prov_free(&pv);
  free(buf);
  return ok;
}

static double rnd(unsigned long *s) {
  *s = *s * 6364136223846793005UL + 1442695040888963407UL;
  return (double)(*s >> 11) / 9007199254740992.0;
}

static double pick(unsigned long *s, double lim) {
  double u = rnd(s);
  if (u < 0.05) return 0.0;
  if (u < 0.08) return -0.0;
  return (rnd(s) * 2 - 1) * pow(10, rnd(s) * log10(lim) * 2 - log10(lim));
}

static void round_trips(const char *top) {
  static const char *const seeds[] = {"tests/fuzz/seeds/fit/h20_split.fit", "tests/fuzz/seeds/fit/gemm.fit",
                                      "tests/fuzz/seeds/fit/ag.fit"};
  static tps_fit f;
  static char buf[1 << 20];
  for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", top, seeds[i]);
    FILE *in = fopen(p, "r");
    size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
    if (in) fclose(in);
    CHECK(n > 0 && same_bytes(seeds[i], buf, n), "round trip of %s", seeds[i]);
    if (i > 0) continue;
    tps_err e;
    CHECK(tps_fitfile_read_mem(seeds[i], buf, n, &f, &e) == 0, "%s", e.msg);
  }
  /* the bundled cross-GPU fits (data/xgpu.fit): read -> write gives the bytes read; its old
   * positional form is refused with the command that regenerates it */
  {
    static tps_xgpu_file x;
    char p[1024];
    snprintf(p, sizeof p, "%s/data/xgpu.fit", top);
    FILE *in = fopen(p, "r");
    size_t n = in ? fread(buf, 1, sizeof buf, in) : 0;
    if (in) fclose(in);
    tps_err e;
    tps_err_clear(&e);
    CHECK(n > 0 && tps_xgpu_read_mem("data/xgpu.fit", buf, n, &x, &e) == 0, "data/xgpu.fit: %s", e.msg);
    CHECK(x.nxg >= 10 && x.nxa >= 2 && x.have_w8, "data/xgpu.fit: %d GEMM fits, %d gather fits, w8a16 %d", x.nxg, x.nxa, x.have_w8);
    char *out = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&out, &len);
    CHECK(fp && tps_xgpu_write(fp, &x) == 0, "write data/xgpu.fit");
    if (fp) fclose(fp);
    CHECK(len == n && memcmp(out, buf, n) == 0, "data/xgpu.fit is not written back byte for byte");
    free(out);
    static const char old[] = "format\ttpsplit-xgpu\t1\ngemm\tdense-bf16\t-\t0.3\tA100\t1\n";
    CHECK(tps_xgpu_read_mem("old.fit", old, sizeof old - 1, &x, &e) == -1 && strstr(e.msg, "old.fit:1:") &&
          strstr(e.msg, "`tpsplit fit --xgpu -o old.fit`"), "old xgpu form: %s", e.msg);
  }
  unsigned long s = 20261205;
  int good = 0;
  for (int r = 0; r < 300; r++) {
    static tps_fit g;
    g = f; /* a valid fit, its numbers then made up within what a fit can be (the reader refuses a negative
            * se or variance, a value outside its own interval, an asymmetric covariance, a point twice) */
    for (int j = 0; j < g.npar; j++) {
      g.se[j] = fabs(pick(&s, 1e12));
      g.lo95[j] = g.theta[j] - 0.5 * fabs(pick(&s, 1e12)); g.hi95[j] = g.theta[j] + 0.5 * fabs(pick(&s, 1e12));
      for (int k = 0; k <= j; k++) g.cov[j * g.npar + k] = g.cov[k * g.npar + j] = k == j ? fabs(pick(&s, 1e24)) : pick(&s, 1e24);
    }
    g.npts = (size_t)(rnd(&s) * TPS_FIT_MAXPTS);
    for (size_t i = 0; i < g.npts; i++) {
      tps_fit_point *q = &g.pt[i];
      q->series = rnd(&s) < 0.5;
      q->x = fabs(pick(&s, 1e15));
      for (size_t j = 0; j < i; j++) /* each series at one x once */
        if (g.pt[j].series == q->series && g.pt[j].x == q->x) { q->x = (double)(i + 1) * 1e-3; j = (size_t)-1; }
      q->measured_us = fabs(pick(&s, 1e9)); q->model_us = fabs(pick(&s, 1e9));
      q->rel_resid = rnd(&s) < 0.2 ? NAN : pick(&s, 1e6); q->loo_rel = rnd(&s) < 0.5 ? NAN : pick(&s, 1e6);
      q->gather_us = rnd(&s) < 0.5 ? NAN : fabs(pick(&s, 1e9)); q->gather_se_us = rnd(&s) < 0.5 ? NAN : fabs(pick(&s, 1e9));
      q->backend = rnd(&s) < 0.3 ? -1 : rnd(&s) < 0.5 ? TPS_GATHER_CUSTOM : TPS_GATHER_NCCL;
    }
    g.chi2 = pick(&s, 1e15); g.rcond = rnd(&s); g.loo_med_abs = rnd(&s) < 0.5 ? NAN : pick(&s, 1e15);
    g.dof = (int)(rnd(&s) * 1000);
    size_t k = 0, nk = (size_t)(rnd(&s) * 200);
    for (; k < nk; k++) { /* ASCII with controls and quotes, and two-byte characters */
      double u = rnd(&s);
      if (u < 0.1 && k + 2 < nk) { g.fixed_note[k++] = (char)0xC3; g.fixed_note[k] = (char)0xA9; }
      else g.fixed_note[k] = (char)(1 + (int)(rnd(&s) * 126));
    }
    g.fixed_note[k] = 0;
    char src0[64], wb[64];
    snprintf(src0, sizeof src0, "data/t\"%d\\\t.tsv", r);
    snprintf(wb, sizeof wb, "tpsplit fit -o \xE2\x82\xAC%d.fit", r);
    char *srcs[1] = {src0};
    tps_fitfile_prov pv = {wb, srcs, (size_t)(r % 2)};
    char *out = NULL;
    size_t n = 0;
    FILE *fp = open_memstream(&out, &n);
    CHECK(fp && tps_fitfile_write_prov(fp, &g, &pv) == 0, "write made-up fit %d", r);
    if (fp) fclose(fp);
    char what[32];
    snprintf(what, sizeof what, "made-up fit %d", r);
    good += same_bytes(what, out, n);
    free(out);
  }
  CHECK(good == 300, "%d of 300 made-up fits round-trip", good);
}

int main(void) {
  gsl_set_error_handler_off();
  const char *top = getenv("top_srcdir");
  if (!top) { printf("run through make check (top_srcdir)\n"); return 1; }
  if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
  char data[1024], out[1024];
  snprintf(data, sizeof data, "%s/data/h20_tp8_fused_wqa_wkv.tsv", top);
  snprintf(out, sizeof out, "%s/h20.fit", dir);
  static tps_fit a, b;
  tps_fit_opts o = {1, 0};
  tps_err e;
  tps_err_clear(&e);
  int status = -1;
  CHECK(tps_fit_file(data, NULL, NULL, &o, &a, &status, &e) == 0, "fit: %s", e.msg);
  const char *src[1] = {data};
  CHECK(tps_fitfile_save(out, &a, src, 1, &e) == 0, "save: %s", e.msg);
  CHECK(tps_fitfile_read(out, &b, &e) == 0, "read: %s", e.msg);
  CHECK(a.kind == b.kind && a.tp == b.tp && strcmp(a.gpu, b.gpu) == 0, "header");
  CHECK(a.shape.k == b.shape.k && a.shape.n == b.shape.n && same(a.shape.out_bytes, b.shape.out_bytes), "shape");
  CHECK(same(a.out_bytes_per_token, b.out_bytes_per_token) && a.gather == b.gather, "gather");
  CHECK(a.gemm.path == b.gemm.path && a.gemm.sms == b.gemm.sms, "path/sms");
  for (int j = 0; j < TPS_GEMM_NPAR; j++) CHECK(same(a.gemm.p[j], b.gemm.p[j]), "gemm p[%d]", j);
  CHECK(memcmp(&a.ag, &b.ag, sizeof a.ag) == 0, "all-gather model");
  CHECK(a.npar == b.npar, "npar %d vs %d", a.npar, b.npar);
  for (int j = 0; j < a.npar && j < b.npar; j++) {
    CHECK(strcmp(a.par_name[j], b.par_name[j]) == 0 && a.par_target[j] == b.par_target[j], "name %d", j);
    CHECK(same(a.theta[j], b.theta[j]) && same(a.se[j], b.se[j]) && same(a.lo95[j], b.lo95[j]) &&
          same(a.hi95[j], b.hi95[j]), "param %s", a.par_name[j]);
    for (int k = 0; k < a.npar; k++) CHECK(same(a.cov[j * a.npar + k], b.cov[j * b.npar + k]), "cov %d %d", j, k);
  }
  CHECK(a.npts == b.npts, "npts");
  for (size_t i = 0; i < a.npts && i < b.npts; i++) {
    const tps_fit_point *p = &a.pt[i], *q = &b.pt[i];
    CHECK(p->series == q->series && same(p->x, q->x) && same(p->measured_us, q->measured_us) &&
          same(p->model_us, q->model_us) && same(p->rel_resid, q->rel_resid) && same(p->loo_rel, q->loo_rel) &&
          same(p->gather_us, q->gather_us) && same(p->gather_se_us, q->gather_se_us) && p->backend == q->backend,
          "point %zu", i);
  }
  CHECK(same(a.med_abs_rel, b.med_abs_rel) && same(a.loo_med_abs, b.loo_med_abs) && a.dof == b.dof, "stats");
  static const long T[] = {1, 48, 1000, 5000, 6144, 100000};
  for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
    double s1, s2;
    int b1, b2;
    double v1 = tps_fit_split_us(&a, T[i], &s1, &b1), v2 = tps_fit_split_us(&b, T[i], &s2, &b2);
    CHECK(isfinite(v1) && v1 == v2 && s1 == s2 && b1 == b2, "split_us(%ld): %g vs %g", T[i], v1, v2);
  }
  /* the 'fixed' note round-trips byte for byte up to its 255 bytes (here 127 two-byte
   * characters and one more byte), and a longer one is refused, not cut inside a character */
  {
    static tps_fit c;
    char p3[600];
    snprintf(p3, sizeof p3, "%s/note.fit", dir);
    size_t k = 0;
    for (int q = 0; q < 127; q++) { a.fixed_note[k++] = (char)0xC3; a.fixed_note[k++] = (char)0xA9; }
    a.fixed_note[k++] = 'x';
    a.fixed_note[k] = 0;
    CHECK(k == 255 && tps_fitfile_save(p3, &a, src, 1, &e) == 0, "save note: %s", e.msg);
    CHECK(tps_fitfile_read(p3, &c, &e) == 0 && memcmp(c.fixed_note, a.fixed_note, 256) == 0, "note round trip: %s", e.msg);
    char line[8192], p4[600];
    snprintf(p4, sizeof p4, "%s/note2.fit", dir);
    FILE *in = fopen(p3, "r"), *w = fopen(p4, "w");
    long ln = 0, at = 0;
    while (fgets(line, sizeof line, in)) {
      ln++;
      if (strncmp(line, "  \"fixed\": \"", 12) == 0) { fputs("  \"fixed\": \"\xC3\xA9", w); at = ln; } /* 257 bytes: one character more */
      fputs(strncmp(line, "  \"fixed\": \"", 12) == 0 ? line + 12 : line, w);
    }
    fclose(in);
    fclose(w);
    char want[128];
    snprintf(want, sizeof want, "note2.fit:%ld: 'fixed' note of 257 bytes, longer than 255", at);
    tps_err_clear(&e);
    CHECK(at > 0 && tps_fitfile_read(p4, &c, &e) == -1 && strstr(e.msg, want), "long note: %s", e.msg);
    a.fixed_note[0] = 0;
  }
  /* bad files: one message naming file and line */
  int rc;
  const char *m;
  m = bad("nofmt.fit", "{\"kind\": \"split\"}\n", &rc);
  CHECK(rc == -1 && strstr(m, "nofmt.fit:1:") && strstr(m, "not a tpsplit fit file"), "no format: %s", m);
  m = bad("ver.fit", "{\n  \"format\": \"tpsplit-fit\",\n  \"schema_version\": 3\n}\n", &rc);
  CHECK(rc == -1 && strstr(m, "ver.fit:3:") && strstr(m, "schema_version"), "version: %s", m);
  m = bad("old.fit", "# c\nformat\ttpsplit-fit\t1\nkind\tsplit\nsource\tdata/t.tsv\n", &rc);
  CHECK(rc == -1 && strstr(m, "old.fit:2:") && strstr(m, "old positional text form") && strstr(m, "tpsplit fit -o FILE data/t.tsv"),
        "old form: %s", m);
  m = bad("dup.fit", "{\n  \"format\": \"tpsplit-fit\",\n  \"format\": \"tpsplit-fit\"\n}\n", &rc);
  CHECK(rc == -1 && strstr(m, "dup.fit:3:") && strstr(m, "duplicate"), "duplicate key: %s", m);
  m = bad("empty.fit", "", &rc);
  CHECK(rc == -1 && strstr(m, "empty.fit") && strstr(m, "empty"), "empty: %s", m);
  /* edits of the saved fit: an unknown key, a bad number, an unknown path, a short cov row, a
   * non-canonical spelling, a value out of its domain (each names its line) */
  static const struct { const char *from, *to, *name, *msg; } ed[] = {
      {"  \"tp\": 8,\n", "  \"tp\": 8,\n  \"bogus\": 1,\n", "key.fit", "unknown key 'bogus'"},
      {"  \"out_bytes\": 2,\n", "  \"out_bytes\": \"2x\",\n", "num.fit", "'out_bytes' is not a number"},
      {"  \"path\": \"marlin-w8a16\",\n", "  \"path\": \"foo\",\n", "path.fit", "unknown kernel path 'foo'"},
      {"  \"cov\": [\n    [", "  \"cov\": [\n    [1, ", "cov.fit", "cov row 0 needs"},
      {"  \"tp\": 8,\n", "  \"tp\": 8.0,\n", "real.fit", "'tp' is not a whole number"},
      {"  \"k\": 5120,\n", "  \"k\" : 5120,\n", "space.fit", "canonical form"},
      {"{\"name\": \"tflops\", \"value\": ", "{\"name\": \"tflops\", \"value\": -", "neg.fit", "domain"},
  };
  char *text = NULL;
  {
    FILE *in = fopen(out, "r");
    static char whole[1 << 20];
    size_t n = in ? fread(whole, 1, sizeof whole - 1, in) : 0;
    if (in) fclose(in);
    whole[n] = 0;
    text = whole;
  }
  for (size_t i = 0; i < sizeof ed / sizeof ed[0]; i++) {
    const char *at = strstr(text, ed[i].from);
    CHECK(at != NULL, "%s: '%s' not in the saved fit", ed[i].name, ed[i].from);
    if (!at) continue;
    static char edited[1 << 20];
    snprintf(edited, sizeof edited, "%.*s%s%s", (int)(at - text), text, ed[i].to, at + strlen(ed[i].from));
    long want_line = 1;
    for (const char *q = text; q < at; q++) want_line += *q == '\n';
    for (size_t c = 0; ed[i].from[c] && ed[i].from[c] == ed[i].to[c]; c++) want_line += ed[i].from[c] == '\n'; /* the edited line */
    char want[64];
    snprintf(want, sizeof want, "%s:%ld:", ed[i].name, want_line);
    m = bad(ed[i].name, edited, &rc);
    if (!strcmp(ed[i].msg, "domain")) snprintf(want, sizeof want, "%s:", ed[i].name); /* which parameter: not known */
    CHECK(rc == -1 && strstr(m, want) && strstr(m, ed[i].msg), "%s: want '%s' and '%s', got %s", ed[i].name, want, ed[i].msg, m);
  }
  round_trips(top);
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("could not remove %s\n", dir);
  printf("%s\n", fails ? "FAILED" : "ok");
  return fails ? 1 : 0;
}
