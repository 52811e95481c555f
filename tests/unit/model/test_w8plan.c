/* test_w8plan.c: the W8A16 dispatch rule (model/core/w8plan.c), asked with a GPU's SM count alone
 * (the latency model's view), picks the kernel, token tile, split-K (or stream-K grid) and
 * whole-wave head that the kernels ran on a lent H100: the '# config M=...' lines that
 * tpsplit bench wrote into data/h100_w8a16_grid_<K>x<N>_w8a16.tsv on the device (issue 28
 * item 3: the model follows the new dispatch).  The expected values are parsed from the
 * device's text here, not produced by the code under test.  Also: the rule's modelled times
 * are positive and finite where it models them, and invalid input is refused. */
#include "config.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_multifit.h>
#include "model/core/w8plan.h"
#include "src/base/util.h"
#include "src/io/gpus.h"
#include "tests/unit/expect.h"

typedef struct { int kind, bt, splits, head; } want;

/* one launch's text ("w8a16 split: 128 weight rows x 64 tokens per block, cluster split-K 2, ...") */
static int parse_launch(const char *s, want *w) {
  memset(w, 0, sizeof *w);
  w->kind = -1;
  for (int k = 0; k < TPS_W8P_NKIND; k++) {
    char pre[32];
    snprintf(pre, sizeof pre, "w8a16 %s:", tps_w8p_kind_names[k]);
    if (!strncmp(s, pre, strlen(pre))) w->kind = k;
  }
  const char *p;
  if (w->kind == TPS_W8P_WGMMA) {
    if ((p = strstr(s, " x ")) == NULL || sscanf(p, " x %d tokens", &w->bt) != 1) return -1;
    w->splits = 1;
  } else if (w->kind >= 0) {
    if ((p = strstr(s, "rows x ")) == NULL || sscanf(p, "rows x %d tokens", &w->bt) != 1) return -1;
    if (w->kind == TPS_W8P_SK) {
      if ((p = strstr(s, "persistent grid of ")) == NULL || sscanf(p, "persistent grid of %d", &w->splits) != 1) return -1;
    } else if ((p = strstr(s, "split-K ")) == NULL || sscanf(p, "split-K %d", &w->splits) != 1) return -1;
  } else return -1;
  return 0;
}

static int same(const tps_w8_pick *p, const want *w) {
  return (int)p->kind == w->kind && p->bt == w->bt && p->splits == w->splits;
}

static void check_table(const char *name, int sms, long n, long k, int *ncases) {
  char path[4096];
  tps_err e;
  if (tps_data_path(name, path, sizeof path, &e)) { CHECK(0, "%s: %s", name, e.msg); return; }
  FILE *fp = fopen(path, "r");
  CHECK(fp != NULL, "cannot open %s", path);
  if (!fp) return;
  char line[1024];
  tps_w8_geom g;
  tps_w8_geom_default(&g, sms, (int)n, (int)k);
  while (fgets(line, sizeof line, fp)) {
    int m, at = 0;
    if (sscanf(line, "# config M=%d: %n", &m, &at) != 1 || at == 0) continue;
    line[strcspn(line, "\n")] = 0;
    const char *txt = line + at, *then = strstr(txt, "; then ");
    want w, rest;
    int head = 0;
    CHECK(parse_launch(txt, &w) == 0, "%s M=%d: cannot read '%s'", name, m, txt);
    if (then) {
      const char *h = strstr(txt, " rows); then");
      const char *o = h;
      while (o > txt && o[-1] != '(') o--;
      head = atoi(o);
      const char *r = strstr(then, "rows: ");
      CHECK(r && parse_launch(r + 6, &rest) == 0, "%s M=%d: cannot read the second launch", name, m);
    }
    tps_w8_pick p;
    CHECK(tps_w8_pick_default(&g, m, &p) == 0, "%s M=%d: refused", name, m);
    CHECK(same(&p, &w) && p.head == head, "%s M=%d: the rule picks %s %d tokens split/grid %d head %d; the H100 ran %s %d, %d, head %d",
          name, m, tps_w8p_kind_names[p.kind], p.bt, p.splits, p.head, w.kind >= 0 ? tps_w8p_kind_names[w.kind] : "?", w.bt,
          w.splits, head);
    if (p.kind != TPS_W8P_STREAM) CHECK(isfinite(p.us) && p.us > 0, "%s M=%d: modelled %g us", name, m, p.us);
    if (head > 0 && p.head == head) {
      tps_w8_pick q;
      CHECK(tps_w8_pick_default(&g, m - head, &q) == 0 && same(&q, &rest), "%s M=%d: the rest (%d rows) picks %s %d %d; the H100 ran %s %d %d",
            name, m, m - head, tps_w8p_kind_names[q.kind], q.bt, q.splits, rest.kind >= 0 ? tps_w8p_kind_names[rest.kind] : "?", rest.bt,
            rest.splits);
    }
    (*ncases)++;
  }
  fclose(fp);
}

