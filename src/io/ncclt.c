/* ncclt.c: nccl-tests / rccl-tests all_gather_perf log reader (layouts, units, ranges and
 * signs: see ncclt.h).
 *
 * Three passes over the text:
 *  1. clean: every line loses its launcher prefixes (also those inside a row) and the NCCL
 *     message that may follow a row fragment; what is left is a '#' line, a row candidate
 *     (two whole numbers and a type name) or nothing;
 *  2. split into runs: a preamble line (version, "Collective test starting", nThread) or a
 *     column header after rows, or rows after a footer, start a new run; each run keeps its
 *     name, Rank lines, nThread line and header;
 *  3. pick the run (the one all_gather run, or --run N), read its rows by position, find
 *     the rank count, check sizes and printed bandwidths, and name the collective when the
 *     signs say it is not an all-gather.
 * Every integer is range-checked on the string before any arithmetic. */
#include "config.h"
#include "src/io/ncclt.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "src/io/table.h" /* the time and size ranges every reader checks */
#include "src/base/util.h"

#define MAXTOK 64
#define MAX_SIZE 1125899906842624.0 /* 2^50 bytes */
#define MAX_BW_GBPS 1e9
#define MAX_RANKS 65536

/* ------------------------------------------------------------------ small helpers */

static const char *skip_ws(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

static int all_digits(const char *s, size_t n) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++)
    if (!isdigit((unsigned char)s[i])) return 0;
  return 1;
}

/* Length of an Open MPI tag "[1,0]<stdout>:" / "[1,0]<stderr>:" at s, 0 when none. */
static size_t ompi_tag(const char *s) {
  if (s[0] != '[') return 0;
  const char *p = s + 1;
  if (!isdigit((unsigned char)*p)) return 0;
  while (isdigit((unsigned char)*p)) p++;
  if (*p != ',') return 0;
  p++;
  if (!isdigit((unsigned char)*p)) return 0;
  while (isdigit((unsigned char)*p)) p++;
  if (*p != ']') return 0;
  p++;
  if (strncmp(p, "<stdout>:", 9) == 0 || strncmp(p, "<stderr>:", 9) == 0) return (size_t)(p + 9 - s);
  return 0;
}

/* Length of a line-start prefix at s: srun --label "0: " (digits, ':', blank) or Intel MPI
 * "[0] "; 0 when none.  *srun set for the srun form. */
static size_t lead_prefix(const char *s, int *srun) {
  size_t i = 0;
  while (isdigit((unsigned char)s[i])) i++;
  if (i > 0 && i < 7 && s[i] == ':' && (s[i + 1] == ' ' || s[i + 1] == '\t' || s[i + 1] == '\0')) {
    *srun = 1;
    return i + 1;
  }
  if (s[0] == '[') {
    i = 1;
    while (isdigit((unsigned char)s[i])) i++;
    if (i > 1 && i < 8 && s[i] == ']' && s[i + 1] == ' ') return i + 2;
  }
  return 0;
}

static const char *noise_marker(const char *s) {
  static const char *const m[] = {"NCCL INFO", "NCCL WARN", "NCCL TRACE", "NCCL ABORT"};
  const char *best = NULL;
  for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) {
    const char *p = strstr(s, m[k]);
    if (p && (!best || p < best)) best = p;
  }
  return best;
}

/* Token "host:pid:tid" of an NCCL message (ends in ":digits:digits"). */
static int host_pid_tid(const char *t, size_t n) {
  size_t i = n, groups = 0;
  while (groups < 2) {
    size_t j = i;
    while (j > 0 && isdigit((unsigned char)t[j - 1])) j--;
    if (j == i || j == 0 || t[j - 1] != ':') return 0;
    i = j - 1;
    groups++;
  }
  return i > 0;
}

/* Clean one line into out (see pass 1).  *cut = 1 when an NCCL message was cut off after
 * text that remains.  *srun set when an srun label was seen. */
static void clean_line(const char *in, char *out, size_t outsz, int *cut, int *srun) {
  size_t o = 0;
  *cut = 0;
  /* drop Open MPI tags anywhere */
  for (const char *p = in; *p && o + 1 < outsz;) {
    size_t t = ompi_tag(p);
    if (t) { p += t; continue; }
    out[o++] = *p++;
  }
  out[o] = '\0';
  /* line-start prefixes (an srun label may follow an MPI tag) */
  for (int k = 0; k < 3; k++) {
    const char *s = skip_ws(out);
    size_t l = lead_prefix(s, srun);
    if (!l) break;
    memmove(out, s + l, strlen(s + l) + 1);
  }
  /* an NCCL message: cut from its "host:pid:tid" token (or the whole line) */
  const char *m = noise_marker(out);
  if (m) {
    size_t end = (size_t)(m - out), start = 0;
    int found = 0;
    size_t i = end;
    while (i > 0 && !found) {
      while (i > 0 && (out[i - 1] == ' ' || out[i - 1] == '\t')) i--;
      size_t j = i;
      while (j > 0 && out[j - 1] != ' ' && out[j - 1] != '\t') j--;
      if (j < i && host_pid_tid(out + j, i - j)) {
        start = j;
        found = 1;
        /* a row fragment's last cell glued to the host name ("0h100-node3:81:82"): the
         * message was written between two pieces of the row; keep the cell */
        const char *q = skip_ws(out);
        if (q < out + j) {
          size_t c = j;
          while (c < i && (isdigit((unsigned char)out[c]) || out[c] == '.')) c++;
          if (c == j && strncmp(out + j, "N/A", 3) == 0) c = j + 3;
          if (c > j && c < i && isalpha((unsigned char)out[c])) start = c;
        }
      }
      i = j;
    }
    out[found ? start : 0] = '\0';
    const char *r = skip_ws(out);
    *cut = *r != '\0';
  }
}

/* Split s on blanks into tok (pointers into buf).  Tokens "N:" (srun labels inside a row)
 * are dropped when srun is set.  Returns the count, MAXTOK + 1 when there are more. */
static int tokenize(const char *s, char *buf, size_t bufsz, char **tok, int srun) {
  snprintf(buf, bufsz, "%s", s);
  int n = 0;
  char *save = NULL;
  for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
    size_t l = strlen(t);
    if (srun && l > 1 && t[l - 1] == ':' && all_digits(t, l - 1)) continue;
    if (n == MAXTOK) return MAXTOK + 1;
    tok[n++] = t;
  }
  return n;
}

int tps_ncclt_type_size(const char *type) {
  static const struct { const char *name; int size; } types[] = {
      {"int8", 1},     {"uint8", 1},    {"char", 1},     {"f8e4m3", 1},   {"f8e5m2", 1},   {"fp8_e4m3", 1},
      {"fp8_e5m2", 1}, {"half", 2},     {"float16", 2},  {"bfloat16", 2}, {"int32", 4},    {"uint32", 4},
      {"int", 4},      {"float", 4},    {"float32", 4},  {"int64", 8},    {"uint64", 8},   {"double", 8},
      {"float64", 8}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strcmp(type, types[i].name) == 0) return types[i].size;
  return 0;
}

static int is_number(const char *s) {
  double v;
  return tps_parse_double(s, &v) == 0;
}

static int is_type_name(const char *s) {
  if (!isalpha((unsigned char)s[0]) || strlen(s) >= 16) return 0;
  for (const char *p = s; *p; p++)
    if (!isalnum((unsigned char)*p) && *p != '_') return 0;
  return 1;
}

static int is_date(const char *s) { /* YYYY-MM-DD */
  if (strlen(s) != 10) return 0;
  for (int i = 0; i < 10; i++) {
    if (i == 4 || i == 7) { if (s[i] != '-') return 0; }
    else if (!isdigit((unsigned char)s[i])) return 0;
  }
  return 1;
}

static int is_clock(const char *s) { /* HH:MM:SS */
  if (strlen(s) != 8) return 0;
  for (int i = 0; i < 8; i++) {
    if (i == 2 || i == 5) { if (s[i] != ':') return 0; }
    else if (!isdigit((unsigned char)s[i])) return 0;
  }
  return 1;
}

/* A whole number of at most 16 digits (<= 2^50 after the check), or -1. */
static double whole(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 16 || !all_digits(s, n)) return -1;
  double v = strtod(s, NULL);
  return v <= MAX_SIZE ? v : -1;
}

