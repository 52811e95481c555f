/* jsonout.h: the few jansson helpers every --json output uses.
 * Numbers are numbers, NaN and inf become null, keys are sorted, 2-space indent,
 * 17 significant digits (doubles round-trip). */
#ifndef TPS_JSONOUT_H
#define TPS_JSONOUT_H
#include <jansson.h>
#ifdef __cplusplus
extern "C" {
#endif

/* A real, or null when x is not finite. Never returns NULL. */
json_t *tps_json_num(double x);
/* Set obj[key] = tps_json_num(x). */
int tps_json_set_num(json_t *obj, const char *key, double x);
/* Dump to stdout followed by a newline, then json_decref(root). 0 ok, -1 on write error. */
int tps_json_print(json_t *root);

#ifdef __cplusplus
}
#endif
#endif
