/* test_fitfile.c: the saved fit (src/io/fitfile.h) reads back exactly, and bad fit files give
 * one error naming the file and line.
 *
 * Round trip: fit the bundled H20 table (tps_fit_file), save it, read it back; every field
 * must be equal bit for bit (numbers are written with %.17g), the model values
 * tps_fit_split_us at several token counts equal, and their standard errors equal. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gsl/gsl_errno.h>
#include "src/io/fitfile.h"
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
      if (strncmp(line, "fixed\t", 6) == 0) { fputs("fixed\t\xC3\xA9", w); at = ln; } /* 257 bytes: one character more */
      fputs(strncmp(line, "fixed\t", 6) == 0 ? line + 6 : line, w);
    }
    fclose(in);
    fclose(w);
    char want[64];
    snprintf(want, sizeof want, "note2.fit:%ld: 'fixed' note of 257 bytes, longer than 255", at);
    tps_err_clear(&e);
    CHECK(at > 0 && tps_fitfile_read(p4, &c, &e) == -1 && strstr(e.msg, want), "long note: %s", e.msg);
    a.fixed_note[0] = 0;
  }
  /* bad files: one message naming file and line */
  int rc;
  const char *m;
  m = bad("nofmt.fit", "kind\tsplit\n", &rc);
  CHECK(rc == -1 && strstr(m, "nofmt.fit:1:") && strstr(m, "not a tpsplit fit file"), "no format: %s", m);
  m = bad("ver.fit", "# c\nformat\ttpsplit-fit\t2\n", &rc);
  CHECK(rc == -1 && strstr(m, "ver.fit:2:") && strstr(m, "version"), "version: %s", m);
  m = bad("key.fit", "format\ttpsplit-fit\t1\nkind\tsplit\nbogus\t1\n", &rc);
  CHECK(rc == -1 && strstr(m, "key.fit:3:") && strstr(m, "unknown key 'bogus'"), "unknown key: %s", m);
  m = bad("num.fit", "format\ttpsplit-fit\t1\ngemm\ttflops\t8x\n", &rc);
  CHECK(rc == -1 && strstr(m, "num.fit:2:") && strstr(m, "8x"), "bad number: %s", m);
  m = bad("path.fit", "format\ttpsplit-fit\t1\npath\tfoo\n", &rc);
  CHECK(rc == -1 && strstr(m, "path.fit:2:") && strstr(m, "unknown kernel path"), "path: %s", m);
  m = bad("cov.fit", "format\ttpsplit-fit\t1\nparam\ttflops\t80\t1\t78\t82\ncov\t0\t1\t2\n", &rc);
  CHECK(rc == -1 && strstr(m, "cov.fit:3:") && strstr(m, "cov row"), "cov: %s", m);
  m = bad("empty.fit", "", &rc);
  CHECK(rc == -1 && strstr(m, "empty.fit") && strstr(m, "empty"), "empty: %s", m);
  /* a saved fit with a non-positive throughput: the whole file reads, the model check fails */
  {
    char path2[600], line[8192];
    snprintf(path2, sizeof path2, "%s/neg.fit", dir);
    FILE *in = fopen(out, "r"), *w = fopen(path2, "w");
    while (fgets(line, sizeof line, in)) {
      if (strncmp(line, "gemm\ttflops\t", 12) == 0) fputs("gemm\ttflops\t-5\n", w);
      else if (strncmp(line, "param\ttflops\t", 13) == 0) fputs("param\ttflops\t-5\t1\t-7\t-3\n", w);
      else fputs(line, w);
    }
    fclose(in);
    fclose(w);
    static tps_fit c;
    tps_err_clear(&e);
    CHECK(tps_fitfile_read(path2, &c, &e) == -1 && strstr(e.msg, "neg.fit") && strstr(e.msg, "domain"), "neg: %s", e.msg);
  }
  char cmd[1200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) printf("could not remove %s\n", dir);
  printf("%s\n", fails ? "FAILED" : "ok");
  return fails ? 1 : 0;
}
