/* fuzz_thresholds.c: thresholds files (src/io/thresholds_read.c tps_thr_read_mem), with the
 * write/read round trip: a file the reader accepts, written back by tps_thr_to_json, must read
 * again, and writing that gives the same bytes (the writer's form is a fixed point: every field
 * the reader keeps is written, every field written is read).  Seeds: the thresholds files of
 * data/calibrate/ and the golden thresholds outputs (tests/data/golden). */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "src/io/thresholds.h"
#include "tests/fuzz/fuzz.h"

/* the entries' numbers and provenance kinds the reader keeps must survive a write and a read;
 * matched by device key and entry key (shape, path, TP, backend): JSON objects are unordered and
 * the writer sorts the keys, so a file in another key order reads back in the writer's order
 * (the fuzzer's crash-880c0e02: TP "4" before "3") */
static void same_entries(const tps_thr_file *a, const tps_thr_file *b) {
  if (a->ndev != b->ndev) abort();
  for (size_t d = 0; d < a->ndev; d++) {
    const tps_thr_device *x = &a->dev[d], *y = NULL;
    for (size_t j = 0; j < b->ndev && !y; j++)
      if (!strcmp(b->dev[j].key, x->key)) y = &b->dev[j];
    if (!y || x->nentries != y->nentries) {
      fprintf(stderr, "device %s: %s after a write and a read\n", x->key, y ? "another entry count" : "gone");
      abort();
    }
    for (size_t i = 0; i < x->nentries; i++) {
      const tps_thr_entry *p = &x->e[i], *q = tps_thr_find(y, p->k, p->n, p->path, p->tp, p->backend);
#define SAME(c) do { if (!(c)) { fprintf(stderr, "device %s entry %ldx%ld path %d TP %d backend %d: %s changed by a write and a read\n", x->key, p->k, p->n, p->path, p->tp, p->backend, #c); abort(); } } while (0)
      SAME(q != NULL);
      SAME(p->split_from == q->split_from);
      SAME(p->max_tokens == q->max_tokens);
      SAME(p->nbands == q->nbands);
      SAME(p->gemm.kind == q->gemm.kind && p->gather.kind == q->gather.kind && p->gemm.harness == q->gemm.harness);
      SAME(p->gemm.points == q->gemm.points);
      SAME(!strcmp(p->gemm.source, q->gemm.source));
      SAME(!strcmp(p->gather.from_gpus, q->gather.from_gpus));
#undef SAME
      /* doubles: written with 17 digits, read back exactly (NaN stands for null) */
      const double u[] = {p->breakeven, p->lo, p->hi, p->out_bytes_per_token}, v[] = {q->breakeven, q->lo, q->hi, q->out_bytes_per_token};
      for (int k = 0; k < 4; k++)
        if (!(u[k] == v[k] || (u[k] != u[k] && v[k] != v[k]))) abort();
    }
  }
}

static char *dump(const tps_thr_file *f) {
  json_t *j = tps_thr_to_json(f);
  if (!j) return NULL;
  char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
  json_decref(j);
  return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  tps_thr_file a, b, c;
  tps_err e;
  tps_err_clear(&e);
  if (tps_thr_read_mem("x.json", (const char *)data, size, &a, &e) != 0) return 0;
  char *s1 = dump(&a);
  if (!s1) abort();
  tps_err_clear(&e);
  if (tps_thr_read_mem("written.json", s1, strlen(s1), &b, &e) != 0) {
    fprintf(stderr, "a thresholds file tpsplit wrote does not read back: %s\n", e.msg);
    abort();
  }
  same_entries(&a, &b);
  tps_thr_free(&a);
  char *s2 = dump(&b);
  tps_thr_free(&b);
  if (!s2) abort();
  tps_err_clear(&e);
  if (tps_thr_read_mem("written2.json", s2, strlen(s2), &c, &e) != 0) abort();
  tps_thr_free(&c);
  if (strcmp(s1, s2) != 0) {
    fprintf(stderr, "write(read(write(read(x)))) differs from write(read(x))\n");
    abort();
  }
  free(s1);
  free(s2);
  return 0;
}
