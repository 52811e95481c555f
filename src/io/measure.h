/* measure.h: the one measurement loader.  Every file tpsplit reads for measured numbers
 * (predict, crossover, plot, simulate, decide, calibrate, validate, inspect, fit) comes in
 * here: its bytes are read once through the bounded input path (src/base/util.h: the 64 MiB
 * cap, a pipe's or FIFO's timeout), each registered format's sniffer is asked in turn, and
 * the first that claims the bytes reads them into one normalized record, tps_meas.
 *
 * The formats and their order: IO_FORMATS in Makefile.am, one line per format (its file in
 * src/io, which defines `const tps_format tps_format_<FILE>`); the build writes
 * src/io/formats.def from it, one TPS_FORMAT(<FILE>) line each.  Registered now, in sniffing
 * order: fitfile (tpsplit's JSON fit files; the old positional text form is claimed to be
 * refused with a message), ncclt_json (nccl-tests -J), aic (AIConfigurator GEMM/NCCL tables,
 * gzip or plain), ncclt (nccl-tests text logs, tpsplit bench allgather logs), table (our
 * TSV: split, GEMM, all-gather tables, the H20 seed table; it takes what no other claims,
 * so it stays last).  Recipe for a new format: doc/extending.md. */
#ifndef TPS_MEASURE_H
#define TPS_MEASURE_H
#include <stddef.h>
#include "src/base/err.h"
#include "src/io/aic.h"
#include "src/io/fitfile.h"
#include "src/io/table.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TPS_MEAS_TABLE = 1, TPS_MEAS_AIC, TPS_MEAS_FIT } tps_meas_kind;

/* The normalized record.  kind says which member holds the data:
 *  TABLE  tab: split, GEMM or all-gather points with their metadata and provenance (an
 *         nccl-tests log, text or JSON, normalized to an all-gather table; tab.log_gather: a
 *         bench allgather log's "# Gather: X" backend, tab.source "nccl-tests" or "tsv");
 *  AIC    aic: an AIConfigurator table, the rows the selection keeps (every row without one);
 *  FIT    fit: a tpsplit fit (models, not points: accepted where a fit stands for a part). */
typedef struct {
  const char *format;  /* the name of the format that read it (its file: "table", "ncclt", ...) */
  tps_meas_kind kind;
  tps_table tab;
  tps_aic_file aic;
  tps_fit *fit;        /* malloc'ed */
} tps_meas;

/* One input format: what a file of src/io registers. */
typedef struct {
  const char *name;
  tps_meas_kind kind;  /* what its reader makes */
  /* 1 when data[0..len) is of this format: a look, no error, no allocation kept. */
  int (*sniff)(const char *data, size_t len);
  /* Read data[0..len) into m (set m->kind and its member); 0, or -1 with e naming FILE:LINE.
   * sel: an AIConfigurator row selection (NULL: none); other formats ignore it. */
  int (*read)(const char *path, const char *data, size_t len, const tps_aic_filter *sel, tps_meas *m, tps_err *e);
} tps_format;

/* Read path (sel: NULL or an AIConfigurator selection) into m.  0, or -1 with e. */
int tps_meas_load(const char *path, const tps_aic_filter *sel, tps_meas *m, tps_err *e);
/* The same from bytes in memory (path names them in messages): the fuzzing entry point. */
int tps_meas_load_mem(const char *path, const char *data, size_t len, const tps_aic_filter *sel, tps_meas *m,
                      tps_err *e);
/* "FILE[:key=value,...]" (the AIConfigurator selection syntax, src/io/aic.h) read as above. */
int tps_meas_load_spec(const char *spec, tps_meas *m, tps_err *e);
void tps_meas_free(tps_meas *m);
/* An AIConfigurator table read through the loader (as tps_table_read does for tables): path
 * with the selection sel (NULL: none), its record moved into *out.  -1 with e when the file
 * is unreadable, malformed, or another format ("... is not an AIConfigurator table"). */
int tps_meas_load_aic(const char *path, const tps_aic_filter *sel, tps_aic_file *out, tps_err *e);
/* For a format's read: m made a table record of path (tps_table_init, kind TPS_MEAS_TABLE,
 * path copied): the table, or NULL with e when out of memory. */
tps_table *tps_meas_table(tps_meas *m, const char *path, tps_err *e);
/* The kind of record the file of spec ("FILE[:selection]") would give, by the one sniffer
 * (the file read bounded; a pipe's bytes are kept for the real read), 0 when unreadable.
 * A spec with a selection whose file cannot be read is taken as AIConfigurator's. */
tps_meas_kind tps_meas_sniff_spec(const char *spec);
/* The registered formats, in sniffing order (NULL after the last). */
const tps_format *tps_meas_format(size_t i);
/* The format that claims data[0..len) (never NULL: the last, our TSV, takes anything). */
const tps_format *tps_meas_sniff(const char *data, size_t len);

#ifdef __cplusplus
}
#endif
#endif