/* sk2_time's refit (tps_w8_sk2_coef(1, ...)) re-derived here from the measurements it was fitted
 * to: the forced 256-token stream-K form (TPS_W8_KERNEL=sk TPS_W8_BT=256, the "forced" column of
 * data/h100_w8a16_sk256.txt's call 2, and K 5120 N 1792 16384 rows of data/h100_w8a16_s30.txt),
 * each point's terms from the rule that ran it (the first fit's whole-wave counts), the piece
 * and share terms held at the refit's values, the chunk and fixed terms by GSL's linear least
 * squares; points whose stream-K part keeps more than 49 MB live (the L2 case: K 7168 2304 rows,
 * 49.6 MB, measured 20% over any line) left out. */
typedef struct { int k, n, m; double us; } sk2pt;
static int read_sk2_points(sk2pt *pt, int cap) {
  char path[4096], line[1024];
  tps_err e;
  int np = 0;
  if (tps_data_path("h100_w8a16_sk256.txt", path, sizeof path, &e)) { CHECK(0, "sk256 data: %s", e.msg); return 0; }
  FILE *fp = fopen(path, "r");
  CHECK(fp != NULL, "cannot open %s", path);
  if (!fp) return 0;
  int call2 = 0;
  while (fgets(line, sizeof line, fp)) {
    if (!strncmp(line, "# call 2:", 9)) call2 = 1;
    int k, n, m;
    char c3[32], c4[32], c5[32], c6[32];
    if (!call2 || sscanf(line, "%d %d\t%d\t%31s\t%31s\t%31s\t%31s", &k, &n, &m, c3, c4, c5, c6) != 7 || !strcmp(c5, "-")) continue;
    if (np < cap) pt[np++] = (sk2pt){k, n, m, atof(c5)};
  }
  fclose(fp);
  if (tps_data_path("h100_w8a16_s30.txt", path, sizeof path, &e)) { CHECK(0, "s30 data: %s", e.msg); return np; }
  fp = fopen(path, "r");
  CHECK(fp != NULL, "cannot open %s", path);
  if (!fp) return np;
  int next = 0;
  while (fgets(line, sizeof line, fp)) {
    int m;
    double us;
    if (next && sscanf(line, "%d\t%lf", &m, &us) == 2 && np < cap) pt[np++] = (sk2pt){5120, 1792, m, us};
    next = !strncmp(line, "== 5120x1792 sk256 w8a16:", 25);
  }
  fclose(fp);
  return np;
}
static void check_sk2_refit(void) {
  sk2pt pt[64];
  const int np = read_sk2_points(pt, 64);
  const tps_w8_sk2c *c1 = tps_w8_sk2_coef(1);
  double x[64][2], y[64];
  int n = 0;
  for (int i = 0; i < np; i++) {
    tps_w8_geom g;
    tps_w8_geom_default(&g, 132, pt[i].n, pt[i].k);
    g.sk2fit = 0;
    g.sk_even = 0; /* the points ran on every resident block (the dispatch before the even grids) */
    const int grid = tps_w8_sk_grid(&g, pt[i].m, 256), dpw = tps_w8_sk_dpw(&g, pt[i].m, grid);
    tps_w8_sk2_term t;
    if (tps_w8_sk2_terms(&g, pt[i].m, grid, dpw, &t) || t.live_bytes > 49e6) continue;
    x[n][0] = t.most;
    x[n][1] = 1;
    y[n] = pt[i].us - c1->shared_us * t.share - c1->piece_us * t.pieces;
    n++;
  }
  CHECK(np == 27 && n == 26, "sk2 refit: %d points read (want 27), %d used (want 26)", np, n);
  if (n < 3) return;
  gsl_matrix *X = gsl_matrix_alloc(n, 2), *cov = gsl_matrix_alloc(2, 2);
  gsl_vector *Y = gsl_vector_alloc(n), *c = gsl_vector_alloc(2);
  gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(n, 2);
  for (int i = 0; i < n; i++) {
    gsl_matrix_set(X, i, 0, x[i][0]);
    gsl_matrix_set(X, i, 1, x[i][1]);
    gsl_vector_set(Y, i, y[i]);
  }
  double chisq;
  CHECK(gsl_multifit_linear(X, Y, c, cov, &chisq, w) == 0, "sk2 refit: least squares failed");
  const double a = gsl_vector_get(c, 0), b = gsl_vector_get(c, 1);
  CHECK(fabs(a - c1->chunk_us) < 5e-4 && fabs(b - c1->fixed_us) < 5e-3,
        "sk2 refit: least squares gives %.4f us a chunk + %.3f us, the rule has %.4f + %.3f", a, b, c1->chunk_us, c1->fixed_us);
  gsl_multifit_linear_free(w);
  gsl_matrix_free(X);
  gsl_matrix_free(cov);
  gsl_vector_free(Y);
  gsl_vector_free(c);
}

