/* cmdopt.h: the one option parser of tpsplit's commands, table-driven.
 *
 * A command describes itself once (tps_cmdspec): its name, synopsis, a paragraph, which of
 * the common options it takes (TPS_OPT_*: the same name, argument, range, message and help
 * line in every command) and its own options (tps_cmdopt, each parsed into a typed
 * destination).  tps_cmdopt_parse() runs getopt_long over both, answers -h/--help and
 * -V/--version, rejects unknown options, missing values, out-of-range numbers and stray
 * arguments with one line "tpsplit: CMD: ..." (exit 2), and generates the --help text:
 * usage, paragraph, options with their defaults, the command's notes, the environment
 * variables it reads (src/cli/envvars.h) and its exit status. */
#ifndef TPS_CMDOPT_H
#define TPS_CMDOPT_H
#include <stddef.h>
#include <stdio.h>
#include "src/base/err.h"
#include "src/io/gpus.h"
#include "model/core/path.h"
#include "model/predict/predict.h"
#include "model/predict/uncertainty.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The common options, by index (tps_cmdspec.text[] and .dflt[]) and as bits (.common). */
enum {
  TPS_OI_GPU,       /* --gpu G           one target GPU */
  TPS_OI_GPUS,      /* --gpus LIST       target GPUs */
  TPS_OI_TP,        /* --tp N            one TP size */
  TPS_OI_TPS,       /* --tp LIST         TP sizes */
  TPS_OI_PATH,      /* --path P          one kernel path with a model */
  TPS_OI_PATHS,     /* --paths LIST      kernel paths with a model */
  TPS_OI_FIT,       /* --fit FIT         a reference fit (repeatable with TPS_CMDSPEC_FITS) */
  TPS_OI_SCALING,   /* --scaling S       of tps_cmdspec.scalings */
  TPS_OI_GATHER,    /* --gather B|[B=]FILE  a backend of tps_gathers, or a measured gather (repeatable) */
  TPS_OI_CAP,       /* --cap-bytes B     custom gather cap */
  TPS_OI_IB,        /* --ib-gbps X       inter-node bandwidth */
  TPS_OI_ROUND,     /* --round R         threshold rounding */
  TPS_OI_SAMPLES,   /* --samples N       bootstrap samples */
  TPS_OI_SEED,      /* --seed S          their seed */
  TPS_OI_GPUS_FILE, /* --gpus-file F     GPU table */
  TPS_OI_JSON,      /* --json */
  TPS_OI_OUTPUT,    /* -o, --output X    output file or folder */
  TPS_OI_GEMM,      /* --gemm FILE       a measured (or fitted) GEMM (repeatable) */
  TPS_OI_KDIM,      /* --k K             GEMM reduction size */
  TPS_OI_NDIM,      /* --n N             GEMM output width */
  TPS_OI_MEASURED_ONLY, /* --measured-only  no model outside a measured range */
  TPS_OI_NO_BUNDLED, /* --no-bundled    ignore data/parts.tsv: models and the user's files only */
  TPS_OI_HARNESS,   /* --harness H     GEMM parts in harness H (model/core/harness.h), converted */
  TPS_OI_THR_OUT,   /* --thresholds-out FILE  the answer also as an engine-facing thresholds file (src/io/thresholds.h) */
  TPS_OI_N
};
#define TPS_OPT(i) (1u << (i))
/* What a prediction is made from and how it is printed: the reference, the scaling, the GPU
 * table, JSON. */
#define TPS_OPTS_REF (TPS_OPT(TPS_OI_FIT) | TPS_OPT(TPS_OI_SCALING) | TPS_OPT(TPS_OI_GPUS_FILE) | TPS_OPT(TPS_OI_JSON))
/* Parts from measurements (scaling parts): --gemm, --gather files, --measured-only; and the
 * GEMM shape of the question. */
#define TPS_OPTS_PARTS \
  (TPS_OPT(TPS_OI_GEMM) | TPS_OPT(TPS_OI_GATHER) | TPS_OPT(TPS_OI_MEASURED_ONLY) | TPS_OPT(TPS_OI_NO_BUNDLED) | \
   TPS_OPT(TPS_OI_HARNESS))