/* Half a unit of the last printed digit of a number token ("12.10" -> 0.005, "1.1e+07" ->
 * 5e5, "337015" -> 0.5). */
static double half_ulp(const char *s) {
  const char *e = strpbrk(s, "eE"), *dot = strchr(s, '.');
  int dec = 0;
  if (dot && (!e || dot < e)) {
    const char *p = dot + 1;
    while (isdigit((unsigned char)*p)) { dec++; p++; }
  }
  long ex = e ? strtol(e + 1, NULL, 10) : 0; /* strtol saturates: "0e999999999999999999999" */
  if (ex > 300) ex = 300;
  if (ex < -300) ex = -300;
  return 0.5 * pow(10.0, (double)(ex - dec));
}

/* ------------------------------------------------------------------ pass 1: clean lines */

typedef struct {
  long ln;
  char *s;   /* cleaned text (malloc'ed) */
  int cut;   /* an NCCL message was cut off after a row fragment */
  int row;   /* a row candidate: two whole numbers, then a type name */
  int own;   /* s is malloc'ed */
  int other; /* text that is neither a '#' line, a row nor an NCCL message (s is then "") */
} cline;

static int row_start(const char *s, int srun) {
  if (!isdigit((unsigned char)*s)) return 0;
  char buf[256], *tok[MAXTOK];
  char head[200];
  snprintf(head, sizeof head, "%s", s); /* the first tokens are enough */
  int nt = tokenize(head, buf, sizeof buf, tok, srun);
  if (nt > MAXTOK) nt = MAXTOK;
  /* two whole numbers, then a type name (or nothing: a row cut short) */
  return nt >= 2 && all_digits(tok[0], strlen(tok[0])) && all_digits(tok[1], strlen(tok[1])) &&
         (nt == 2 || is_type_name(tok[2]));
}

/* ------------------------------------------------------------------ pass 2: runs */

typedef struct {
  long first, last;       /* line range */
  char name[32];          /* from "Collective test starting/concluded:", "" when not named */
  long name_line;
  char version[32];
  int nthread, ngpus, warmup, iters;
  int nranks_lines;
  char gpu[64];
  int using_devices;      /* "# Using devices" seen: Rank lines are expected */
  int hdr, hdr_redop, hdr_root;
  long hdr_line;
  size_t *rows;           /* indices into the cleaned lines */
  size_t nrows, caprows;
  int ended;              /* a footer line seen */
  int nthread_seen;
  long nthread_line;      /* its "# nThread" line: where a second run is reported */
  char guess[32];         /* the collective the signs point to (pass 3), "" = all_gather */
} run_t;

