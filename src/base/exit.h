/* exit.h: the exit codes of every command, one table (README.md "Exit status", the man page's
 * EXIT STATUS and `tpsplit --help` print the same; tests/cli/errors.sh runs every command into
 * each row):
 *   0    ok (`decide`: split; `validate`: within tolerance)
 *   1    the task ran but failed or its verdict is negative (`decide`: no split; `validate`:
 *        outside tolerance; a fit that did not converge; a failed GPU check; no GPU for `bench`
 *        or `calibrate`), or the machine ran out (memory, a full disk: the message has the errno
 *        text): TPS_ERR_RESOURCE of src/base/err.h
 *   2    usage or input error: a bad option or value ("tpsplit CMD: what (try 'tpsplit CMD
 *        --help')"), an input that is missing, unreadable or malformed, an output that cannot be
 *        created or would replace an input ("tpsplit CMD: FILE[:LINE]: what"); nothing written
 *   77   the tests only: skipped (no GPU can be opened)
 *   130, 143  interrupted by SIGINT, SIGTERM (the signal re-raised: 128 + its number; no
 *        temporary or partial output file is left)
 */
#ifndef TPS_EXIT_H
#define TPS_EXIT_H
enum { TPS_EXIT_OK = 0, TPS_EXIT_FAIL = 1, TPS_EXIT_USAGE = 2, TPS_EXIT_SKIP = 77 };
#endif
