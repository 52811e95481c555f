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
 * Every integer is range-checked on the string before any arithmetic.  Pass 3's rank count
 * and checks are ncclt_rows.c too; -J JSON files ncclt_json.c. */
#include "config.h"
#include "src/io/ncclt.h"
#include "src/io/ncclt_int.h"
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "src/io/measure.h"
#include "src/io/table.h" /* the time and size ranges every reader checks */
#include "src/base/util.h"


/* ------------------------------------------------------------------ small helpers */

const char *ncclt_skip_ws(const char *s) {
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
    const char *s = ncclt_skip_ws(out);
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
        const char *q = ncclt_skip_ws(out);
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
    const char *r = ncclt_skip_ws(out);
    *cut = *r != '\0';
  }
}

/* Split s on blanks into tok (pointers into buf).  Tokens "N:" (srun labels inside a row)
 * are dropped when srun is set.  Returns the count, MAXTOK + 1 when there are more. */
int ncclt_tokenize(const char *s, char *buf, size_t bufsz, char **tok, int srun) {
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

/* A whole number of at most 16 digits (<= 2^50 after the check), or -1. */
double ncclt_whole(const char *s) {
  size_t n = strlen(s);
  if (n == 0 || n > 16 || !all_digits(s, n)) return -1;
  double v = strtod(s, NULL);
  return v <= MAX_SIZE ? v : -1;
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
  int nt = ncclt_tokenize(head, buf, sizeof buf, tok, srun);
  if (nt > MAXTOK) nt = MAXTOK;
  /* two whole numbers, then a type name (or nothing: a row cut short) */
  return nt >= 2 && all_digits(tok[0], strlen(tok[0])) && all_digits(tok[1], strlen(tok[1])) &&
         (nt == 2 || ncclt_is_type_name(tok[2]));
}

/* ------------------------------------------------------------------ pass 2: runs */


void ncclt_copy_trim(char *dst, size_t dstsz, const char *src) {
  src = ncclt_skip_ws(src);
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
  int nt = ncclt_tokenize(s, buf, sizeof buf, tok, 0);
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
  int nt = ncclt_tokenize(s, buf, sizeof buf, tok, 0);
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
  return strncmp(s, "Rank ", 5) == 0 && isdigit((unsigned char)*ncclt_skip_ws(s + 5));
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
    const char *s = ncclt_skip_ws(out);
    if (s[0] == '#') {
      s = ncclt_skip_ws(s + 1);
      int w, a, b;
      if (is_preamble(s, &w) || strncmp(s, "Using devices", 13) == 0 || is_rank_line(s) || is_header(s, &a, &b))
        return 1;
      continue;
    }
    if (row_start(s, srun)) {
      /* a row of an nccl-tests layout: 11..23 fields, not tab-separated (our TSV is) */
      if (strchr(tx->line[i], '\t')) return 0;
      char buf[1024], *tok[MAXTOK];
      int nt = ncclt_tokenize(s, buf, sizeof buf, tok, srun);
      if (nt >= 11 && nt <= 23 && ++rows >= 1) return 1;
    }
  }
  return 0;
}


int ncclt_is_allgather_name(const char *s) { return strstr(s, "all_gather") != NULL || strstr(s, "allgather") != NULL; }

int ncclt_is_reduction(const char *op) {
  static const char *const ops[] = {"sum", "prod", "max", "min", "avg", "premulsum", "mulsum"};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(op, ops[i]) == 0) return 1;
  return 0;
}

/* ------------------------------------------------------------------ the parser */

static void run_free(run_t *r, size_t n) {
  for (size_t i = 0; i < n; i++) free(r[i].rows);
  free(r);
}

static const char *run_name(const run_t *r) { return r->name[0] ? r->name : r->guess[0] ? r->guess : "all_gather_perf?"; }



/* The signs of an unnamed run's first row that make it another collective: fills R->guess
 * ("all_reduce_perf?" ...), used to choose among runs and to list them. */