static void copy_trim(char *dst, size_t dstsz, const char *src) {
  src = skip_ws(src);
  size_t n = strlen(src);
  while (n > 0 && (src[n - 1] == ' ' || src[n - 1] == '\t')) n--;
  if (n >= dstsz) n = dstsz - 1;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

/* "# nThread 1 nGpus 8 minBytes ... warmup iters: 5 iters: 20 agg iters: 1 ..." (or the
 * rccl-tests "nThread: 1 nGpus: 8" spelling).  Values out of 1..1024 (threads, GPUs) or
 * 0..1e9 (iterations) are errors. */
static int parse_nthread(const char *path, long ln, const char *s, run_t *r, tps_err *e) {
  char buf[4096];
  char *tok[MAXTOK];
  int nt = tokenize(s, buf, sizeof buf, tok, 0);
  if (nt > MAXTOK) nt = MAXTOK;
  for (int i = 0; i + 1 < nt; i++) {
    char key[32];
    snprintf(key, sizeof key, "%s", tok[i]);
    size_t kl = strlen(key);
    if (kl > 1 && key[kl - 1] == ':' && (strcmp(key, "iters:") != 0)) key[kl - 1] = '\0';
    int which = strcmp(key, "nThread") == 0 ? 0 : strcmp(key, "nGpus") == 0 ? 1
                : strcmp(key, "iters:") == 0 && i > 0 && strcmp(tok[i - 1], "warmup") == 0 ? 2
                : strcmp(key, "iters:") == 0 && (i == 0 || strcmp(tok[i - 1], "agg") != 0) ? 3 : -1;
    if (which < 0) continue;
    long v;
    long hi = which < 2 ? 1024 : 1000000000L, lo = which < 2 ? 1 : 0;
    if (tps_parse_range(tok[i + 1], lo, hi, &v) != 0)
      return tps_err_set(e, path, ln, "%s '%s' is not a whole number from %ld to %ld", which == 0 ? "nThread" : which == 1 ? "nGpus" : which == 2 ? "warmup iters" : "iters",
                         tok[i + 1], lo, hi);
    if (which == 0) r->nthread = (int)v;
    else if (which == 1) r->ngpus = (int)v;
    else if (which == 2) r->warmup = (int)v;
    else r->iters = (int)v;
  }
  return 0;
}

/* Column header "#  size  count  type  [redop]  [root]  time ..." (after '#'). */
static int is_header(const char *s, int *redop, int *root) {
  char buf[1024], *tok[MAXTOK];
  int nt = tokenize(s, buf, sizeof buf, tok, 0);
  if (nt > MAXTOK) nt = MAXTOK;
  if (nt < 4 || strcmp(tok[0], "size") != 0 || strcmp(tok[1], "count") != 0 || strcmp(tok[2], "type") != 0) return 0;
  *redop = *root = 0;
  for (int i = 3; i < nt; i++) {
    if (strcmp(tok[i], "redop") == 0) *redop = 1;
    if (strcmp(tok[i], "root") == 0) *root = 1;
  }
  return 1;
}

static int is_preamble(const char *s, int *which) {
  if (strncmp(s, "nccl-tests version", 18) == 0 || strncmp(s, "rccl-tests version", 18) == 0) { *which = 0; return 1; }
  if (strncmp(s, "Collective test starting:", 25) == 0) { *which = 1; return 1; }
  if (strncmp(s, "nThread", 7) == 0 && (s[7] == ' ' || s[7] == ':' || s[7] == '\t')) { *which = 2; return 1; }
  return 0;
}

static int is_rank_line(const char *s) {
  return strncmp(s, "Rank ", 5) == 0 && isdigit((unsigned char)*skip_ws(s + 5));
}

/* ------------------------------------------------------------------ detection */

int tps_ncclt_detect(const tps_text *tx) {
  int srun = 0, rows = 0;
  size_t lim = tx->n < 4000 ? tx->n : 4000;
  for (size_t i = 0; i < lim; i++) {
    char out[1024];
    int cut;
    char head[1024];
    snprintf(head, sizeof head, "%s", tx->line[i]);
    clean_line(head, out, sizeof out, &cut, &srun);
    const char *s = skip_ws(out);
    if (s[0] == '#') {
      s = skip_ws(s + 1);
      int w, a, b;
      if (is_preamble(s, &w) || strncmp(s, "Using devices", 13) == 0 || is_rank_line(s) || is_header(s, &a, &b))
        return 1;
      continue;
    }
    if (row_start(s, srun)) {
      /* a row of an nccl-tests layout: 11..23 fields, not tab-separated (our TSV is) */
      if (strchr(tx->line[i], '\t')) return 0;
      char buf[1024], *tok[MAXTOK];
      int nt = tokenize(s, buf, sizeof buf, tok, srun);
      if (nt >= 11 && nt <= 23 && ++rows >= 1) return 1;
    }
  }
  return 0;
}

/* ------------------------------------------------------------------ row parsing */

typedef struct {
  const char *path;
  int srun;
} ctx;

/* The numeric cell tok named what: finite, and > 0 when positive is set. */
static int num(const char *path, long ln, const char *tok, const char *what, int positive, double *out, tps_err *e) {
  if (tps_parse_double(tok, out) != 0) return tps_err_set(e, path, ln, "%s '%s' is not a finite number", what, tok);
  if (positive && !(*out > 0)) return tps_err_set(e, path, ln, "%s %s is not positive", what, tok);
  return 0;
}

static int wrong_cell(const char *path, long ln, const char *tok, const char *which, double *out, tps_err *e) {
  if (strcmp(tok, "N/A") == 0) { *out = NAN; return 0; }
  if (tps_parse_double(tok, out) != 0 || *out < 0 || *out > 1e15 || *out != floor(*out))
    return tps_err_set(e, path, ln, "#wrong (%s) '%s' is neither a count nor N/A", which, tok);
  if (*out > 0)
    return tps_err_set(e, path, ln, "%s elements wrong (%s): the run failed its data check, its times are not usable",
                       tok, which);
  return 0;
}

/* Read one block (time algbw busbw #wrong [i_min i_max i_p99 i_cv%]) starting at tok. */
static int block(const char *path, long ln, char **tok, int stats, const char *which, double *time, double *alg,
                 double *bus, double *wrong, double st[4], tps_err *e) {
  char what[48];
  snprintf(what, sizeof what, "time (%s)", which);
  if (num(path, ln, tok[0], what, 1, time, e)) return -1;
  if (*time < TPS_TABLE_MIN_US || *time > TPS_TABLE_MAX_US)
    return tps_err_set(e, path, ln, "time (%s) %s us is outside the range %g..%g us", which, tok[0], TPS_TABLE_MIN_US,
                       TPS_TABLE_MAX_US);
  snprintf(what, sizeof what, "algbw (%s)", which);
  if (num(path, ln, tok[1], what, 0, alg, e)) return -1;
  snprintf(what, sizeof what, "busbw (%s)", which);
  if (num(path, ln, tok[2], what, 0, bus, e)) return -1;
  if (*alg < 0 || *alg > MAX_BW_GBPS || *bus < 0 || *bus > MAX_BW_GBPS)
    return tps_err_set(e, path, ln, "bandwidth (%s) %s / %s GB/s is outside 0..%g GB/s", which, tok[1], tok[2], MAX_BW_GBPS);
  if (wrong_cell(path, ln, tok[3], which, wrong, e)) return -1;
  static const char *const names[4] = {"i_min", "i_max", "i_p99", "i_cv%"};
  for (int k = 0; k < 4; k++) {
    st[k] = NAN;
    if (!stats) continue;
    snprintf(what, sizeof what, "%s (%s)", names[k], which);
    if (num(path, ln, tok[4 + k], what, 0, &st[k], e)) return -1;
    if (st[k] < 0 || st[k] > TPS_TABLE_MAX_US)
      return tps_err_set(e, path, ln, "%s (%s) %s is outside 0..%g", names[k], which, tok[4 + k], TPS_TABLE_MAX_US);
  }
  return 0;
}

/* Printed tokens of a row's two blocks, kept for the bandwidth check (their precision). */
typedef struct {
  double ht[2], ha[2], hb[2]; /* half a unit of the last printed digit: time, algbw, busbw */
} row_toks;

/* The row layout of a token count: lead fields before the blocks (3, 4 or 5), -I stats, -S.
 * -1 when no layout fits. */
static int layout_of(char **tok, int nt, int *lead, int *stats, int *ts) {
  *ts = nt >= 2 && is_date(tok[nt - 2]) && is_clock(tok[nt - 1]);
  int m = nt - (*ts ? 2 : 0);
  for (int st = 0; st < 2; st++) {
    int l = m - (st ? 16 : 8);
    if (l >= 3 && l <= 5) { *lead = l; *stats = st; return 0; }
  }
  return -1;
}

typedef struct {
  int lead, stats, ts, set;
  long line;
} layout_t;

/* buf: scratch of bufsz >= strlen(s) + 1. *lead_out: the row's lead fields (3, 4, 5). */
static int parse_row(const char *path, long ln, const char *s, int srun, layout_t *L, tps_ncclt_row *r, row_toks *rt,
                     char *buf, size_t bufsz, int *lead_out, tps_err *e) {
  char *tok[MAXTOK];
  int nt = tokenize(s, buf, bufsz, tok, srun);
  memset(r, 0, sizeof *r);
  r->line = ln;
  r->root = 0;
  if (nt > MAXTOK) return tps_err_set(e, path, ln, "too many fields for an nccl-tests result row");
  if (nt < 3) return tps_err_set(e, path, ln, "result row cut short (%d fields; truncated log?)", nt);
  double v = whole(tok[0]);
  if (v < 0) return tps_err_set(e, path, ln, "size '%s' is not a byte count (a whole number up to 2^50)", tok[0]);
  r->size_bytes = v;
  v = whole(tok[1]);
  if (v < 0) return tps_err_set(e, path, ln, "count '%s' is not an element count (a whole number up to 2^50)", tok[1]);
  r->count = (long)v;
  if (!is_type_name(tok[2])) return tps_err_set(e, path, ln, "type '%s' is not an nccl-tests type name", tok[2]);
  snprintf(r->type, sizeof r->type, "%s", tok[2]);
  int lead, stats, ts;
  if (layout_of(tok, nt, &lead, &stats, &ts) != 0) {
    /* name the fields after the leading ones, as the layout of the rows before has them */
    int l = L->set ? L->lead : (nt >= 5 && !is_number(tok[3])) ? 5 : 3;
    int rest = nt - l - (L->set && L->ts ? 2 : 0);
    return tps_err_set(e, path, ln,
                       "result row has %d fields after '%s', want 8 (time algbw busbw #wrong, out-of-place "
                       "and in-place) or 16 (with -I); truncated log?",
                       rest < 0 ? 0 : rest, tok[l - 1 < nt ? l - 1 : nt - 1]);
  }
  if (ts) snprintf(r->timestamp, sizeof r->timestamp, "%s %s", tok[nt - 2], tok[nt - 1]);
  if (lead == 5) {
    if (is_number(tok[3]) || strlen(tok[3]) >= sizeof r->redop)
      return tps_err_set(e, path, ln, "redop '%s' is not a reduction name", tok[3]);
    snprintf(r->redop, sizeof r->redop, "%s", tok[3]);
    long root;
    if (tps_parse_range(tok[4], -1, 65535, &root) != 0)
      return tps_err_set(e, path, ln, "root '%s' is not a rank (-1..65535)", tok[4]);
    r->root = (int)root;
  } else if (lead == 4) {
    long root;
    if (tps_parse_range(tok[3], 0, 65535, &root) == 0) r->root = (int)root; /* a pre-2.13 root column */
    else if (!is_number(tok[3]) && strlen(tok[3]) < sizeof r->redop) {
      snprintf(r->redop, sizeof r->redop, "%s", tok[3]);
      r->root = -1;
    } else
      return tps_err_set(e, path, ln, "'%s' after the type is neither a redop nor a root", tok[3]);
  }
  if (!L->set) {
    L->lead = lead; L->stats = stats; L->ts = ts; L->set = 1; L->line = ln;
  } else if (L->lead != lead || L->stats != stats || L->ts != ts) {
    return tps_err_set(e, path, ln, "result row layout differs from the row on line %ld (truncated or mixed log?)", L->line);
  }
  int bl = stats ? 8 : 4;
  double st[4];
  if (block(path, ln, tok + lead, stats, "out-of-place", &r->oop_time_us, &r->oop_algbw_gbps, &r->oop_busbw_gbps,
            &r->oop_wrong, st, e))
    return -1;
  r->oop_min_us = st[0]; r->oop_max_us = st[1]; r->oop_p99_us = st[2]; r->oop_cv_pct = st[3];
  if (block(path, ln, tok + lead + bl, stats, "in-place", &r->ip_time_us, &r->ip_algbw_gbps, &r->ip_busbw_gbps,
            &r->ip_wrong, st, e))
    return -1;
  r->ip_min_us = st[0]; r->ip_max_us = st[1]; r->ip_p99_us = st[2]; r->ip_cv_pct = st[3];
  for (int k = 0; k < 2; k++) {
    int o = lead + k * bl;
    rt->ht[k] = half_ulp(tok[o]);
    rt->ha[k] = half_ulp(tok[o + 1]);
    rt->hb[k] = half_ulp(tok[o + 2]);
  }
  *lead_out = lead;
  return 0;
}

/* ------------------------------------------------------------------ bandwidth conventions */

/* Does block k of row r fit n ranks: current convention (old = 0: algbw = S/t, busbw =
 * algbw (n-1)/n) or the pre-June-2020 one (old = 1: algbw = busbw = S/t (n-1)/n)? */
static int bw_fits(const tps_ncclt_row *r, const row_toks *rt, int k, int n, int old) {
  double t = k ? r->ip_time_us : r->oop_time_us;
  double a = k ? r->ip_algbw_gbps : r->oop_algbw_gbps, b = k ? r->ip_busbw_gbps : r->oop_busbw_gbps;
  double alg = r->size_bytes / t / 1e3, f = n > 0 ? (double)(n - 1) / n : 0;
  double ea = old ? alg * f : alg, eb = alg * f;
  double rel_t = rt->ht[k] / t;
  double tola = 1.5 * (rt->ha[k] + ea * rel_t) + 0.005 * ea + 1e-9;
  double tolb = 1.5 * (rt->hb[k] + eb * rel_t) + 0.005 * eb + 1e-9;
  return fabs(a - ea) <= tola && fabs(b - eb) <= tolb;
}

static int all_fit(const tps_ncclt_row *row, const row_toks *rt, size_t n, int ranks, int old, size_t *bad) {
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 2; k++)
      if (!bw_fits(&row[i], &rt[i], k, ranks, old)) { if (bad) *bad = i; return 0; }
  return 1;
}

