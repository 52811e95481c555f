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
  printf("w8plan: %d + %d config lines of the H100 tables\n", n1, n2);
  tps_gpus_free(&gt);
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}