static void quick_sign(run_t *R, const cline *cl, int srun) {
  if (R->name[0] || R->nrows == 0) return;
  char buf[1024], *tok[MAXTOK];
  int nt = ncclt_tokenize(cl[R->rows[0]].s, buf, sizeof buf, tok, srun), lead, stats, ts;
  if (nt > MAXTOK || ncclt_layout_of(tok, nt, &lead, &stats, &ts) != 0) return;
  long root;
  if (lead >= 4 && ncclt_is_reduction(tok[3])) snprintf(R->guess, sizeof R->guess, "a reduction (redop %.8s)", tok[3]);
  else if (lead == 5 && tps_parse_range(tok[4], 0, 65535, &root) == 0) snprintf(R->guess, sizeof R->guess, "rooted (root %ld)", root);
  else if (lead == 4) snprintf(R->guess, sizeof R->guess, "rooted (a root column)");
  else if (lead == 3 && R->hdr && R->hdr_redop) snprintf(R->guess, sizeof R->guess, "alltoall_perf?");
}

void tps_ncclt_free(tps_ncclt *log) {
  free(log->row);
  memset(log, 0, sizeof *log);
}

int tps_ncclt_parse(const tps_text *tx, tps_ncclt *log, tps_err *e) { return tps_ncclt_parse_opts(tx, NULL, log, e); }

/* The state of one parse: the cleaned lines (pass 1), the runs (pass 2), the run picked. */
typedef struct {
  const tps_text *tx;
  const char *path;
  const tps_ncclt_read_opts *o;
  tps_ncclt *log;
  tps_err *e;
  int srun;
  cline *cl;
  run_t *runs;
  size_t nruns, capruns;
  size_t pick;
} pstate;

/* Pass 1: every line cleaned; only '#' lines and lines starting with a digit are kept (rows
 * and their continuations): the others (launcher chatter, NCCL messages) are not. */
static int clean_all(pstate *P) {
  const tps_text *tx = P->tx;
  P->cl = calloc(tx->n ? tx->n : 1, sizeof *P->cl);
  char *out = malloc(TPS_TEXT_MAX_LINE + 2);
  if (!P->cl || !out) { free(out); return tps_err_oom(P->e, "reading %s", P->path); }
  for (size_t i = 0; i < tx->n; i++) {
    int cut;
    clean_line(tx->line[i], out, TPS_TEXT_MAX_LINE + 2, &cut, &P->srun);
    P->cl[i].ln = (long)i + 1;
    P->cl[i].cut = cut;
    const char *c = ncclt_skip_ws(out);
    static char empty[1];
    if (*c != '#' && !isdigit((unsigned char)*c)) { P->cl[i].s = empty; P->cl[i].other = *c != '\0'; P->cl[i].cut = 0; continue; }
    if (!(P->cl[i].s = strdup(c))) { free(out); return tps_err_oom(P->e, "reading %s", P->path); }
    P->cl[i].own = 1;
  }
  free(out);
  for (size_t i = 0; i < tx->n; i++) P->cl[i].row = row_start(P->cl[i].s, P->srun);
  return 0;
}

/* A new run from line ln; NULL when out of memory (said). */
static run_t *new_run(pstate *P, long ln) {
  if (P->nruns == P->capruns) {
    size_t nc = P->capruns ? 2 * P->capruns : 4;
    run_t *nrp = realloc(P->runs, nc * sizeof *nrp);
    if (!nrp) { tps_err_oom(P->e, "reading %s", P->path); return NULL; }
    P->runs = nrp;
    P->capruns = nc;
  }
  run_t *R = &P->runs[P->nruns++];
  memset(R, 0, sizeof *R);
  R->nthread = R->ngpus = R->warmup = R->iters = -1;
  R->first = ln;
  return R;
}