#define TPS_OPTS_SHAPE (TPS_OPT(TPS_OI_KDIM) | TPS_OPT(TPS_OI_NDIM))
/* ... and the gather, threshold and bootstrap settings of a break-even (predict, crossover). */
#define TPS_OPTS_BREAKEVEN                                                                               \
  (TPS_OPTS_REF | TPS_OPT(TPS_OI_GATHER) | TPS_OPT(TPS_OI_CAP) | TPS_OPT(TPS_OI_IB) | TPS_OPT(TPS_OI_ROUND) | \
   TPS_OPT(TPS_OI_SAMPLES) | TPS_OPT(TPS_OI_SEED))

/* A command's own option: its argument is parsed into *dst by kind. */
typedef enum {
  TPS_ARG_FLAG,   /* no value: *(int *)dst = 1 */
  TPS_ARG_YESNO,  /* yes|no|on|off|1|0 into *(int *)dst; with optional, --name alone is yes */
  TPS_ARG_STR,    /* *(const char **)dst = the value */
  TPS_ARG_LIST,   /* repeatable: appended to *(tps_strlist *)dst */
  TPS_ARG_LONG,   /* *(long *)dst, in [min, max] */
  TPS_ARG_DOUBLE, /* *(double *)dst, > min (and <= max when max > min) */
  TPS_ARG_FN      /* parse(dst, value, why, whysz): 0, or -1 with why ("png, svg or pdf") */
} tps_arg_kind;

#define TPS_STRLIST_MAX 16
#define TPS_CMDOPT_MAXOWN 32      /* own options of one command, at most */
#define TPS_CMDOPT_BIG 1e15       /* a LONG range without an upper bound */
typedef struct {
  const char *v[TPS_STRLIST_MAX];
  size_t n;
} tps_strlist;

typedef struct {
  const char *name;      /* long name, without "--" */
  char shortopt;         /* 0 or a letter (-x) */
  tps_arg_kind kind;
  const char *metavar;   /* the value in --help ("T", "LIST"); NULL for flags */
  const char *help;      /* one sentence, wrapped by --help; without "(default", --help adds
                          * the destination's value (LONG, DOUBLE, a STR that is set) */
  void *dst;
  double min, max;       /* LONG and DOUBLE ranges (see tps_arg_kind) */
  int optional;          /* YESNO: the value may be left out */
  int required;          /* the command cannot run without it */
  int (*parse)(void *dst, const char *arg, char *why, size_t whysz); /* FN */
  int io;                /* STR, LIST: a file read (TPS_IO_IN) or written (TPS_IO_OUT), for tps_io_check */
} tps_cmdopt;
/* tps_cmdopt.io: the parser records the file for src/base/iocheck (no output replaces an input;
 * positional arguments and the common file options are recorded by the parser itself). */
enum { TPS_IO_NONE, TPS_IO_IN, TPS_IO_OUT };

#define TPS_CMDOPT_MAXTP 64

/* Values of the common options.  tps_cmdopt_init() sets the defaults below; a command may
 * change them before tps_cmdopt_parse() (its --help prints them). */