/* busbw/algbw of the row with the largest printed algbw (the most digits), NaN when none. */
static double bus_factor(const tps_ncclt_row *row, size_t n) {
  size_t best = n;
  for (size_t i = 0; i < n; i++)
    if (row[i].oop_algbw_gbps > 0 && (best == n || row[i].oop_algbw_gbps > row[best].oop_algbw_gbps)) best = i;
  return best == n ? NAN : row[best].oop_busbw_gbps / row[best].oop_algbw_gbps;
}

/* ------------------------------------------------------------------ the parser */

static void run_free(run_t *r, size_t n) {
  for (size_t i = 0; i < n; i++) free(r[i].rows);
  free(r);
}

static const char *run_name(const run_t *r) { return r->name[0] ? r->name : r->guess[0] ? r->guess : "all_gather_perf?"; }

static int is_allgather_name(const char *s) { return strstr(s, "all_gather") != NULL || strstr(s, "allgather") != NULL; }

static int is_reduction(const char *op) {
  static const char *const ops[] = {"sum", "prod", "max", "min", "avg", "premulsum", "mulsum"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(op, ops[i]) == 0) return 1;
  return 0;
}

/* The signs of an unnamed run's first row that make it another collective: fills R->guess
 * ("all_reduce_perf?" ...), used to choose among runs and to list them. */
static void quick_sign(run_t *R, const cline *cl, int srun) {
  if (R->name[0] || R->nrows == 0) return;
  char buf[1024], *tok[MAXTOK];
  int nt = tokenize(cl[R->rows[0]].s, buf, sizeof buf, tok, srun), lead, stats, ts;
  if (nt > MAXTOK || layout_of(tok, nt, &lead, &stats, &ts) != 0) return;
  long root;
  if (lead >= 4 && is_reduction(tok[3])) snprintf(R->guess, sizeof R->guess, "a reduction (redop %.8s)", tok[3]);
  else if (lead == 5 && tps_parse_range(tok[4], 0, 65535, &root) == 0) snprintf(R->guess, sizeof R->guess, "rooted (root %ld)", root);
  else if (lead == 4) snprintf(R->guess, sizeof R->guess, "rooted (a root column)");
  else if (lead == 3 && R->hdr && R->hdr_redop) snprintf(R->guess, sizeof R->guess, "alltoall_perf?");
}

void tps_ncclt_free(tps_ncclt *log) {
  free(log->row);
  memset(log, 0, sizeof *log);
}

int tps_ncclt_parse(const tps_text *tx, tps_ncclt *log, tps_err *e) { return tps_ncclt_parse_opts(tx, NULL, log, e); }

/* A run header or column header between the rows of a table that no footer ended: the rows
 * after it would be another run's (and dropped), so the log is refused. */
static void inside_table(const char *path, long ln, const char *c, const run_t *R, const cline *cl, tps_err *e) {
  tps_err_set(e, path, ln, "'# %.60s' inside the result table of lines %ld-%ld (no '# Avg bus bandwidth' line ended it): "
              "two runs interleaved or a run cut short", c, cl[R->rows[0]].ln, cl[R->rows[R->nrows - 1]].ln);
}

/* "1K", "4M", "2GB", "16KiB": a size with a unit suffix (nccl-tests prints bytes). */
static int unit_size(const char *t) {
  size_t i = 0;
  while (isdigit((unsigned char)t[i]) || t[i] == '.') i++;
  if (i == 0 || !strchr("KMGTkmgt", t[i]) || !t[i]) return 0;
  i++;
  if (t[i] == 'i') i++;
  if (t[i] == 'B' || t[i] == 'b') i++;
  return t[i] == '\0';
}

/* Every line of the picked run's table is read: from its column header (or first row) to its
 * last row nothing but rows, '#' lines and NCCL messages; and a line starting with a digit
 * after the header that is not a row (a size with a unit suffix, a mangled row) is refused,
 * wherever it is before the table's end.  0, or -1 with e at that line. */
static int table_lines(const tps_text *tx, const cline *cl, const run_t *R, tps_err *e) {
  if (!R->hdr && R->nrows == 0) return 0;
  size_t start = R->hdr ? (size_t)R->hdr_line - 1 : R->rows[0];
  size_t last = R->nrows ? R->rows[R->nrows - 1] : start;
  for (size_t j = start + 1; j < tx->n; j++) {
    const char *s = cl[j].s;
    if (*s == '#') {
      const char *c = skip_ws(s + 1);
      int which, hr, ho;
      if (is_preamble(c, &which) || is_header(c, &hr, &ho) || strncmp(c, "Out of bounds", 13) == 0 ||
          strncmp(c, "Avg bus bandwidth", 17) == 0 || strncmp(c, "Collective test concluded:", 26) == 0)
        break;
      if (R->nrows && j > R->rows[0] && j < last && *c) /* between two rows nccl-tests prints no comment */
        return tps_err_set(e, tx->path, cl[j].ln, "'# %.40s' inside the result table: not a result row", c);
      continue;
    }
    if (cl[j].row) continue;
    if (isdigit((unsigned char)*s)) {
      char first[64];
      snprintf(first, sizeof first, "%.*s", (int)strcspn(s, " \t"), s);
      const char *second = s + strcspn(s, " \t");
      second = skip_ws(second);
      char sec[64];
      snprintf(sec, sizeof sec, "%.*s", (int)strcspn(second, " \t"), second);
      if (unit_size(first) || unit_size(sec))
        return tps_err_set(e, tx->path, cl[j].ln, "size '%s' with a unit suffix: nccl-tests tables give sizes and counts "
                           "in whole bytes and elements (a table edited by hand?)", unit_size(first) ? first : sec);
      return tps_err_set(e, tx->path, cl[j].ln, "not a result row: '%.40s' (two whole numbers and a type name first)", s);
    }
    if (cl[j].other && j < last)
      return tps_err_set(e, tx->path, cl[j].ln, "not a result row inside the result table: '%.40s'", tx->line[j]);
    if (cl[j].other) break; /* text after the last row: the end of the table */
  }
  return 0;
}

/* The collective the rows' signs point to when it is not an all-gather ("" when they fit
 * one), with why.  n: the rank count (0 when unknown). */