/* A tpsplit bench allgather log's "# Gather: X" line (c after "Gather:"): the backend it
 * names, auto over custom over nccl, the first line of the highest kept. */
static void note_gather(tps_ncclt *log, const char *c, long ln) {
  static const char *const rank[] = {"nccl", "custom", "auto"};
  char w[16] = "";
  if (sscanf(c, " %15[a-z]", w) != 1) return;
  int have = -1, got = -1;
  for (int k = 0; k < 3; k++) {
    if (!strcmp(log->gather, rank[k])) have = k;
    if (!strcmp(w, rank[k])) got = k;
  }
  if (got > have) {
    snprintf(log->gather, sizeof log->gather, "%s", rank[got]);
    log->gather_line = ln;
  }
}

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
      const char *c = ncclt_skip_ws(s + 1);
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
      second = ncclt_skip_ws(second);
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

/* Pass 2, a '#' line i (c: after the '#'): preamble, header, Rank, "Using devices" and
 * footer lines start, fill or end runs.  0, or -1 (said). */
static int hash_line(pstate *P, run_t **Rp, size_t i, const char *c) {
  const cline *cl = P->cl;
  run_t *R = *Rp;
  int which, hr, ho;
  if (strncmp(c, "Gather:", 7) == 0) note_gather(P->log, c + 7, cl[i].ln);
  if (is_preamble(c, &which)) {
    if (R && R->nrows > 0 && !R->ended) { inside_table(P->path, cl[i].ln, c, R, cl, P->e); return -1; }
    int again = R && (R->nrows > 0 || R->ended || (which == 0 && R->version[0]) || (which == 1 && R->name[0]) ||
                      (which == 2 && R->nthread_seen));
    if ((!R || again) && !(*Rp = R = new_run(P, cl[i].ln))) return -1;
    if (which == 0) {
      char buf[sizeof R->version];
      ncclt_copy_trim(buf, sizeof buf, c + 18);
      buf[strcspn(buf, " \t")] = '\0';
      snprintf(R->version, sizeof R->version, "%s", buf);
    } else if (which == 1) {
      ncclt_copy_trim(R->name, sizeof R->name, c + 25);
      R->name_line = cl[i].ln;
    } else {
      R->nthread_seen = 1;
      R->nthread_line = cl[i].ln;
      if (parse_nthread(P->path, cl[i].ln, c, R, P->e)) return -1;
    }
  } else if (is_header(c, &hr, &ho)) {
    if (R && R->nrows > 0 && !R->ended) { inside_table(P->path, cl[i].ln, c, R, cl, P->e); return -1; }
    if ((!R || R->nrows > 0 || R->ended) && !(*Rp = R = new_run(P, cl[i].ln))) return -1;
    R->hdr = 1; R->hdr_redop = hr; R->hdr_root = ho; R->hdr_line = cl[i].ln;
  } else if (R && is_rank_line(c)) {
    if (R->nranks_lines == 0) {
      const char *b = strchr(c, ']');
      if (b) ncclt_copy_trim(R->gpu, sizeof R->gpu, b + 1), R->gpu_line = cl[i].ln;
    }
    if (R->nranks_lines < MAX_RANKS) R->nranks_lines++;
  } else if (!R && is_rank_line(c)) {
    if (!(*Rp = R = new_run(P, cl[i].ln))) return -1;
    const char *b = strchr(c, ']');
    if (b) ncclt_copy_trim(R->gpu, sizeof R->gpu, b + 1), R->gpu_line = cl[i].ln;
    R->nranks_lines = 1;
  } else if (strncmp(c, "Using devices", 13) == 0) {
    if ((!R || R->nrows > 0 || R->ended) && !(*Rp = R = new_run(P, cl[i].ln))) return -1;
    R->using_devices = 1;
  } else if (strncmp(c, "Collective test concluded:", 26) == 0) {
    if (R) {
      char nm[32];
      ncclt_copy_trim(nm, sizeof nm, c + 26);
      if (!R->name[0]) { snprintf(R->name, sizeof R->name, "%s", nm); R->name_line = cl[i].ln; }
      R->ended = 1;
    }
  } else if (strncmp(c, "Avg bus bandwidth", 17) == 0 || strncmp(c, "Out of bounds", 13) == 0) {
    if (R) R->ended = 1;
  }
  if (R) R->last = cl[i].ln;
  return 0;
}