int main(void) {
  tps_gpu_table gt;
  tps_err e;
  char gp[4096];
  if (tps_data_path("gpus.tsv", gp, sizeof gp, &e) || tps_gpus_load(gp, &gt, &e)) { printf("gpus: %s\n", e.msg); return 1; }
  const tps_gpu *h100 = tps_gpus_find(&gt, "H100-SXM", &e);
  CHECK(h100 && h100->sms == 132, "H100-SXM: %s", h100 ? "not 132 SMs" : e.msg);
  const int sms = h100 ? h100->sms : 132;
  int n1 = 0, n2 = 0;
  check_table("h100_w8a16_grid_5120x1792_w8a16.tsv", sms, 1792, 5120, &n1);
  check_table("h100_w8a16_grid_7168x2112_w8a16.tsv", sms, 2112, 7168, &n2);
  CHECK(n1 >= 25 && n2 >= 25, "config lines read: %d and %d", n1, n2);
  /* invalid input */
  tps_w8_geom g;
  tps_w8_pick p;
  tps_w8_geom_default(&g, 132, 1792, 5120);
  CHECK(tps_w8_pick_default(&g, 0, &p) != 0, "0 rows accepted");
  CHECK(tps_w8_pick_default(NULL, 8, &p) != 0, "no geometry accepted");
  /* no stream-K kernel (not built): never picked */
  g.sk_blocks = 0;
  int sk = 0;
  for (int m = 65; m <= 4096; m += 61)
    if (tps_w8_pick_default(&g, m, &p) == 0 && p.kind == TPS_W8P_SK) sk++;
  CHECK(sk == 0, "stream-K picked %d times without its workspace", sk);
  /* the 256-token stream-K partition (tps_w8_sk2_bounds): every block's range non-empty and in
   * order from the end of the whole waves to the last iteration; the busiest block within
   * 1.5 chunks of the weighted work's even share (half-row tiles at 5/8 of a chunk), or of one
   * chunk past the most whole-wave work of a block (N 320 on 3 blocks: one block gets every
   * half tile) */
  {
    static const int shapes[][2] = {{1792, 5120}, {2112, 7168}, {256, 512}, {320, 1024}, {256, 3072}};
    static const int grids[] = {1, 3, 7, 13, 50, 132};
    int bad = 0, cases = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
      for (int m = 1; m <= 16384; m = m < 64 ? m + 37 : m * 5 / 4 + 1)
        for (size_t gi = 0; gi < sizeof grids / sizeof *grids; gi++) {
          tps_w8_geom q;
          tps_w8_geom_default(&q, 132, shapes[s][0], shapes[s][1]);
          q.sk_grid_max = grids[gi];
          const int grid = tps_w8_sk_grid(&q, m, 256), dpw = tps_w8_sk_dpw(&q, m, grid);
          const int nrb = (shapes[s][0] + 127) / 128, C = shapes[s][1] / 64, rem = shapes[s][0] % 128;
          const long long tiles = (long long)nrb * ((m + 255) / 256), iters = tiles * C;
          int bnd[TPS_W8_SK2_MAXG + 1];
          const double most = tps_w8_sk2_bounds(&q, m, grid, dpw, bnd);
          double total = 0, dpmax = 0; /* the share, and the most whole-wave work of one block (no stream-K part can lower it) */
#define COST(t) ((rem > 0 && rem <= 64 && (t) % nrb == nrb - 1 ? 5.0 / 8 : 1.0) * C)
          for (long long t = 0; t < tiles; t++) total += COST(t);
          for (int b = 0; b < grid; b++) {
            double d = 0;
            for (long long w = 0; w < dpw; w++) d += COST(w * grid + b);
            if (d > dpmax) dpmax = d;
          }
#undef COST
          const double share = total / grid > dpmax + 1 ? total / grid : dpmax + 1;
          /* an even grid (tiles x p, no whole waves first): exactly C / p iterations a block, not weighted */
          const int even = dpw == 0 && grid % tiles == 0 && grid / tiles <= 8 && C % (grid / tiles) == 0 ? (int)(grid / tiles) : 0;
          CHECK(tps_w8_sk_even(&q, m, grid) == even, "N %d K %d M %d grid %d: even %d, want %d", shapes[s][0], shapes[s][1], m,
                grid, tps_w8_sk_even(&q, m, grid), even);
          int ok = most > 0 && bnd[0] == (long long)dpw * grid * C && bnd[grid] == iters && (even || most <= share + 1.5);
          for (int b = 0; b < grid; b++) ok = ok && bnd[b] < bnd[b + 1] && (!even || bnd[b + 1] - bnd[b] == C / even);
          if (!ok && bad++ < 5)
            printf("sk2 bounds: N %d K %d M %d grid %d dpw %d: most %.2f of share %.2f, bnd[0] %d bnd[grid] %d\n", shapes[s][0],
                   shapes[s][1], m, grid, dpw, most, total / grid, bnd[0], bnd[grid]);
          cases++;
        }
    CHECK(bad == 0, "256-token stream-K partition: %d of %d cases wrong", bad, cases);
  }
  /* the refit of the 256-token stream-K form's time (sk2fit 1): its picks differ from the first fit's
   * where the forced form measured faster (data/h100_w8a16_sk256.txt call 2, data/h100_w8a16_s30.txt):
   * K 5120 N 1792 at 768 rows (split 36.6 us, forced 32.9) and 16384 rows (wgmma 415.0, forced 378.3);
   * the 128-row stream kernel's M are untouched */
  for (int fit = 0; fit < 2; fit++) {
    static const int ms[] = {64, 768, 16384};
    static const tps_w8p_kind first[] = {TPS_W8P_STREAM, TPS_W8P_SPLIT, TPS_W8P_WGMMA};
    for (size_t i = 0; i < 3; i++) {
      tps_w8_geom q;
      tps_w8_geom_default(&q, 132, 1792, 5120);
      q.sk2fit = fit;
      const int rc = tps_w8_pick_default(&q, ms[i], &p);
      const tps_w8p_kind want_kind = fit && i ? TPS_W8P_SK : first[i];
      CHECK(rc == 0 && p.kind == want_kind && (p.kind != TPS_W8P_SK || p.bt == 256), "sk2fit %d, M %d: picked %s %d, want %s", fit,
            ms[i], rc ? "nothing" : tps_w8p_kind_names[p.kind], p.bt, tps_w8p_kind_names[want_kind]);
    }
  }
  /* the even tail (sk_tail = p, forced): after dpw whole waves the tiles left, each cut into p pieces of K/64/p
   * chunks on blocks 0 .. left x p - 1, the blocks after them empty; refused (0: the weighted partition) where
   * left x p exceeds the grid, p does not divide K/64 or no whole wave runs first.  K 7168 N 2112 (17 row blocks,
   * 112 chunks) at 4096 rows: 272 tiles on 132 blocks, 2 waves, 8 tiles left */
  {
    tps_w8_geom q;
    tps_w8_geom_default(&q, 132, 2112, 7168);
    static const struct { int m, dpw, p, want; } tc[] = {{4096, 2, 16, 16}, {4096, 2, 14, 14}, {4096, 2, 17, 0}, {4096, 2, 32, 0},
                                                           {3072, 1, 1, 1},   {3072, 1, 2, 0},   {4096, 1, 1, 0},  {4096, 0, 2, 0}, {6144, 3, 8, 8}};
    for (size_t i = 0; i < sizeof tc / sizeof *tc; i++) {
      q.sk_tail = tc[i].p;
      const int got = tps_w8_sk_tail(&q, tc[i].m, 132, tc[i].dpw);
      CHECK(got == tc[i].want, "sk_tail %d at M %d, %d waves: %d, want %d", tc[i].p, tc[i].m, tc[i].dpw, got, tc[i].want);
      CHECK(tps_w8_sk_cut(&q, tc[i].m, 132, tc[i].dpw) == (tc[i].dpw > 0 ? tc[i].want : 0), "sk_cut at M %d, %d waves", tc[i].m, tc[i].dpw);
      if (got <= 0) continue;
      int bnd[TPS_W8_SK2_MAXG + 1];
      const int C = 112, tiles = 17 * ((tc[i].m + 255) / 256), base = tc[i].dpw * 132 * C, left = tiles - tc[i].dpw * 132;
      const double most = tps_w8_sk2_bounds(&q, tc[i].m, 132, tc[i].dpw, bnd);
      int ok = bnd[0] == base && bnd[132] == tiles * C;
      for (int b = 0; b < 132; b++)
        ok = ok && bnd[b + 1] - bnd[b] == (b < left * got ? C / got : 0);
      /* the busiest block: its whole-wave tiles (the 17th row block's at 5/8 of a chunk) and one piece */
      CHECK(ok && most >= tc[i].dpw * C * 5.0 / 8 && most <= tc[i].dpw * C + C / got, "sk_tail %d at M %d: bounds wrong (most %.1f)",
            tc[i].p, tc[i].m, most);
    }
  }
  /* on an even grid (no whole waves) the cut is the grid's pieces: K 5120 N 1792, 1024 rows = 56 tiles on 112 blocks */
  {
    tps_w8_geom q;
    tps_w8_geom_default(&q, 132, 1792, 5120);
    CHECK(tps_w8_sk_cut(&q, 1024, 112, 0) == 2 && tps_w8_sk_cut(&q, 1024, 132, 0) == 0, "sk_cut on an even grid");
  }
  check_sk2_refit();
  printf("w8plan: %d + %d config lines of the H100 tables\n", n1, n2);
  tps_gpus_free(&gt);
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}