static void guess_collective(const run_t *R, int lead, const tps_ncclt_row *row, size_t nr, int n, char *name,
                             size_t namesz, char *why, size_t whysz) {
  name[0] = why[0] = '\0';
  if (nr == 0) return;
  const tps_ncclt_row *r = &row[0];
  int ts = tps_ncclt_type_size(r->type);
  double sc = ts && r->count > 0 ? r->size_bytes / ((double)r->count * ts) : NAN; /* n for a gather, 1 otherwise */
  double f = bus_factor(row, nr);
  if (r->redop[0] && is_reduction(r->redop)) {
    if (r->root >= 0) snprintf(name, namesz, "reduce_perf");
    else if ((n > 1 && sc == n) || (isfinite(f) && f < 1.0 - 1e-9 && !(isfinite(sc) && sc == 1)))
      snprintf(name, namesz, "reduce_scatter_perf");
    else snprintf(name, namesz, "all_reduce_perf");
    snprintf(why, whysz, "redop %s: a reduction", r->redop);
    return;
  }
  if (lead >= 4 && r->root >= 0) {
    snprintf(name, namesz, "broadcast_perf");
    snprintf(why, whysz, "root %d: a rooted collective (broadcast, reduce, gather, scatter)", r->root);
    return;
  }
  if (lead == 3 && R->hdr && R->hdr_redop) {
    snprintf(name, namesz, "alltoall_perf");
    snprintf(why, whysz, "a pre-2.13 header with a redop column but rows without one, as alltoall_perf printed it");
    return;
  }
  int ip_na = 1, oop_num = 1;
  for (size_t i = 0; i < nr; i++) {
    if (!isnan(row[i].ip_wrong)) ip_na = 0;
    if (isnan(row[i].oop_wrong)) oop_num = 0;
  }
  if (ip_na && oop_num) {
    snprintf(name, namesz, "alltoall_perf");
    snprintf(why, whysz, "in-place #wrong N/A while out-of-place is checked: alltoall has no in-place check");
    return;
  }
  if (isfinite(sc) && sc == 1 && n > 1) {
    snprintf(name, namesz, isfinite(f) && f > 1.05 ? "all_reduce_perf" : "broadcast_perf");
    snprintf(why, whysz, "size = count x %d bytes: nothing gathered from %d ranks", ts, n);
    return;
  }
  if (isfinite(f) && f > 1.05) {
    snprintf(name, namesz, "all_reduce_perf");
    snprintf(why, whysz, "busbw = %.3g x algbw: the 2(n-1)/n factor of an all-reduce", f);
  }
}

