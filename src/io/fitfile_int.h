/* fitfile_int.h: what the writer (fitfile.c) and the reader (fitfile_read.c) of the fit file
 * share: the names of the all-gather fields and stats, in the order they are written. */
#ifndef TPS_FITFILE_INT_H
#define TPS_FITFILE_INT_H
#include <stddef.h>
#include "model/fit/fit.h"

typedef struct {
  char name[32];
  double *v;
} tps_fitfile_field;
/* The all-gather fields after "ranks" and "ranks_per_node", pointing into f; their count. */
size_t tps_fitfile_ag_fields(tps_fit *f, tps_fitfile_field *out);
#define TPS_FITFILE_NSTAT 11
extern const char *const tps_fitfile_stat_names[TPS_FITFILE_NSTAT];
/* The stats in tps_fitfile_stat_names order: whole numbers through wi, the others through wd. */
void tps_fitfile_stats(tps_fit *f, int *wi[TPS_FITFILE_NSTAT], double *wd[TPS_FITFILE_NSTAT]);
/* 1 when data[0..len) is a fit file of the old positional text form (version 1). */
int tps_fitfile_sniff_old(const char *data, size_t len);
#endif