typedef struct {
  const char *gpu;                     /* --gpu, NULL when not given */
  char **gpus;                         /* --gpus names, NULL when not given */
  size_t ngpus;
  long tp;                             /* --tp N (0: none) */
  int tps[TPS_CMDOPT_MAXTP];           /* --tp LIST (a default set before parsing is replaced) */
  size_t ntps;
  const tps_path *path;                /* --path (default marlin-w8a16) */
  const tps_path *paths[TPS_NPATHS];   /* --paths (a default set before parsing is replaced) */
  size_t npaths;
  tps_strlist fits;                    /* --fit, in order */
  int scaling;                         /* TPS_SCALING_PARTS; --fit alone: TPS_SCALING_MODEL */
  tps_pred_opts po;                    /* --gather, --cap-bytes, --ib-gbps (tps_pred_opts_default) */
  long rounding;                       /* --round R: the threshold rounded up to a multiple of R; 0: as chosen */
  long samples;                        /* --samples, TPS_PRED_DEFAULT_SAMPLES */
  long seed;                           /* --seed, 1 */
  const char *gpus_file;               /* --gpus-file, NULL: the bundled table */
  int json;
  const char *output;                  /* -o, NULL unless set */
  tps_strlist gemms;                   /* --gemm FILE, in order */
  tps_strlist gathers;                 /* --gather [B=]FILE, in order */
  int backend_given;                   /* --gather B given; else po.backend is the one the B=FILE name */
  long k, n;                           /* --k, --n (TPS_PRED_DEFAULT_K, _N) */
  int measured_only;                   /* --measured-only */
  int no_bundled;                      /* --no-bundled */
  int harness;                         /* --harness: TPS_HARNESS_*, -1 (default): each part as measured */
  const char *thresholds_out;          /* --thresholds-out FILE, NULL unless set */
  int nargs;                           /* positional arguments (tps_cmdspec.args) */
  char **args;
  unsigned given;                      /* TPS_OPT(i) of the common options on the command line */
} tps_cmdopt_values;

typedef struct {
  const char *name;            /* "predict"; NULL for the main job (`tpsplit [options]`) */
  const char *synopsis;        /* after "Usage: tpsplit NAME " */
  const char *about;           /* what the command does (printed as given, lines of <= 80) */
  unsigned common;             /* TPS_OPT(TPS_OI_*) of the common options it takes */
  unsigned required;           /* of those, the ones it cannot do without */
  unsigned scalings;           /* bit s: TPS_SCALING s accepted (0: all) */
  long samples_min;            /* smallest --samples (0: 2) */
  int fits;                    /* --fit may be repeated */
  int fit_model_only;          /* --fit goes with --scaling model only */
  const char *args;            /* positional arguments ("FILE..."), NULL: none accepted */
  int args_min;                /* at least this many of them */
  int output_single;           /* -o goes with exactly one positional argument */
  const tps_cmdopt *opts;      /* its own options */
  size_t nopts;
  const char *text[TPS_OI_N];  /* help of a common option, instead of the generic one */
  const char *dflt[TPS_OI_N];  /* a default in words, where the generic help says one */
  const char *output_metavar;  /* the value of -o in --help ("DIR", "FILE") */
  const char *notes;           /* printed after the options (may be NULL) */
  const char *exit_status;     /* "0 ok; 1 ...; 2 usage or input error." */
} tps_cmdspec;

void tps_cmdopt_init(tps_cmdopt_values *v);
void tps_cmdopt_free(tps_cmdopt_values *v);
/* Parse argv (argv[0] is the command).  Returns -1 when the command should run; otherwise
 * the exit code to return at once: TPS_EXIT_OK after --help or --version, TPS_EXIT_USAGE
 * after a usage error (one line on stderr). */
int tps_cmdopt_parse(const tps_cmdspec *s, int argc, char **argv, tps_cmdopt_values *v);
/* "Environment:" and the variables read by cmd ("main": the main job; NULL: all of them),
 * from src/cli/envvars.h; nothing when cmd reads none. */
void tps_cmdopt_env_help(FILE *fp, const char *cmd);

/* Print text line by line, each as given when it fits 80 columns, else broken at its spaces
 * (the continuation under the help column of an option line, else indented as the line). */
void tps_cmdopt_fitted(FILE *fp, const char *text);
/* The same for what write(FILE *) prints (a command's hand-written --help). */
void tps_cmdopt_fitted_from(FILE *fp, void (*write)(FILE *));

/* yes|on|1 -> 1, no|off|0 -> 0 (any case). 0, or -1 for another word. */
int tps_cmdopt_yesno(const char *arg, int *v);

/* The GPUs of --gpus in t (every GPU of t when --gpus was not given) into a malloc'ed
 * array.  0, or -1 with e (an unknown GPU, out of memory). */
int tps_cmdopt_gpus(const tps_cmdopt_values *v, const tps_gpu_table *t, const tps_gpu ***out, size_t *n, tps_err *e);

#ifdef __cplusplus
}
#endif
#endif