int tps_ncclt_parse_opts(const tps_text *tx, const tps_ncclt_read_opts *o, tps_ncclt *log, tps_err *e) {
  memset(log, 0, sizeof *log);
  log->nthread = log->ngpus = log->warmup_iters = log->iters = -1;
  const char *path = tx->path;
  tps_ncclt_read_opts none = {0, 0};
  if (!o) o = &none;
  int rc = -1, srun = 0;
  cline *cl = calloc(tx->n ? tx->n : 1, sizeof *cl);
  run_t *runs = NULL;
  size_t nruns = 0, capruns = 0;
  row_toks *rt = NULL;
  char *joined = NULL, *work = NULL;
  char *out = malloc(TPS_TEXT_MAX_LINE + 2);
  if (!cl || !out) { tps_err_oom(e, "reading %s", path); goto done; }

  /* pass 1 */
  for (size_t i = 0; i < tx->n; i++) {
    int cut;
    clean_line(tx->line[i], out, TPS_TEXT_MAX_LINE + 2, &cut, &srun);
    cl[i].ln = (long)i + 1;
    cl[i].cut = cut;
    /* only '#' lines and lines starting with a digit matter (rows and their continuations):
     * the others (launcher chatter, NCCL messages) are not kept */
    const char *c = skip_ws(out);
    static char empty[1];
    if (*c != '#' && !isdigit((unsigned char)*c)) { cl[i].s = empty; cl[i].other = *c != '\0'; cl[i].cut = 0; continue; }
    if (!(cl[i].s = strdup(c))) { tps_err_oom(e, "reading %s", path); goto done; }
    cl[i].own = 1;
  }
  for (size_t i = 0; i < tx->n; i++) cl[i].row = row_start(cl[i].s, srun);

  /* pass 2 */
  run_t *R = NULL;
#define NEWRUN()                                                                         \
  do {                                                                                   \
    if (nruns == capruns) {                                                              \
      size_t nc = capruns ? 2 * capruns : 4;                                             \
      run_t *nrp = realloc(runs, nc * sizeof *nrp);                                      \
      if (!nrp) { tps_err_oom(e, "reading %s", path); goto done; }                       \
      runs = nrp; capruns = nc;                                                          \
    }                                                                                    \
    R = &runs[nruns++];                                                                  \
    memset(R, 0, sizeof *R);                                                             \
    R->nthread = R->ngpus = R->warmup = R->iters = -1;                                   \
    R->first = cl[i].ln;                                                                 \
  } while (0)
  for (size_t i = 0; i < tx->n; i++) {
    const char *s = cl[i].s;
    if (*s == '#') {
      const char *c = skip_ws(s + 1);
      int which, hr, ho;
      if (is_preamble(c, &which)) {
        if (R && R->nrows > 0 && !R->ended) { inside_table(path, cl[i].ln, c, R, cl, e); goto done; }
        int again = R && (R->nrows > 0 || R->ended || (which == 0 && R->version[0]) || (which == 1 && R->name[0]) ||
                          (which == 2 && R->nthread_seen));
        if (!R || again) NEWRUN();
        if (which == 0) {
          char buf[sizeof R->version];
          copy_trim(buf, sizeof buf, c + 18);
          buf[strcspn(buf, " \t")] = '\0';
          snprintf(R->version, sizeof R->version, "%s", buf);
        } else if (which == 1) {
          copy_trim(R->name, sizeof R->name, c + 25);
          R->name_line = cl[i].ln;
        } else {
          R->nthread_seen = 1;
          R->nthread_line = cl[i].ln;
          if (parse_nthread(path, cl[i].ln, c, R, e)) goto done;
        }
      } else if (is_header(c, &hr, &ho)) {
        if (R && R->nrows > 0 && !R->ended) { inside_table(path, cl[i].ln, c, R, cl, e); goto done; }
        if (!R || R->nrows > 0 || R->ended) NEWRUN();
        R->hdr = 1; R->hdr_redop = hr; R->hdr_root = ho; R->hdr_line = cl[i].ln;
      } else if (R && is_rank_line(c)) {
        if (R->nranks_lines == 0) {
          const char *b = strchr(c, ']');
          if (b) copy_trim(R->gpu, sizeof R->gpu, b + 1);
        }
        if (R->nranks_lines < MAX_RANKS) R->nranks_lines++;
      } else if (!R && is_rank_line(c)) {
        NEWRUN();
        const char *b = strchr(c, ']');
        if (b) copy_trim(R->gpu, sizeof R->gpu, b + 1);
        R->nranks_lines = 1;
      } else if (strncmp(c, "Using devices", 13) == 0) {
        if (!R || R->nrows > 0 || R->ended) NEWRUN();
        R->using_devices = 1;
      } else if (strncmp(c, "Collective test concluded:", 26) == 0) {
        if (R) {
          char nm[32];
          copy_trim(nm, sizeof nm, c + 26);
          if (!R->name[0]) { snprintf(R->name, sizeof R->name, "%s", nm); R->name_line = cl[i].ln; }
          R->ended = 1;
        }
      } else if (strncmp(c, "Avg bus bandwidth", 17) == 0 || strncmp(c, "Out of bounds", 13) == 0) {
        if (R) R->ended = 1;
      }
      if (R) R->last = cl[i].ln;
      continue;
    }
    if (!cl[i].row) continue;
    if (!R || R->ended) NEWRUN();
    if (R->nrows == R->caprows) {
      size_t nc = R->caprows ? 2 * R->caprows : 64;
      size_t *nrp = realloc(R->rows, nc * sizeof *nrp);
      if (!nrp) { tps_err_oom(e, "reading %s", path); goto done; }
      R->rows = nrp; R->caprows = nc;
    }
    R->rows[R->nrows++] = i;
    R->last = cl[i].ln;
  }
#undef NEWRUN
  if (nruns == 0) { tps_err_set(e, path, 0, "no nccl-tests result rows or preamble (not an nccl-tests log?)"); goto done; }

  /* runs named for another collective are out; unnamed runs are candidates */
  size_t pick = nruns, ncand = 0, second = nruns;
  if (o->run > 0) {
    if ((size_t)o->run > nruns) {
      tps_err_set(e, path, 0, "--run %d: the file holds %zu run%s", o->run, nruns, nruns == 1 ? "" : "s");
      goto list_runs;
    }
    pick = (size_t)o->run - 1;
  } else {
    for (size_t k = 0; k < nruns; k++) {
      quick_sign(&runs[k], cl, srun);
      if (runs[k].nrows == 0 && !runs[k].name[0]) continue;
      if (runs[k].name[0] && !is_allgather_name(runs[k].name)) continue;
      if (runs[k].guess[0]) continue;
      if (ncand == 0) pick = k;
      else if (ncand == 1) second = k;
      ncand++;
    }
    if (ncand > 1) {
      tps_err_set(e, path, runs[second].nthread_line ? runs[second].nthread_line : runs[second].first, "a second nccl-tests run starts here: one run per file, or pick one with --run N");
      goto list_runs;
    }
    if (ncand == 0 && nruns > 1) {
      tps_err_set(e, path, 0, "none of the %zu runs in the file is an all_gather run", nruns);
      goto list_runs;
    }
    if (ncand == 0) pick = 0; /* refused below, by name or by its rows */
  }
  log->nruns = (int)nruns;
  log->run = (int)pick + 1;
  R = &runs[pick];
  if (R->name[0] && !is_allgather_name(R->name)) {
    tps_err_set(e, path, R->name_line,
                "%s log, not all_gather: its \"Collective test\" line names it (not an all_gather_perf log (%s))",
                R->name, R->name);
    goto list_runs;
  }
  snprintf(log->version, sizeof log->version, "%s", R->version);
  snprintf(log->collective, sizeof log->collective, "%s", R->name);
  snprintf(log->gpu, sizeof log->gpu, "%s", R->gpu);
  log->nthread = R->nthread; log->ngpus = R->ngpus; log->warmup_iters = R->warmup; log->iters = R->iters;

  /* pass 3: rows */
  log->row = malloc((R->nrows ? R->nrows : 1) * sizeof *log->row);
  rt = malloc((R->nrows ? R->nrows : 1) * sizeof *rt);
  if (!log->row || !rt) { tps_err_oom(e, "reading %s", path); goto done; }
  layout_t L = {0, 0, 0, 0, 0};
  size_t worksz = 2 * (size_t)TPS_TEXT_MAX_LINE + 4;
  joined = malloc(worksz);
  work = malloc(worksz);
  if (!joined || !work) { tps_err_oom(e, "reading %s", path); goto done; }
  for (size_t k = 0; k < R->nrows; k++) {
    size_t i = R->rows[k];
    const char *s = cl[i].s;
    /* a row broken by an NCCL message: its rest is on a later line that does not start a row */
    if (cl[i].cut) {
      char buf[1024], *tok[MAXTOK];
      int nt = tokenize(s, buf, sizeof buf, tok, srun), lead, stats, ts;
      if (nt <= MAXTOK && layout_of(tok, nt, &lead, &stats, &ts) != 0) {
        for (size_t j = i + 1; j < tx->n && j < i + 8; j++) {
          if (!cl[j].s[0] && !cl[j].cut) continue;
          if (cl[j].s[0] == '#' || cl[j].row) break;
          if (!cl[j].s[0]) continue;
          snprintf(joined, worksz, "%s %s", s, cl[j].s);
          s = joined;
          cl[j].s[0] = '\0';
          break;
        }
      }
    }
    tps_ncclt_row *r = &log->row[log->n];
    int lead;
    if (parse_row(path, cl[i].ln, s, srun, &L, r, &rt[log->n], work, worksz, &lead, e)) goto done;
    if (r->size_bytes == 0) continue; /* -b 0: an empty gather carries no timing information */
    log->n++;
  }
  if (table_lines(tx, cl, R, e)) goto done;
  log->layout = L.lead == 3 ? TPS_NCCLT_PRE213 : TPS_NCCLT_CURRENT;
  log->has_timestamp = L.ts;
  log->has_iter_stats = L.stats;
  if (log->n == 0) {
    tps_err_set(e, path, R->last, "no result rows in the nccl-tests log (truncated log?)");
    goto done;
  }

  /* rank count */
  char from[160] = "";
  int n = 0;
  const tps_ncclt_row *r0 = &log->row[0];
  int tsz = tps_ncclt_type_size(r0->type);
  int sc_n = 0; /* size / (count * type size), when whole and the same in every row */
  if (tsz) {
    sc_n = -1;
    for (size_t i = 0; i < log->n; i++) {
      const tps_ncclt_row *r = &log->row[i];
      if (r->count <= 0) continue;
      double q = r->size_bytes / ((double)r->count * tsz);
      int qi = q == floor(q) && q >= 1 && q <= MAX_RANKS ? (int)q : 0;
      if (sc_n == -1) sc_n = qi;
      else if (sc_n != qi) sc_n = 0;
    }
    if (sc_n < 0) sc_n = 0;
  }
  if (R->nranks_lines > 0) {
    n = R->nranks_lines;
    log->ranks_from = TPS_NCCLT_RANKS_LINES;
    snprintf(from, sizeof from, "%d '#  Rank' lines", n);
    if (o->ranks > 0 && o->ranks != n) {
      tps_err_set(e, path, 0, "--ranks %d, but the log has %d '#  Rank' lines", o->ranks, n);
      goto done;
    }
  } else if (R->using_devices || R->nthread_seen) {
    tps_err_set(e, path, 0, "no '#  Rank' lines after the preamble: cannot tell the number of ranks (lines lost? "
                            "give --ranks N)");
    goto done;
  } else if (o->ranks > 0) {
    n = o->ranks;
    log->ranks_from = TPS_NCCLT_RANKS_OPTION;
    snprintf(from, sizeof from, "--ranks %d", n);
  } else if (sc_n > 0) {
    n = sc_n;
    log->ranks_from = TPS_NCCLT_RANKS_SIZE;
    snprintf(from, sizeof from, "size / (count x %d bytes), no '#  Rank' lines", tsz);
  } else {
    /* the one rank count for which every row fits a convention */
    int found = 0, lo = 0, hi = 0;
    for (int c = 1; c <= 1024; c++) {
      if (all_fit(log->row, rt, log->n, c, 0, NULL) || (c > 1 && all_fit(log->row, rt, log->n, c, 1, NULL))) {
        if (!found) lo = c;
        hi = c;
        found++;
      }
    }
    if (found == 1) {
      n = lo;
      log->ranks_from = TPS_NCCLT_RANKS_RATIO;
      snprintf(from, sizeof from, "the busbw/algbw ratio, no '#  Rank' lines");
    } else if (found == 0) {
      char name[32], why[160];
      guess_collective(R, L.lead, log->row, log->n, 0, name, sizeof name, why, sizeof why);
      if (name[0])
        tps_err_set(e, path, log->row[0].line, "%s log, not all_gather: %s (not an all_gather_perf log (%s))", name, why,
                    name);
      else
        tps_err_set(e, path, 0, "no '#  Rank' lines, and no rank count fits the printed bandwidths: "
                                "cannot tell the number of ranks (give --ranks N)");
      goto done;
    } else {
      tps_err_set(e, path, 0, "no '#  Rank' lines: the printed bandwidths fit %d to %d ranks, cannot tell which "
                              "(give --ranks N)", lo, hi);
      goto done;
    }
  }
  log->nranks = n;
  if (log->nthread > 0 && log->ngpus > 0 && R->nranks_lines > 0 && n % (log->nthread * log->ngpus) != 0) {
    tps_err_set(e, path, 0, "%d '#  Rank' lines, not a multiple of nThread %d x nGpus %d (lines lost?)", n, log->nthread,
                log->ngpus);
    goto done;
  }

  /* not an all-gather by its rows? */
  {
    char name[32], why[200];
    guess_collective(R, L.lead, log->row, log->n, n, name, sizeof name, why, sizeof why);
    if (name[0]) {
      snprintf(R->guess, sizeof R->guess, "%s", name);
      tps_err_set(e, path, log->row[0].line, "%s log, not all_gather: %s (not an all_gather_perf log (%s))", name, why,
                  name);
      goto done;
    }
  }
  for (size_t i = 0; i < log->n; i++) {
    const tps_ncclt_row *r = &log->row[i];
    int ts = tps_ncclt_type_size(r->type);
    if (ts && r->size_bytes != (double)r->count * ts * n) {
      tps_err_set(e, path, r->line,
                  "size %.0f != count %ld * %d bytes (%s) * %d ranks: not an all-gather of these ranks", r->size_bytes,
                  r->count, ts, r->type, n);
      goto done;
    }
  }
  /* bandwidth convention: every row the current one, or every row the old one */
  size_t bad = 0;
  if (!all_fit(log->row, rt, log->n, n, 0, &bad)) {
    size_t bad_old = 0;
    if (n > 1 && all_fit(log->row, rt, log->n, n, 1, &bad_old)) {
      log->bw_old = 1;
    } else {
      const tps_ncclt_row *r = &log->row[bad];
      int k = bw_fits(r, &rt[bad], 0, n, 0) ? 1 : 0;
      double t = k ? r->ip_time_us : r->oop_time_us, alg = r->size_bytes / t / 1e3, bus = alg * (n - 1) / n;
      double f = bus_factor(log->row, log->n);
      if (isfinite(f) && f > 1.05 && n > 1) {
        tps_err_set(e, path, r->line,
                    "all_reduce_perf log, not all_gather: busbw = %.3g x algbw, the 2(n-1)/n factor of an all-reduce "
                    "(not an all_gather_perf log (all_reduce_perf))", f);
        goto done;
      }
      tps_err_set(e, path, r->line,
                  "printed bandwidth (%s algbw %g, busbw %g GB/s) disagrees with size/time for %d ranks (%.3g, %.3g GB/s): "
                  "columns misread or not an all-gather",
                  k ? "in-place" : "out-of-place", k ? r->ip_algbw_gbps : r->oop_algbw_gbps,
                  k ? r->ip_busbw_gbps : r->oop_busbw_gbps, n, alg, bus);
      goto done;
    }
  }
  rc = 0;
  snprintf(log->note, sizeof log->note, "%s%s; ranks %d from %s; %s", log->collective[0] ? log->collective : "all_gather_perf",
           log->collective[0] ? "" : " (not named in the log: all_gather assumed from its rows)", n, from,
           log->bw_old ? "algbw printed equal to busbw (nccl-tests before June 2020): algbw recomputed as size/time"
                       : "algbw = size/time, busbw = algbw (n-1)/n as printed");
list_runs:
  for (size_t k = 0; k < nruns; k++) {
    size_t l = strlen(log->runs);
    snprintf(log->runs + l, sizeof log->runs - l, "%s%zu: %s, lines %ld-%ld", k ? "; " : "", k + 1, run_name(&runs[k]),
             runs[k].first, runs[k].last);
  }
  if (!rc && nruns > 1) { /* what else the file holds */
    size_t l = strlen(log->note);
    snprintf(log->note + l, sizeof log->note - l, "; run %zu of %zu [runs: %s]", pick + 1, nruns, log->runs);
  }
  if (rc && nruns > 1) { /* the error lists what is there */
    size_t l = strlen(e->msg);
    snprintf(e->msg + l, sizeof e->msg - l, " [runs: %s]", log->runs);
  }
done:
  if (cl)
    for (size_t i = 0; i < tx->n; i++)
      if (cl[i].own) free(cl[i].s);
  free(cl);
  free(out);
  free(rt);
  free(joined);
  free(work);
  run_free(runs, nruns);
  if (rc) {
    char keep[sizeof log->runs];
    memcpy(keep, log->runs, sizeof keep);
    tps_ncclt_free(log);
    memcpy(log->runs, keep, sizeof keep);
  }
  return rc;
}

