/* exit.h: the exit codes of every command (one table; the README and --help show it).
 *   0  ok (for `decide`: split)
 *   1  the task ran but failed or its verdict is negative (validation outside tolerance,
 *      `decide`: do not split, a bench whose correctness check failed, a fit that did not converge)
 *   2  usage or input error (bad option, missing/malformed file, unknown GPU, impossible TP)
 */
#ifndef TPS_EXIT_H
#define TPS_EXIT_H
enum { TPS_EXIT_OK = 0, TPS_EXIT_FAIL = 1, TPS_EXIT_USAGE = 2 };
#endif
