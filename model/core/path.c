/* path.c: the one list of GEMM kernel paths and its lookups.  See path.h.  Each path is a
 * file of its own, model/core/paths/<name>.c, listed in MODEL_PATHS (Makefile.am): the
 * build writes model/core/paths.def from that list, which gives the ids (path.h) and the
 * table below, in the list's order.  The priors and their sources: model/core/paths/README. */
#include "model/core/path.h"
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The one list, in the order of MODEL_PATHS (Makefile.am; the build writes paths.def from it). */
const tps_path *const tps_paths[TPS_NPATHS + 1] = {
#define TPS_PATH(name, NAME) [TPS_PATH_##NAME] = &tps_path_##name,
#include "model/core/paths.def"
#undef TPS_PATH
  [TPS_NPATHS] = NULL};

static int has_alias(const char *aliases, const char *name) {
  size_t n = strlen(name);
  for (const char *a = aliases; a && *a;) {
    while (*a == ' ') a++;
    size_t l = strcspn(a, " ");
    if (l && l == n && strncasecmp(a, name, n) == 0) return 1;
    a += l;
  }
  return 0;
}

const tps_path *tps_path_find(const char *name) { return tps_path_find_for(name, 0); }

const tps_path *tps_path_find_for(const char *name, unsigned flags) {
  if (!name) return NULL;
  for (size_t i = 0; tps_paths[i]; i++)
    if (strcasecmp(tps_paths[i]->name, name) == 0 || has_alias(tps_paths[i]->aliases, name))
      return (tps_paths[i]->flags & flags) == flags ? tps_paths[i] : NULL;
  return NULL;
}

const tps_path *tps_path_get(int id) { return id >= 0 && id < TPS_NPATHS ? tps_paths[id] : NULL; }

const tps_path *tps_path_by_aic_dtype(const char *dtype) {
  for (int i = 0; dtype && dtype[0] && i < TPS_NPATHS; i++)
    if ((tps_paths[i]->flags & TPS_PATH_F_MODEL) && !strcmp(tps_paths[i]->aic_dtype, dtype)) return tps_paths[i];
  return NULL;
}

const char *tps_path_record_name(const tps_path *p) { return p && p->record_as ? p->record_as : p ? p->name : "?"; }

double tps_path_peak_tflops(const tps_path *p, const tps_gpu *g) {
  if (!p || !g) return 0;
  return p->fp4_peak ? g->fp4_tflops : p->fp8_peak ? g->fp8_tflops : g->bf16_tflops;
}

const char *tps_path_peak_name(const tps_path *p) { return p && p->fp4_peak ? "fp4" : p && p->fp8_peak ? "fp8" : "bf16"; }

const char *tps_path_name(int id) { return id >= 0 && id < TPS_NPATHS ? tps_paths[id]->name : "?"; }

unsigned long tps_path_select(unsigned flags, const tps_path **out, unsigned long max) {
  unsigned long n = 0;
  for (size_t i = 0; tps_paths[i] && n < max; i++)
    if ((tps_paths[i]->flags & flags) == flags) out[n++] = tps_paths[i];
  return n;
}

const char *tps_path_names(unsigned flags, char *buf, unsigned long bufsz) {
  if (!buf || !bufsz) return buf;
  buf[0] = 0;
  size_t used = 0;
  for (size_t i = 0; tps_paths[i]; i++) {
    if ((tps_paths[i]->flags & flags) != flags) continue;
    int w = snprintf(buf + used, bufsz - used, "%s%s", used ? ", " : "", tps_paths[i]->name);
    if (w < 0 || (size_t)w >= bufsz - used) break;
    used += (size_t)w;
  }
  return buf;
}

const char *tps_path_unknown(const char *name, unsigned flags, char *buf, unsigned long bufsz) {
  if (!buf || !bufsz) return buf;
  char names[256];
  tps_path_names(flags, names, sizeof names);
  const tps_path *p = tps_path_find_for(name, 0);
  if (!p) {
    snprintf(buf, bufsz, "unknown kernel path '%s' (one of: %s)", name ? name : "", names);
  } else {
    unsigned lack = flags & ~p->flags;
    const char *what = lack & TPS_PATH_F_MODEL ? "has no model" : "cannot be benchmarked";
    const char *has = p->flags & TPS_PATH_F_MODEL ? "model only" : p->flags & TPS_PATH_F_BENCH ? "bench only" : "listed only";
    snprintf(buf, bufsz, "kernel path '%s' %s (%s; one of: %s)", p->name, what, has, names);
  }
  return buf;
}