/* ------------------------------------------------------------------ -J JSON files
 * nccl-tests >= 2.17.3 writes `-J FILE` (src/util.cu, jsonOutputInit ... writeResultFooter):
 * {"version", "config": {"nthreads", "ngpus", "warmup_iters", "iterations", ...,
 *  "devices": [{"rank", "device_info", ...}]}, "results": [{"size", "count", "type",
 *  "redop", "root" (a string, "    -1"), "out_of_place": {"time"|"cpu_time", "alg_bw",
 *  "bus_bw", "nwrong" (null for -c 0)}, "in_place": {...}, "out_of_place_per_iter":
 *  {"min_us", "max_us", "p99_us", "cv_pct", ...}, "experiment_name"}], ...}.  NaN is written
 * as "nan".  "devices" holds one entry per process (the first GPU line of each), so
 * nranks = len(devices) * nthreads * ngpus.  Some builds put "devices" at the top level;
 * both are read.  Errors name the result index and its line (result_lines). */

static int jnum(json_t *o, const char *key, double *out) {
  json_t *v = json_object_get(o, key);
  if (json_is_number(v)) { *out = json_number_value(v); return isfinite(*out) ? 0 : -1; }
  return -1;
}

/* A whole number in [lo, hi] (cast only after the check). */
static int jint(json_t *o, const char *key, double lo, double hi, long *out) {
  double v;
  if (jnum(o, key, &v) || v != floor(v) || v < lo || v > hi) return -1;
  *out = (long)v;
  return 0;
}

/* The line of each element of the root object's "results" array (JSON values have no line
 * in jansson): a scan of the text for the array and its objects' opening braces.  line[i] = 0
 * for an element not found. */
static void result_lines(const char *d, size_t len, long *line, size_t n) {
  memset(line, 0, n * sizeof *line);
  long ln = 1;
  int depth = 0, in_str = 0, state = 0, arr = 0; /* state 1: "results" key seen, 2: in its array */
  size_t k = 0, str0 = 0;
  for (size_t i = 0; i < len && k < n; i++) {
    char c = d[i];
    if (c == '\n') ln++;
    if (in_str) {
      if (c == '\\') i++;
      else if (c == '"') {
        in_str = 0;
        if (depth == 1 && state == 0 && i - str0 == 8 && memcmp(d + str0 + 1, "results", 7) == 0) {
          size_t q = i + 1;
          while (q < len && strchr(" \t\r\n", d[q]) && d[q]) q++;
          if (q < len && d[q] == ':') state = 1;
        }
      }
      continue;
    }
    if (c == '"') { in_str = 1; str0 = i; continue; }
    if (c == '{' || c == '[') {
      if (state == 1 && c == '[' && depth == 1) { state = 2; arr = depth + 1; }
      else if (state == 2 && c == '{' && depth == arr) line[k++] = ln;
      depth++;
    } else if (c == '}' || c == ']') {
      depth--;
      if (state == 2 && depth < arr) break;
    } else if (state == 1 && depth == 1 && !strchr(" \t\r\n:", c)) {
      state = 0; /* "results" is not an array */
    }
  }
}

static int jblock(const char *path, size_t i, long ln, json_t *r, const char *key, double *time, double *alg, double *bus,
                  double *wrong, tps_err *e) {
  json_t *b = json_object_get(r, key);
  if (!json_is_object(b)) return tps_err_set(e, path, ln, "results[%zu]: no \"%s\" object", i, key);
  if (jnum(b, "time", time) && jnum(b, "cpu_time", time))
    return tps_err_set(e, path, ln, "results[%zu].%s: no finite time", i, key);
  if (!(*time > 0)) return tps_err_set(e, path, ln, "results[%zu].%s: time %g is not positive", i, key, *time);
  if (*time < TPS_TABLE_MIN_US || *time > TPS_TABLE_MAX_US)
    return tps_err_set(e, path, ln, "results[%zu].%s: time %g us is outside %g..%g us", i, key, *time, TPS_TABLE_MIN_US,
                       TPS_TABLE_MAX_US);
  if (jnum(b, "alg_bw", alg) || jnum(b, "bus_bw", bus))
    return tps_err_set(e, path, ln, "results[%zu].%s: alg_bw or bus_bw missing or not finite", i, key);
  if (*alg < 0 || *alg > MAX_BW_GBPS || *bus < 0 || *bus > MAX_BW_GBPS)
    return tps_err_set(e, path, ln, "results[%zu].%s: bandwidth outside 0..%g GB/s", i, key, MAX_BW_GBPS);
  json_t *w = json_object_get(b, "nwrong");
  *wrong = NAN;
  if (json_is_number(w)) *wrong = json_number_value(w);
  if (*wrong > 0)
    return tps_err_set(e, path, ln, "results[%zu]: %g elements wrong (%s): the run failed its data check", i, *wrong, key);
  return 0;
}

int tps_ncclt_is_json_mem(const char *data, size_t len) {
  size_t k = 0;
  if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) k = 3;
  while (k < len && (data[k] == ' ' || data[k] == '\t' || data[k] == '\n' || data[k] == '\r')) k++;
  return k < len && data[k] == '{';
}

