/* console.c: the messages of a calibration run, its progress line (on a terminal), and the
 * guard of its temporary output: SIGINT/SIGTERM/SIGHUP and a watchdog remove the temporary
 * file, so that an interrupted run leaves no file that looks complete. */
#include "config.h"
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "src/cli/calibrate/cal.h"
#include "src/cli/tpsplit.h"
#include "src/base/util.h"

static const opts *cur_opts;
static int tty;            /* stderr is a terminal: one progress line, rewritten */
static double t0_s;
static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
/* The clock of the budget: the monotonic wall clock; tests/cli/calib_mock.c sets its own (the
 * process's CPU time plus the mock GPU's pauses, not slept), so that its budget cases do not
 * depend on how loaded the machine is. */
static double (*clock_s)(void) = now_s;
void cal_set_clock(double (*fn)(void)) { clock_s = fn ? fn : now_s; }
double cal_elapsed_s(void) { return clock_s() - t0_s; }

void cal_console_start(const opts *o) {
  tty = isatty(2);
  t0_s = clock_s();
  cur_opts = o;
}

static char prog_line[256];

/* A message line (the progress line, on a terminal, is cleared first and drawn again). */
void cal_say(const char *fmt, ...) {
  va_list ap;
  if (tty) fputs("\r\033[K", stderr);
  fputs("calibrate: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  if (tty && prog_line[0]) fprintf(stderr, "%s", prog_line);
}

/* The progress line: on a terminal only, rewritten in place. */
void cal_progress(const char *fmt, ...) {
  if (!tty) return;
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(prog_line, sizeof prog_line, "calibrate: [%5.1f / %.0f s] %s", cal_elapsed_s(), cur_opts ? cur_opts->budget_s : 0.0, msg);
  fprintf(stderr, "\r\033[K%s", prog_line);
}
void cal_progress_end(void) {
  if (tty && prog_line[0]) fputs("\r\033[K", stderr);
  prog_line[0] = 0;
}

void cal_progress_forget(void) { prog_line[0] = 0; }

/* ------------------------------------------------------------------ interruption */

/* The temporary output, removed by a signal or the watchdog before the process ends. */
static char tmp_path_sig[4096];
static volatile sig_atomic_t tmp_live;

static void on_signal(int sig) {
  if (tmp_live) unlink(tmp_path_sig);
  static const char m1[] = "\ntpsplit: calibrate: interrupted: no thresholds file written\n";
  static const char m2[] = "\ntpsplit: calibrate: watchdog: no progress long past the budget (a hung GPU?): aborted, no thresholds file written\n";
  if (sig == SIGALRM) { ssize_t w = write(2, m2, sizeof m2 - 1); (void)w; _exit(TPS_EXIT_FAIL); }
  ssize_t w = write(2, m1, sizeof m1 - 1);
  (void)w;
  _exit(128 + sig);
}

void cal_guard(const tps_outfile *of, double budget_s) {
  if (of->tmp_path) {
    snprintf(tmp_path_sig, sizeof tmp_path_sig, "%s", of->tmp_path);
    tmp_live = 1;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  sigaction(SIGALRM, &sa, NULL);
  /* the bench harness times out a hung gather (10 s, NCCL init 60 s) but not a hung GEMM:
   * past three budgets and two minutes nothing legitimate is still running */
  alarm((unsigned)(3 * budget_s + 120));
}

void cal_unguard(void) {
  alarm(0);
  tmp_live = 0;
}