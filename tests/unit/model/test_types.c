/* test_types.c: the gather backends and kernel paths as named types (model/core/backend.h,
 * path.h): the roles found by their fields, the rule's pick at and over the cap, where a
 * backend refuses to run, and the one latency term a backend is priced by
 * (model/latency/allgather.h), checked against values computed by hand here. */
#include <math.h>
#include <string.h>
#include "model/core/backend.h"
#include "model/core/path.h"
#include "model/latency/allgather.h"
#include "model/latency/xgather.h"
#include "tests/unit/expect.h"

int main(void) {
  const double MiB = 1024.0 * 1024.0;
  const int nccl = tps_gather_parse("nccl"), custom = tps_gather_parse("custom"), autob = tps_gather_parse("auto");
  CHECK(nccl >= 0 && custom >= 0 && autob >= 0, "the three names parse");
  /* roles come from the fields, not the ids */
  CHECK(tps_gather_fallback() == nccl && tps_gather_capped() == custom && tps_gather_rule() == autob, "roles");
  CHECK(tps_gather_is_rule(autob) && !tps_gather_is_rule(nccl) && !tps_gather_is_rule(custom), "is_rule");
  CHECK(tps_gather_is_capped(custom) && !tps_gather_is_capped(nccl) && !tps_gather_is_capped(autob), "is_capped");
  CHECK(tps_gather_cap_default() == 2 * MiB, "the cap is 2 MiB (vLLM's custom all-gather): %g", tps_gather_cap_default());
  CHECK(tps_gather_term_of(nccl) == TPS_GATHER_TERM_RING && tps_gather_term_of(custom) == TPS_GATHER_TERM_ONESHOT &&
            tps_gather_term_of(autob) == TPS_GATHER_TERM_RULE, "terms");
  CHECK(!tps_gather_get(-1) && !tps_gather_get(TPS_NGATHERS) && tps_gather_get(custom)->id == (tps_gather_id)custom, "get");
  /* the rule: custom up to the cap where it can run, nccl above or where it cannot */
  CHECK(tps_gather_pick(autob, 2 * MiB, 0, 1) == custom, "auto at the cap");
  CHECK(tps_gather_pick(autob, 2 * MiB + 1, 0, 1) == nccl, "auto over the cap");
  CHECK(tps_gather_pick(autob, 1 * MiB, 0, 0) == nccl, "auto where custom cannot run");
  CHECK(tps_gather_pick(autob, 3 * MiB, 4 * MiB, 1) == custom, "auto under a larger cap set by the run");
  CHECK(tps_gather_pick(custom, 3 * MiB, 0, 1) == nccl, "custom over its cap falls back");
  CHECK(tps_gather_pick(nccl, 1, 0, 1) == nccl && tps_gather_pick(nccl, 1e12, 0, 0) == nccl, "nccl takes every size");
  CHECK(!tps_gather_refuses(nccl, 0, 16, 8) && !tps_gather_refuses(autob, 0, 16, 8), "nccl and auto run anywhere");
  CHECK(tps_gather_refuses(custom, 0, 8, 8) && tps_gather_refuses(custom, 1, 16, 8) && !tps_gather_refuses(custom, 1, 8, 8),
        "custom: NVLink and one node only");
  CHECK(tps_xga_term(custom) == TPS_XGA_CUSTOM && tps_xga_term(nccl) == TPS_XGA_NCCL, "the cross-GPU model's terms");

  /* the latency term of each backend: 8 ranks, 16 MiB gathered (2 MiB per rank) */
  tps_ag_model a;
  memset(&a, 0, sizeof a);
  for (int p = 0; p < TPS_NPROTO; p++) { a.lat_us[p] = 10.0 + p; a.busbw_gbps[p] = 100.0 * (p + 1); }
  a.custom_floor_us = 5.0;
  a.custom_gbps = 200.0;
  a.custom_cap_bytes = 2 * MiB;
  const double S = 16 * MiB, moved = S * 7 / 8;
  const double oneshot = 5.0 + moved / 200e3;                 /* floor + bytes / bandwidth */
  const double ring = fmin(fmin(10.0 + moved / 100e3, 11.0 + moved / 200e3), 12.0 + moved / 300e3);
  int used = -1;
  CHECK(fabs(tps_ag_time_us(&a, S, 8, autob, &used, NULL) - oneshot) < 1e-9 && used == custom, "auto at the cap: one-shot");
  CHECK(fabs(tps_ag_time_us(&a, S + 8, 8, autob, &used, NULL) - (fmin(fmin(10.0 + (S + 8) * 7 / 8 / 100e3,
        11.0 + (S + 8) * 7 / 8 / 200e3), 12.0 + (S + 8) * 7 / 8 / 300e3))) < 1e-9 && used == nccl, "auto over the cap: ring");
  CHECK(fabs(tps_ag_time_us(&a, S, 8, nccl, &used, NULL) - ring) < 1e-9 && used == nccl, "nccl: ring");
  a.ranks_per_node = 4;
  CHECK(fabs(tps_ag_time_us(&a, S, 8, custom, &used, NULL) - ring) < 1e-9 && used == nccl, "custom across nodes: ring");

  /* paths: the role lookups of the type, by their fields */
  CHECK(tps_path_by_aic_dtype("bfloat16") == &tps_path_dense_bf16 && tps_path_by_aic_dtype("fp8") == &tps_path_native_fp8 &&
            !tps_path_by_aic_dtype("int4") && !tps_path_by_aic_dtype(""), "AIConfigurator dtypes");
  CHECK(!strcmp(tps_path_record_name(&tps_path_w8a16), "marlin-w8a16") &&
            !strcmp(tps_path_record_name(&tps_path_dense_bf16), "dense-bf16"), "the name a measurement is recorded under");
  CHECK((tps_path_w8a16_ref.flags & TPS_PATH_F_REFKERNEL) && !(tps_path_w8a16.flags & TPS_PATH_F_REFKERNEL), "reference kernel");
  CHECK(tps_path_native_fp8.weight_bytes == 1.0 && tps_path_marlin_w8a16.weight_bytes == 1.0 + 1.0 / 32.0 &&
            tps_path_w8a16.weight_bytes == 1.0 + 1.0 / 32.0 && tps_path_dense_bf16.weight_bytes == 2.0, "weight bytes");
  printf("%d checks, %d failed\n", checks, fails);
  return fails != 0;
}