/* Pass 2: the lines split into runs.  0, or -1 (said). */
static int split_runs(pstate *P) {
  run_t *R = NULL;
  for (size_t i = 0; i < P->tx->n; i++) {
    const char *s = P->cl[i].s;
    if (*s == '#') {
      if (hash_line(P, &R, i, ncclt_skip_ws(s + 1))) return -1;
      continue;
    }
    if (!P->cl[i].row) continue;
    if ((!R || R->ended) && !(R = new_run(P, P->cl[i].ln))) return -1;
    if (R->nrows == R->caprows) {
      size_t nc = R->caprows ? 2 * R->caprows : 64;
      size_t *nrp = realloc(R->rows, nc * sizeof *nrp);
      if (!nrp) return tps_err_oom(P->e, "reading %s", P->path);
      R->rows = nrp; R->caprows = nc;
    }
    R->rows[R->nrows++] = i;
    R->last = P->cl[i].ln;
  }
  if (P->nruns == 0) return tps_err_set(P->e, P->path, 0, "no nccl-tests result rows or preamble (not an nccl-tests log?)");
  return 0;
}

/* Pass 3a: the run read: --run N, else the one all_gather candidate (runs named for another
 * collective are out; unnamed runs are candidates).  0; -1: an error; -2: an error after
 * which the runs are listed. */
static int pick_run(pstate *P) {
  const size_t nruns = P->nruns;
  run_t *runs = P->runs;
  tps_ncclt *log = P->log;
  size_t pick = nruns, ncand = 0, second = nruns;
  if (P->o->run > 0) {
    if ((size_t)P->o->run > nruns)
      return tps_err_set(P->e, P->path, 0, "--run %d: the file holds %zu run%s", P->o->run, nruns, nruns == 1 ? "" : "s"), -2;
    pick = (size_t)P->o->run - 1;
  } else {
    for (size_t k = 0; k < nruns; k++) {
      quick_sign(&runs[k], P->cl, P->srun);
      if (runs[k].nrows == 0 && !runs[k].name[0]) continue;
      if (runs[k].name[0] && !ncclt_is_allgather_name(runs[k].name)) continue;
      if (runs[k].guess[0]) continue;
      if (ncand == 0) pick = k;
      else if (ncand == 1) second = k;
      ncand++;
    }
    if (ncand > 1)
      return tps_err_set(P->e, P->path, runs[second].nthread_line ? runs[second].nthread_line : runs[second].first,
                         "a second nccl-tests run starts here: one run per file, or pick one with --run N"), -2;
    if (ncand == 0 && nruns > 1)
      return tps_err_set(P->e, P->path, 0, "none of the %zu runs in the file is an all_gather run", nruns), -2;
    if (ncand == 0) pick = 0; /* refused below, by name or by its rows */
  }
  P->pick = pick;
  log->nruns = (int)nruns;
  log->run = (int)pick + 1;
  const run_t *R = &runs[pick];
  if (R->name[0] && !ncclt_is_allgather_name(R->name))
    return tps_err_set(P->e, P->path, R->name_line,
                       "%s log, not all_gather: its \"Collective test\" line names it (not an all_gather_perf log (%s))",
                       R->name, R->name), -2;
  snprintf(log->version, sizeof log->version, "%s", R->version);
  snprintf(log->collective, sizeof log->collective, "%s", R->name);
  snprintf(log->gpu, sizeof log->gpu, "%s", R->gpu);
  log->gpu_line = R->gpu_line;
  log->nthread = R->nthread; log->ngpus = R->ngpus; log->warmup_iters = R->warmup; log->iters = R->iters;
  return 0;
}