int tps_ncclt_is_json(const char *path) {
  tps_buf b;
  tps_err e;
  tps_err_clear(&e);
  if (tps_buf_read(path, &b, &e)) return 0;
  int r = tps_ncclt_is_json_mem(b.data, b.len);
  tps_buf_free(&b);
  return r;
}

int tps_ncclt_read_json(const char *path, tps_ncclt *log, tps_err *e) {
  tps_buf b;
  memset(log, 0, sizeof *log);
  if (tps_buf_read(path, &b, e)) return -1;
  int rc = tps_ncclt_read_json_mem(path, b.data, b.len, log, e);
  tps_buf_free(&b);
  return rc;
}

int tps_ncclt_read_json_mem(const char *path, const char *data, size_t len, tps_ncclt *log, tps_err *e) {
  memset(log, 0, sizeof *log);
  log->nthread = log->ngpus = log->warmup_iters = log->iters = -1;
  if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) { data += 3; len -= 3; } /* UTF-8 byte order mark */
  json_error_t je;
  json_t *root = json_loadb(data, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
  if (!root) return tps_err_set(e, path, je.line, "not valid JSON: %s", je.text);
  int rc = 0;
  long *rl = NULL; /* the line of each results[i] */
  json_t *cfg = json_object_get(root, "config"), *res = json_object_get(root, "results");
  json_t *dev = json_object_get(cfg, "devices");
  if (!dev) dev = json_object_get(root, "devices");
  long v;
  if (!json_is_object(root) || !json_is_array(res) || !json_is_object(cfg)) {
    rc = tps_err_set(e, path, 0, "JSON without \"config\" and \"results\": not an nccl-tests -J file");
    goto done;
  }
  if (!jint(cfg, "nthreads", 1, 1024, &v)) log->nthread = (int)v;
  if (!jint(cfg, "ngpus", 1, 1024, &v)) log->ngpus = (int)v;
  if (!jint(cfg, "warmup_iters", 0, 1e9, &v)) log->warmup_iters = (int)v;
  if (!jint(cfg, "iterations", 0, 1e9, &v)) log->iters = (int)v;
  if (!json_is_array(dev) || json_array_size(dev) == 0 || log->nthread < 1 || log->ngpus < 1) {
    rc = tps_err_set(e, path, 0, "no \"devices\", \"nthreads\" or \"ngpus\": cannot tell the number of ranks");
    goto done;
  }
  size_t nd = json_array_size(dev);
  if (nd > MAX_RANKS || (double)nd * log->nthread * log->ngpus > MAX_RANKS) {
    rc = tps_err_set(e, path, 0, "%zu devices x nthreads %d x ngpus %d is more than %d ranks", nd, log->nthread,
                     log->ngpus, MAX_RANKS);
    goto done;
  }
  log->nranks = (int)nd * log->nthread * log->ngpus;
  log->ranks_from = TPS_NCCLT_RANKS_JSON;
  const char *gname = json_string_value(json_object_get(json_array_get(dev, 0), "device_info"));
  if (gname) copy_trim(log->gpu, sizeof log->gpu, gname);
  if (!jint(root, "version", 0, 1e6, &v)) snprintf(log->version, sizeof log->version, "json %ld", v);
  snprintf(log->collective, sizeof log->collective, "all_gather_perf");
  log->layout = TPS_NCCLT_CURRENT;
  log->nruns = log->run = 1;
  size_t n = json_array_size(res);
  log->row = calloc(n ? n : 1, sizeof *log->row);
  rl = calloc(n ? n : 1, sizeof *rl);
  if (!log->row || !rl) { rc = tps_err_oom(e, "reading %s", path); goto done; }
  result_lines(data, len, rl, n);
  for (size_t i = 0; i < n && !rc; i++) {
    json_t *r = json_array_get(res, i);
    tps_ncclt_row *w = &log->row[log->n];
    memset(w, 0, sizeof *w);
    const char *exp = json_string_value(json_object_get(r, "experiment_name"));
    if (exp && !is_allgather_name(exp)) {
      rc = tps_err_set(e, path, rl[i], "results[%zu]: %s log, not all_gather (not an all_gather_perf log (%s))", i, exp, exp);
      break;
    }
    const char *type = json_string_value(json_object_get(r, "type"));
    const char *redop = json_string_value(json_object_get(r, "redop"));
    long cnt;
    if (jnum(r, "size", &w->size_bytes) || jint(r, "count", 0, MAX_SIZE, &cnt) || !type || w->size_bytes < 0 ||
        w->size_bytes > MAX_SIZE || w->size_bytes != floor(w->size_bytes) || !is_type_name(type)) {
      rc = tps_err_set(e, path, rl[i], "results[%zu]: size, count or type missing or malformed", i);
      break;
    }
    w->count = cnt;
    snprintf(w->type, sizeof w->type, "%s", type);
    if (redop) {
      if (strlen(redop) >= sizeof w->redop) { rc = tps_err_set(e, path, rl[i], "results[%zu]: bad redop", i); break; }
      snprintf(w->redop, sizeof w->redop, "%s", redop);
      if (strcmp(redop, "none") != 0) {
        rc = tps_err_set(e, path, rl[i], "results[%zu]: redop '%s': a reduction, not an all-gather", i, redop);
        break;
      }
    }
    const char *root_s = json_string_value(json_object_get(r, "root"));
    w->root = -1;
    if (root_s) {
      long rv;
      if (tps_parse_range(skip_ws(root_s), -1, 65535, &rv) != 0) {
        rc = tps_err_set(e, path, rl[i], "results[%zu]: root '%s' is not a rank", i, root_s);
        break;
      }
      w->root = (int)rv;
      if (rv >= 0) {
        rc = tps_err_set(e, path, rl[i], "results[%zu]: root %ld: a rooted collective, not an all-gather", i, rv);
        break;
      }
    }
    if (jblock(path, i, rl[i], r, "out_of_place", &w->oop_time_us, &w->oop_algbw_gbps, &w->oop_busbw_gbps, &w->oop_wrong, e) ||
        jblock(path, i, rl[i], r, "in_place", &w->ip_time_us, &w->ip_algbw_gbps, &w->ip_busbw_gbps, &w->ip_wrong, e)) {
      rc = -1;
      break;
    }
    double *st[2][4] = {{&w->oop_min_us, &w->oop_max_us, &w->oop_p99_us, &w->oop_cv_pct},
                        {&w->ip_min_us, &w->ip_max_us, &w->ip_p99_us, &w->ip_cv_pct}};
    static const char *const pk[2] = {"out_of_place_per_iter", "in_place_per_iter"};
    static const char *const sk[4] = {"min_us", "max_us", "p99_us", "cv_pct"};
    for (int b = 0; b < 2; b++) {
      json_t *pi = json_object_get(r, pk[b]);
      for (int k = 0; k < 4; k++)
        if (!pi || jnum(pi, sk[k], st[b][k]) || *st[b][k] < 0 || *st[b][k] > TPS_TABLE_MAX_US) *st[b][k] = NAN;
      if (pi && b == 0) log->has_iter_stats = 1;
    }
    w->line = rl[i];
    if (w->size_bytes == 0) continue; /* -b 0, as in text logs */
    log->n++;
  }
  if (!rc && log->n == 0) rc = tps_err_set(e, path, 0, "no results in the nccl-tests JSON file");
  for (size_t i = 0; i < log->n && !rc; i++) {
    const tps_ncclt_row *r = &log->row[i];
    int ts = tps_ncclt_type_size(r->type);
    if (ts && r->size_bytes != (double)r->count * ts * log->nranks)
      rc = tps_err_set(e, path, r->line, "results[%zu]: size %.0f != count %ld * %d bytes (%s) * %d ranks", i, r->size_bytes,
                       r->count, ts, r->type, log->nranks);
  }
  if (!rc)
    snprintf(log->note, sizeof log->note, "all_gather_perf (-J JSON); ranks %d from %zu devices x nthreads %d x ngpus %d",
             log->nranks, nd, log->nthread, log->ngpus);
done:
  free(rl);
  json_decref(root);
  if (rc) tps_ncclt_free(log);
  return rc;
}
