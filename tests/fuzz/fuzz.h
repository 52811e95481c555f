/* fuzz.h: what every harness in tests/fuzz/ shares.
 *
 * Each harness defines LLVMFuzzerTestOneInput for one parser.  Built two ways:
 *  - `make fuzz` (clang -fsanitize=fuzzer,address,undefined): a libFuzzer binary,
 *    tests/fuzz/bin/fuzz_NAME, run by tests/fuzz/run.sh;
 *  - `make check` (any C compiler): the same function linked with replay_main.c, which feeds
 *    it every file of the seed folder and of the crash corpus (tests/cli/fuzz_replay.sh): every
 *    crash ever found stays a regression test, with or without clang.
 * A harness must not leak, print or exit: errors are the parser's normal answer. */
#ifndef TPS_FUZZ_H
#define TPS_FUZZ_H
#include <stddef.h>
#include <stdint.h>
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#endif