/* Pass 3b: the rows of run R, by position (a row broken by an NCCL message joined with its
 * rest on a later line that does not start a row).  *rt: their printed tokens (malloc'ed). */
static int read_rows(pstate *P, const run_t *R, row_toks **rt, layout_t *L) {
  tps_ncclt *log = P->log;
  cline *cl = P->cl;
  const char *path = P->path;
  size_t worksz = 2 * (size_t)TPS_TEXT_MAX_LINE + 4;
  log->row = malloc((R->nrows ? R->nrows : 1) * sizeof *log->row);
  *rt = malloc((R->nrows ? R->nrows : 1) * sizeof **rt);
  char *joined = malloc(worksz), *work = malloc(worksz);
  int rc = -1;
  if (!log->row || !*rt || !joined || !work) { tps_err_oom(P->e, "reading %s", path); goto done; }
  for (size_t k = 0; k < R->nrows; k++) {
    size_t i = R->rows[k];
    const char *s = cl[i].s;
    if (cl[i].cut) {
      char buf[1024], *tok[MAXTOK];
      int nt = ncclt_tokenize(s, buf, sizeof buf, tok, P->srun), lead, stats, ts;
      if (nt <= MAXTOK && ncclt_layout_of(tok, nt, &lead, &stats, &ts) != 0) {
        for (size_t j = i + 1; j < P->tx->n && j < i + 8; j++) {
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
    if (ncclt_parse_row(path, cl[i].ln, s, P->srun, L, r, &(*rt)[log->n], work, worksz, &lead, P->e)) goto done;
    if (r->size_bytes == 0) continue; /* -b 0: an empty gather carries no timing information */
    log->n++;
  }
  if (table_lines(P->tx, cl, R, P->e)) goto done;
  log->layout = L->lead == 3 ? TPS_NCCLT_PRE213 : TPS_NCCLT_CURRENT;
  log->has_timestamp = L->ts;
  log->has_iter_stats = L->stats;
  if (log->n == 0) { tps_err_set(P->e, path, R->last, "no result rows in the nccl-tests log (truncated log?)"); goto done; }
  rc = 0;
done:
  free(joined);
  free(work);
  return rc;
}

/* The runs of the file, listed in log->runs; in the note (success) or the error message. */
static void list_runs(pstate *P, int rc) {
  tps_ncclt *log = P->log;
  for (size_t k = 0; k < P->nruns; k++) {
    size_t l = strlen(log->runs);
    snprintf(log->runs + l, sizeof log->runs - l, "%s%zu: %s, lines %ld-%ld", k ? "; " : "", k + 1, run_name(&P->runs[k]),
             P->runs[k].first, P->runs[k].last);
  }
  if (!rc && P->nruns > 1) { /* what else the file holds */
    size_t l = strlen(log->note);
    snprintf(log->note + l, sizeof log->note - l, "; run %zu of %zu [runs: %s]", P->pick + 1, P->nruns, log->runs);
  }
  if (rc && P->nruns > 1) { /* the error lists what is there */
    size_t l = strlen(P->e->msg);
    snprintf(P->e->msg + l, sizeof P->e->msg - l, " [runs: %s]", log->runs);
  }
}

int tps_ncclt_parse_opts(const tps_text *tx, const tps_ncclt_read_opts *o, tps_ncclt *log, tps_err *e) {
  memset(log, 0, sizeof *log);
  log->nthread = log->ngpus = log->warmup_iters = log->iters = -1;
  tps_ncclt_read_opts none = {0, 0};
  pstate P = {tx, tx->path, o ? o : &none, log, e, 0, NULL, NULL, 0, 0, 0};
  row_toks *rt = NULL;
  int rc = -1, at;
  if (clean_all(&P) || split_runs(&P)) goto done;
  if ((at = pick_run(&P)) == -2) goto list;
  if (at) goto done;
  run_t *R = &P.runs[P.pick];
  layout_t L = {0, 0, 0, 0, 0};
  char from[160] = "";
  int n = 0;
  if (read_rows(&P, R, &rt, &L) || ncclt_rank_count(P.path, R, P.o, rt, L.lead, log, from, sizeof from, &n, e) ||
      ncclt_check_allgather(P.path, R, rt, L.lead, n, log, e))
    goto done;
  rc = 0;
  snprintf(log->note, sizeof log->note, "%s%s; ranks %d from %s; %s", log->collective[0] ? log->collective : "all_gather_perf",
           log->collective[0] ? "" : " (not named in the log: all_gather assumed from its rows)", n, from,
           log->bw_old ? "algbw printed equal to busbw (nccl-tests before June 2020): algbw recomputed as size/time"
                       : "algbw = size/time, busbw = algbw (n-1)/n as printed");
list:
  list_runs(&P, rc);
done:
  if (P.cl)
    for (size_t i = 0; i < tx->n; i++)
      if (P.cl[i].own) free(P.cl[i].s);
  free(P.cl);
  free(rt);
  run_free(P.runs, P.nruns);
  if (rc) {
    char keep[sizeof log->runs];
    memcpy(keep, log->runs, sizeof keep);
    tps_ncclt_free(log);
    memcpy(log->runs, keep, sizeof keep);
  }
  return rc;
}

/* ------------------------------------------------------------------ normalized: the record
 * nccl-tests log (text or JSON, already parsed; freed here) -> all-gather table. */
int tps_table_from_ncclt(tps_ncclt *lp, tps_table *t, tps_err *e) {
  tps_ncclt log = *lp;
  int rc = 0;
  size_t n = log.n;
  t->kind = TPS_TABLE_ALLGATHER;
  snprintf(t->source, sizeof t->source, "nccl-tests");
  snprintf(t->gpu, sizeof t->gpu, "%s", log.gpu);
  t->gpu_line = log.gpu_line;
  snprintf(t->type, sizeof t->type, "%s", log.row[0].type);
  t->ranks = log.nranks;
  t->nextra = log.has_iter_stats ? 4 : 0;
  static const char *const xn[4] = {"i_min_us", "i_max_us", "i_p99_us", "i_cv_pct"};
  t->bytes = malloc(n * sizeof *t->bytes);
  t->time_us = malloc(n * sizeof *t->time_us);
  t->time_inplace_us = malloc(n * sizeof *t->time_inplace_us);
  t->count = malloc(n * sizeof *t->count);
  t->line = malloc(n * sizeof *t->line);
  t->extra = calloc(4, sizeof *t->extra);
  t->extra_name = calloc(4, sizeof *t->extra_name);
  if (!t->bytes || !t->time_us || !t->time_inplace_us || !t->count || !t->line || !t->extra || !t->extra_name) {
    t->nextra = 0;
    rc = tps_err_oom(e, "reading %s", t->path);
    goto done;
  }
  for (size_t j = 0; j < t->nextra; j++) {
    t->extra_name[j] = strdup(xn[j]);
    t->extra[j] = malloc(n * sizeof **t->extra);
    if (!t->extra_name[j] || !t->extra[j]) { rc = tps_err_oom(e, "reading %s", t->path); goto done; }
  }
  for (size_t i = 0; i < n; i++) {
    const tps_ncclt_row *r = &log.row[i];
    if (strcmp(r->type, t->type) != 0) {
      rc = tps_err_set(e, t->path, r->line, "type %s after %s: one type per log, please (run without -d all)", r->type,
                       t->type);
      goto done;
    }
    t->bytes[i] = r->size_bytes;
    t->count[i] = r->count;
    t->time_us[i] = r->oop_time_us;
    t->time_inplace_us[i] = r->ip_time_us;
    t->line[i] = r->line;
    if (t->nextra) {
      t->extra[0][i] = r->oop_min_us; t->extra[1][i] = r->oop_max_us;
      t->extra[2][i] = r->oop_p99_us; t->extra[3][i] = r->oop_cv_pct;
    }
    t->nrows++;
    if (i > 0 && r->size_bytes <= t->bytes[i - 1]) {
      rc = tps_err_set(e, t->path, r->line, "%s size %.0f after %.0f (line %ld): sizes must increase (a log run with -N?)",
                       r->size_bytes == t->bytes[i - 1] ? "duplicate" : "unsorted", r->size_bytes, t->bytes[i - 1],
                       log.row[i - 1].line);
      goto done;
    }
  }
  char buf[256], num[32];
  snprintf(buf, sizeof buf, "nccl-tests%s%s %s log, %d ranks, %s", log.version[0] ? " " : "", log.version,
           log.collective[0] ? log.collective : "all_gather_perf", log.nranks, log.gpu[0] ? log.gpu : "GPU unknown");
  snprintf(num, sizeof num, "%d", log.nranks);
  /* the user is told how the log was read when it was not plain: ranks not from Rank lines,
   * the old bandwidth convention, one run of several, a collective the log does not name */
  if ((log.ranks_from != TPS_NCCLT_RANKS_LINES && log.ranks_from != TPS_NCCLT_RANKS_JSON) || log.bw_old ||
      log.nruns > 1 || !log.collective[0])
    snprintf(t->note, sizeof t->note, "%s", log.note);
  char how[sizeof log.note + 16];
  snprintf(how, sizeof how, "read as: %s", log.note);
  if (tps_table_add_prov(t, buf) || (log.note[0] && tps_table_add_prov(t, how)) || (log.gpu[0] && tps_table_add_meta(t, "gpu", log.gpu)) ||
      tps_table_add_meta(t, "ranks", num) || tps_table_add_meta(t, "gather", "nccl") || tps_table_add_meta(t, "type", t->type))
    rc = tps_err_oom(e, "reading %s", t->path);
  snprintf(t->gather, sizeof t->gather, "nccl");
  snprintf(t->log_gather, sizeof t->log_gather, "%s", log.gather);
  t->log_gather_line = log.gather_line;
done:
  tps_ncclt_free(&log);
  return rc;
}

/* ------------------------------------------------------------------ the loader's format
 * (src/io/measure.h): a text with an nccl-tests preamble, Rank lines, a result header or
 * rows (a tpsplit bench allgather log too), normalized to an all-gather table. */
static int text_sniff(const char *data, size_t len) {
  tps_text tx;
  tps_err e;
  if (tps_text_from_buf("-", data, len, 0, &tx, &e)) return 0; /* our TSV reader says what is wrong */
  int is = tps_ncclt_detect(&tx);
  tps_text_free(&tx);
  return is;
}

static int text_read(const char *path, const char *data, size_t len, const tps_aic_filter *sel, tps_meas *m, tps_err *e) {
  (void)sel;
  tps_table *t = tps_meas_table(m, path, e);
  if (!t) return -1;
  tps_text tx;
  if (tps_text_from_buf(path, data, len, 0, &tx, e)) return -1;
  tps_ncclt log;
  const tps_ncclt_opts *no = tps_table_ncclt_opts();
  tps_ncclt_read_opts o = {no->run, no->ranks};
  int rc = tps_ncclt_parse_opts(&tx, &o, &log, e) ? -1 : tps_table_from_ncclt(&log, t, e);
  if (!rc) rc = tps_text_check_end(&tx, e);
  tps_text_free(&tx);
  return rc;
}

const tps_format tps_format_ncclt = {"ncclt", TPS_MEAS_TABLE, text_sniff, text_read};
