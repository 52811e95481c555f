/* w8plan.c: the SM90 dispatch of our W8A16 kernels (w8plan.h).  Moved here from
 * kernels/gemm/gemm_w8a16.cu (issue 28 item 3) so that the kernels and the w8a16 latency model
 * ask one rule; the constants are the kernels' measurements, named where they came from. */
#include <math.h>
#include <string.h>
#include "model/core/w8plan.h"

const char *const tps_w8p_kind_names[TPS_W8P_NKIND] = {"stream", "split", "sk", "wgmma"};

static int sms_of(const tps_w8_geom *g) { return g->sms > 0 ? g->sms : 132; }

void tps_w8_geom_default(tps_w8_geom *g, int sms, int n, int k) {
  memset(g, 0, sizeof *g);
  g->sms = sms > 0 ? sms : 132;
  g->n = n;
  g->k = k;
  for (int b = 0; b < 3; b++)
    for (int s = 0; s < 4; s++) g->split_slots[b][s] = g->sms / (1 << s) * (1 << s);
  g->sk_slots[0] = g->sk_slots[1] = g->sk_slots[2] = g->sms;
  g->sk256 = TPS_W8P_SK256_DEFAULT;
  g->sk2fit = TPS_W8P_SK2FIT_DEFAULT;
  g->sk_dpw = -1;
  g->sk_even = TPS_W8P_SKEVEN_DEFAULT;
  g->sk_rs = TPS_W8P_SKRS_DEFAULT;
  g->sk_tail = 0;
  g->sk_blocks = g->sms;
  g->stream_max = 64;
  g->head = -1;
}

int tps_w8_stream_tile(const tps_w8_geom *g, int m) {
  const int o = g->stream_bt;
  if (o == 16 || o == 32 || o == 48 || o == 64 || o == 128) return o;
  return m <= 16 ? 16 : m <= 32 ? 32 : m <= 48 ? 48 : m <= 64 ? 64 : 128;
}

/* The split kernel's tile and split-K for m rows: the (tile, split) of least modelled time,
 * waves x chunks per block x time per chunk (+ the partial-sum exchange).  us per 64-wide chunk
 * and block, measured on an H100 (K 5120 N 1792 and K 7168 N 2112, 20 samples,
 * tools/device/run_w8a16.sh sweep, 2026-12-05): 0.35 (64 tokens) and 0.44 (128) without
 * split-K; in clusters 0.40 and 0.50 (ncu: the main loop's share of a split launch); + the
 * exchange: each block sends (S-1)/S of its fp32 partials at ~30 GB/s (SM to SM).  The
 * 256-token tile only with s256: measured on an H200 it loses at 257..512 rows and wins 2-8% at
 * 768..1024 (data/h200_w8a16_s256.txt); its chunk costs come from the 256-token wgmma pass. */
double tps_w8_split_pick(const tps_w8_geom *g, int m, int *bt, int *splits) {
  static const int bts[] = {64, 128, 256};
  static const double chunk_us[3][2] = {{0.35, 0.40}, {0.44, 0.50}, {0.72, 0.80}};
  const int sms = sms_of(g), nrb = (g->n + 127) / 128, kall = g->k / 64;
  double best = 1e30;
  *bt = 128;
  *splits = 1;
  const int nb = g->s256 == 1 ? 3 : 2;
  for (int b = 0; b < nb; b++)
    for (int si = 0, sp = 1; sp <= 8; si++, sp *= 2) {
      const int slots = g->split_slots[b][si] > 0 ? g->split_slots[b][si] : sms;
      const long long blocks = (long long)nrb * ((m + bts[b] - 1) / bts[b]) * sp, waves = (blocks + slots - 1) / slots;
      const double sent_us = (double)(sp - 1) / sp * bts[b] * 128 * 4 / 30e3;
      const double t = waves * (((kall + sp - 1) / sp) * chunk_us[b][sp > 1] + (sp > 1 ? 1.5 + sent_us : 0.5));
      if (t < best - 1e-9) { best = t; *bt = bts[b]; *splits = sp; }
    }
  return best;
}

/* the wgmma kernel with 256-token tiles (one pass over K per block, ~0.72 us per chunk) */
double tps_w8_wgmma256_us(const tps_w8_geom *g, int m) {
  const int sms = sms_of(g), nrb = (g->n + 127) / 128;
  const long long blocks = (long long)nrb * ((m + 255) / 256), waves = (blocks + sms - 1) / sms;
  return (double)waves * (g->k / 64) * 0.72 + 0.5;
}

static double sk2_time(const tps_w8_geom *g, int m, int grid, int dpw);
/* the grid of every resident block (or of every iteration, when fewer) */
static int sk_grid_all(const tps_w8_geom *g, int m, int bt, int *slots_out) {
  int slots = g->sk_slots[bt <= 64 ? 0 : bt <= 128 ? 1 : 2];
  if (slots <= 0) slots = sms_of(g);
  if (g->sk_blocks > 0 && slots > g->sk_blocks) slots = g->sk_blocks;
  if (g->sk_grid_max > 0 && g->sk_grid_max < slots) slots = g->sk_grid_max;
  if (bt > 128 && slots > TPS_W8_SK2_MAXG) slots = TPS_W8_SK2_MAXG;
  *slots_out = slots;
  const long long iters = (long long)((g->n + 127) / 128) * ((m + bt - 1) / bt) * (g->k / 64);
  return iters < slots ? (int)iters : slots;
}
/* The 256-token form on an even grid (sk_even): p blocks a tile, each exactly 1/p of its K range, no
 * whole waves first, so a tile is cut into p equal pieces or none: G = tiles x p within the resident
 * blocks, K / 64 a multiple of p, p <= 8, and G at least 2/3 of the resident blocks (a floor set
 * between measured losers and winners, not a model: on 84 of 132 blocks, K 5120 640 and 768 rows,
 * the even grid measured 1.6% and 4.0% slower than the pick before it, on 98..126 of 132 4-11%
 * faster at ten M of both shapes; tools/device/run_s22_3.sh, data/h100_w8a16_s22.txt).  The grid
 * of every resident block leaves uneven cuts where the tiles do not divide it (K 5120 N 1792, 1024
 * rows: 56 tiles on 132 blocks, 39.3 us; on 112, two pieces a tile, 34.2), and the wgmma pass runs
 * the same tiles at 0.72 us a chunk where this form's core runs 0.62 (data/h100_w8a16_s21.txt call
 * 1).  Priced by the line measured there on such grids
 * (forced, no whole waves first, K 5120 N 1792, 256..1024 rows): SKEVEN_CHUNK_US a chunk of a block +
 * SKEVEN_FIXED_US (10 launches of whole tiles, no fix-up), and SKEVEN_FIX_US + SKEVEN_PIECE_US x (p -
 * 1) for a tile cut into p pieces (13 launches, 2..8 pieces).  doc/gemm-kernels.md, "What the stream-K
 * fix-up costs"; tests/cli/w8fixup.sh recomputes the four from the data file and compares them here. */
#define SKEVEN_CHUNK_US 0.620
#define SKEVEN_FIXED_US 2.67
#define SKEVEN_FIX_US 4.72
#define SKEVEN_PIECE_US 1.45
/* The reduce-scatter fix-up (sk_rs, the default): each of a tile's p blocks writes the partials of the other
 * blocks' slices, waits for all p, adds the others' partials of its 1/p and stores it.  Over the line above, least
 * squares through 26 launches of both shapes (p 2, 4, 7, 8; K 5120 256..1024 rows, K 7168 256..768; forced and
 * default grids, tools/device/run_s23_1.sh, data/h100_w8a16_s23.txt): SKRS_FIX_US + SKRS_PIECE_US x (p - 1); the
 * owner's fix-up in the same call 4.51 + 1.69 x (p - 1) at 13 launches (tests/cli/w8rs.sh recomputes all four). */
#define SKRS_FIX_US 3.90
#define SKRS_PIECE_US 1.16
int tps_w8_sk_even(const tps_w8_geom *g, int m, int grid) {
  const long long tiles = (long long)((g->n + 127) / 128) * ((m + 255) / 256);
  const int C = g->k / 64;
  if (g->sk_even != 1 || tiles < 1 || grid < tiles || grid % tiles) return 0;
  const long long p = grid / tiles;
  return p <= 8 && C % p == 0 ? (int)p : 0;
}
int tps_w8_sk_grid(const tps_w8_geom *g, int m, int bt) {
  int slots;
  const int all = sk_grid_all(g, m, bt, &slots);
  if (bt <= 128 || g->sk_even != 1 || g->sk_grid_max > 0) return all;
  /* the even grids that fit beside it: the least modelled */
  const long long tiles = (long long)((g->n + 127) / 128) * ((m + 255) / 256);
  int best = all;
  double tb = sk2_time(g, m, all, tps_w8_sk_dpw(g, m, all));
  for (int p = 1; p <= 8 && tiles * p <= slots; p++) {
    const int grid = (int)(tiles * p);
    if (!tps_w8_sk_even(g, m, grid) || grid == all || 3 * grid < 2 * slots) continue;
    const double t = sk2_time(g, m, grid, 0);
    if (t < tb - 1e-9) { tb = t; best = grid; }
  }
  return best;
}

/* The stream-K kernel (persistent grid, iterations shared equally, fix-up through a
 * workspace): its token tile (64 or 128) of least modelled time, ceil(iterations / grid) x c +
 * SK_FIXED + SK_FIX for each partial past two that a tile's owner adds.  Fitted to forced runs
 * on an H100 (issue 28, K 5120 N 1792 and K 7168 N 2112, 256..1024 rows,
 * data/h100_w8a16_tuning.txt): c = 0.40 / 0.48 us per chunk (64 / 128 tokens), SK_FIXED 12 us
 * (the measured intercept: the fix-up alone does not explain it, doc/gemm-kernels.md), SK_FIX
 * 1.5 us.  Considered up to SK_MAX_M rows (beyond, its chunks measured slower than the
 * 256-token wgmma pass's). */
#define SK_FIX 1.5
#define SK_FIXED 12.0
#define SK_MAX_M 2048
/* The 256-token form (w8k2_kernel): whole waves of tiles first, data-parallel, then the
 * iterations of the tiles left shared by the weighted partition (tps_w8_sk2_bounds).  Its
 * modelled time: the busiest block's chunks x chunk_us + fixed_us + shared_us x the share of the
 * iterations in the stream-K part + piece_us per piece past two that a tile is cut into (sk2c);
 * fitted to the forced form on a lent H100 (K 5120 N 1792 and K 7168 N 2112, 128..8192 rows,
 * 20 samples, data/h100_w8a16_sk256.txt call 1: within ~5% where M is a multiple of 256).  The
 * stream-K part's blocks run the row blocks of one token tile at different k, so its X tiles
 * and every weight stay live in L2 for the whole part: past SK2_L2_BYTES of them (the 50 MB
 * L2 of an H100 or H200) it measured up to 1.3x slower per chunk (K 7168 N 2112, 2560 rows on
 * 170 tiles: 36.7 MB of X + 13.6 MB of weights, 144.8 us against 118.9 modelled): not a choice. */
/* sk2fit 0 (the first fit, above) and 1: refitted by least squares to the current form forced
 * (TPS_W8_KERNEL=sk TPS_W8_BT=256) at 26 points, both shapes, 384..16384 rows (call 2 of
 * data/h100_w8a16_sk256.txt, 20 samples; 16384 rows of K 5120 from data/h100_w8a16_s30.txt), the
 * piece term held at 1 us and the share term at 8 us (free, both came out negative: the points
 * have few pieces, and near the L2 limit the share matters more than a line can say): 0.713 us a
 * chunk + 5.31 us, max error 13.3% (the first fit: 17% high at 384 and 640 rows of K 5120, 7% at
 * 16384).  The picks that differ (K 5120 768, 1792, 8192 and 16384 rows, K 7168 2304) measured
 * 5-13% faster with it, in the tables re-measured with it (data/h100_w8a16_sk2fit.txt).
 * Re-derived from the forced points by tests/unit/model/test_w8plan (check_sk2_refit). */
static const tps_w8_sk2c sk2c[2] = {{0.73, 5.0, 8.0, 1.5}, {0.713, 5.31, 8.0, 1.0}};
const tps_w8_sk2c *tps_w8_sk2_coef(int fit) { return &sk2c[fit == 1]; }
#define SK2_L2_BYTES 50e6
/* the busiest block's work of tps_w8_sk2_bounds, remembered per thread (the latency model asks the
 * rule for the same rows at every step of its fits: the walk over the tiles cost calibrate's mock
 * runs their budget) */
static double sk2_most(const tps_w8_geom *g, int m, int grid, int dpw) {
  enum { NC = 64 };
  static _Thread_local struct { int n, k, m, grid, dpw, even, used; double most; } cache[NC];
  const int even = (g->sk_even == 1) | g->sk_tail << 1; /* the partition differs on even grids and with an even tail */
  const unsigned h = ((unsigned)m * 2654435761u ^ (unsigned)g->n * 40503u ^ (unsigned)g->k * 97u ^ (unsigned)grid * 7u ^
                      (unsigned)dpw ^ (unsigned)even << 20) % NC;
  if (cache[h].used && cache[h].n == g->n && cache[h].k == g->k && cache[h].m == m && cache[h].grid == grid &&
      cache[h].dpw == dpw && cache[h].even == even)
    return cache[h].most;
  int bnd[TPS_W8_SK2_MAXG + 1];
  const double most = tps_w8_sk2_bounds(g, m, grid, dpw, bnd);
  cache[h].n = g->n; cache[h].k = g->k; cache[h].m = m; cache[h].grid = grid; cache[h].dpw = dpw; cache[h].even = even;
  cache[h].most = most;
  cache[h].used = 1;
  return most;
}
int tps_w8_sk2_terms(const tps_w8_geom *g, int m, int grid, int dpw, tps_w8_sk2_term *t) {
  const int nrb = (g->n + 127) / 128, kall = g->k / 64;
  const long long tiles = (long long)nrb * ((m + 255) / 256), iters = tiles * kall;
  t->most = sk2_most(g, m, grid, dpw);
  if (t->most < 0) return -1;
  const long long skit = iters - (long long)dpw * grid * kall, sktiles = tiles - (long long)dpw * grid;
  const long long skper = (skit + grid - 1) / grid, segs = (kall + skper - 1) / skper + 1;
  t->share = (double)skit / (double)iters;
  t->pieces = segs > 2 ? (double)(segs - 2) : 0;
  t->live_bytes = (double)sktiles / nrb * 256.0 * g->k * 2 + (double)nrb * 128 * g->k * 1.0625; /* X of the part, weights + scales */
  return 0;
}
static double sk2_time(const tps_w8_geom *g, int m, int grid, int dpw) {
  tps_w8_sk2_term t;
  if (tps_w8_sk2_terms(g, m, grid, dpw, &t)) return 1e30;
  if (t.live_bytes > SK2_L2_BYTES && t.share < 1) return 1e30; /* a part of all tiles: no whole waves to move it to */
  const int p = dpw == 0 ? tps_w8_sk_even(g, m, grid) : 0;
  if (p > 0) /* an even grid: the line of those launches */
    return t.most * SKEVEN_CHUNK_US + SKEVEN_FIXED_US +
           (p < 2 ? 0 : g->sk_rs >= 1 ? SKRS_FIX_US + SKRS_PIECE_US * (p - 1) : SKEVEN_FIX_US + SKEVEN_PIECE_US * (p - 1)) +
           (t.live_bytes > SK2_L2_BYTES ? 1e6 : 0);
  const tps_w8_sk2c *c = tps_w8_sk2_coef(g->sk2fit);
  return t.most * c->chunk_us + c->fixed_us + c->shared_us * t.share + c->piece_us * t.pieces + (t.live_bytes > SK2_L2_BYTES ? 1e6 : 0);
}
double tps_w8_sk_pick(const tps_w8_geom *g, int m, int *bt_out) {
  static const int bts[] = {64, 128, 256};
  static const double chunk_us[] = {0.40, 0.48}; /* 64, 128 tokens; 256: sk2_time */
  const int nrb = (g->n + 127) / 128, kall = g->k / 64;
  double best = 1e30;
  *bt_out = 128;
  for (int b = 0; b < 3; b++) {
    if (b < 2 && m > SK_MAX_M) continue;
    if (b == 2 && g->sk256 != 1) continue;
    const long long tiles = (long long)nrb * ((m + bts[b] - 1) / bts[b]), iters = tiles * kall;
    if (iters > 0x7fffffffLL) continue;
    const int grid = tps_w8_sk_grid(g, m, bts[b]);
    double t;
    if (b == 2) {
      t = sk2_time(g, m, grid, tps_w8_sk_dpw(g, m, grid));
      if (t >= 1e5) continue;
    } else {
      const long long per = (iters + grid - 1) / grid;
      const long long segs = (kall + per - 1) / per + 1; /* blocks a tile's K range can span */
      t = per * chunk_us[b] + (segs > 2 ? SK_FIX * (segs - 2) : 0) + SK_FIXED;
    }
    if (t < best - 1e-9) { best = t; *bt_out = bts[b]; }
  }
  return best;
}

/* The even tail (sk_tail = p, forced only): after dpw whole waves the R tiles left each cut into p pieces of K/64/p
 * chunks on blocks 0 .. R p - 1, the rest idle (p where R p fits the grid and p divides K/64, else 0: the weighted
 * partition).  An experiment (issue 28, K 7168 N 2112 at 4096 rows: were the 140 tiles shared at every k after one
 * wave thrashing the L2?): 2 waves and the 8 tiles left in 8..16 pieces measured no faster than the default (174.3 vs
 * 175.0 us), so not priced and not in the dispatch (data/h100_w8a16_s23.txt call 1). */
int tps_w8_sk_tail(const tps_w8_geom *g, int m, int grid, int dpw) {
  const long long tiles = (long long)((g->n + 127) / 128) * ((m + 255) / 256), left = tiles - (long long)dpw * grid;
  const int p = g->sk_tail, C = g->k / 64;
  return p > 0 && dpw > 0 && left >= 1 && left * p <= grid && C % p == 0 ? p : 0;
}
int tps_w8_sk_cut(const tps_w8_geom *g, int m, int grid, int dpw) {
  return dpw == 0 ? tps_w8_sk_even(g, m, grid) : tps_w8_sk_tail(g, m, grid, dpw);
}
/* Whole waves of 256-token tiles that the 256-token stream-K form runs data-parallel before its
 * stream-K part: floor(tiles / grid) or one fewer, whichever models faster (sk2_time: the
 * fewer tiles the stream-K part has, the more pieces each is cut into; the more, the more X stays
 * live in L2); sk_dpw >= 0 forces that many.  At least `grid` iterations stay in the stream-K
 * part (every block of it has work: a tile's owner waits for the flags of the blocks after it). */
int tps_w8_sk_dpw(const tps_w8_geom *g, int m, int grid) {
  const long long tiles = (long long)((g->n + 127) / 128) * ((m + 255) / 256), kall = g->k / 64;
  if (grid <= 0) return 0;
  long long d = tiles / grid;
  if (g->sk_dpw >= 0) d = g->sk_dpw;
  while (d > 0 && (tiles - d * grid) * kall < grid) d--;
  if (g->sk_dpw < 0 && d > 0 && sk2_time(g, m, grid, (int)d - 1) < sk2_time(g, m, grid, (int)d)) d--;
  return (int)d;
}

/* chunk weights of the 256-token stream-K form: a tile whose weight rows are at most half
 * inside N runs one warpgroup's dequantization and MMAs (the other idles) */
#define SK2_W_FULL 8
#define SK2_W_HALF 5
double tps_w8_sk2_bounds(const tps_w8_geom *g, int m, int grid, int dpw, int *bnd) {
  const int nrb = (g->n + 127) / 128, C = g->k / 64, rem = g->n % 128;
  const long long tiles = (long long)nrb * ((m + 255) / 256), iters = tiles * C;
  if (grid < 1 || grid > TPS_W8_SK2_MAXG || dpw < 0 || iters > 0x7fffffffLL) return -1;
  const long long base = (long long)dpw * grid * C;
  if (iters - base < grid) return -1;
  const int half = rem > 0 && rem <= 64;
  /* cost of one chunk of tile t */
#define TCOST(t) (half && (t) % nrb == nrb - 1 ? SK2_W_HALF : SK2_W_FULL)
  long long dp[TPS_W8_SK2_MAXG], total = 0;
  const int even = dpw == 0 ? tps_w8_sk_even(g, m, grid) : 0, tailp = tps_w8_sk_tail(g, m, grid, dpw);
  double most = 0;
  if (even > 0) { /* exactly 1/p of a tile a block */
    for (int b = 0; b <= grid; b++) bnd[b] = b * (C / even);
    for (int b = 0; b < grid; b++) dp[b] = 0;
  } else if (tailp > 0) { /* whole waves, then 1/p of a tile left a block, the blocks after none */
    for (int b = 0; b < grid; b++) {
      dp[b] = 0;
      for (long long w = 0; w < dpw; w++) dp[b] += (long long)TCOST(w * grid + b) * C;
    }
    for (int b = 0; b <= grid; b++) bnd[b] = (int)(base + (long long)b * (C / tailp) < iters ? base + (long long)b * (C / tailp) : iters);
  } else {
    for (int b = 0; b < grid; b++) {
      dp[b] = 0;
      for (long long w = 0; w < dpw; w++) dp[b] += (long long)TCOST(w * grid + b) * C;
      total += dp[b];
    }
    for (long long t = (long long)dpw * grid; t < tiles; t++) total += (long long)TCOST(t) * C;
    /* block b ends its stream-K range where the stream-K work done so far reaches
     * (b + 1) x total / grid minus the whole-wave work of blocks 0..b: walk the tiles once */
    bnd[0] = (int)base;
    long long t = (long long)dpw * grid, done = 0, dpsum = 0; /* done: stream-K work before tile t */
    for (int b = 0; b < grid; b++) {
      dpsum += dp[b];
      long long e;
      if (b == grid - 1) e = iters;
      else {
        const long long target = (total * (b + 1) + grid / 2) / grid - dpsum; /* stream-K work through block b */
        while (t < tiles && done + (long long)TCOST(t) * C <= target) { done += (long long)TCOST(t) * C; t++; }
        e = t * C + (t < tiles ? (target - done + TCOST(t) / 2) / TCOST(t) : 0); /* nearest chunk */
        if (e > t * C + C) e = t * C + C;
      }
      if (e < bnd[b] + 1) e = bnd[b] + 1;                  /* non-empty */
      if (e > iters - (grid - 1 - b)) e = iters - (grid - 1 - b); /* room for the blocks after */
      bnd[b + 1] = (int)e;
    }
  }
  /* each block's work, in full chunks */
  for (int b = 0; b < grid; b++) {
    long long wk = dp[b];
    for (long long it = bnd[b]; it < bnd[b + 1];) {
      const long long tt = it / C, e2 = (tt + 1) * C < bnd[b + 1] ? (tt + 1) * C : bnd[b + 1];
      wk += (e2 - it) * TCOST(tt);
      it = e2;
    }
    const double u = (double)wk / SK2_W_FULL;
    if (u > most) most = u;
  }
#undef TCOST
  return most;
}

/* the stream-K kernel is a choice: built (its workspace made), and m within SK_MAX_M or its
 * 256-token form allowed */
static int sk_ok(const tps_w8_geom *g, int m) { return g->sk_blocks > 0 && (m <= SK_MAX_M || g->sk256 == 1); }

/* The least modelled time of one launch for m rows past the stream kernel's range (the split
 * pick up to 1024 rows, the 256-token wgmma pass, the stream-K kernel up to SK_MAX_M) */
static double one_launch_us(const tps_w8_geom *g, int m) {
  int bt, sp;
  double t = tps_w8_wgmma256_us(g, m);
  if (m <= 1024) { const double ts = tps_w8_split_pick(g, m, &bt, &sp); if (ts < t) t = ts; }
  const double tk = sk_ok(g, m) ? tps_w8_sk_pick(g, m, &bt) : 1e30;
  return tk < t ? tk : t;
}

/* Whole waves first (issue 28): the 256-token wgmma pass has one wave of
 * floor(SMs / row blocks) x 256 rows (2304 at N 1792 on 132 SMs, 1792 at N 2112); one row past
 * a whole number of waves costs it another whole wave (H200, K 5120 N 1792: 61.0 us at 2304
 * rows, 121.2 at 2305, data/h200_w8a16_s256.txt).  Rows are independent, so the whole waves run
 * as one launch and the rows left over as a second launch with their own pick (a stream launch
 * for one row).  Returns the rows of the first launch where the two launches model faster than
 * one (plus HEAD_GAP_US for the second launch), else 0.  g->head > 0 forces it: the largest
 * multiple of 256 up to it (when below m; for the tests, whose shapes have few row blocks). */
#define HEAD_GAP_US 1.0
static int head_rows(const tps_w8_geom *g, int m, double t_one) {
  if (g->head >= 0) { const int h = g->head / 256 * 256; return h > 0 && h < m ? h : 0; }
  const int sms = sms_of(g), nrb = (g->n + 127) / 128;
  const int wave = sms / nrb * 256;
  if (wave <= 0 || m <= wave || m % wave == 0) return 0;
  const int head = m / wave * wave;
  int bt, sp;
  const double t_two = tps_w8_wgmma256_us(g, head) + HEAD_GAP_US +
                       (m - head <= 64 ? tps_w8_split_pick(g, m - head, &bt, &sp) : one_launch_us(g, m - head));
  return t_two < t_one ? head : 0;
}

int tps_w8_pick_default(const tps_w8_geom *g, int m, tps_w8_pick *p) {
  if (!g || !p || m < 1 || g->n < 1 || g->k < 64) return -1;
  memset(p, 0, sizeof *p);
  p->us = NAN;
  tps_w8p_kind kind;
  if (m <= g->stream_max)
    /* the stream kernel keeps a block's chunks resident (10 stages for tiles <= 64 tokens);
     * past that (K > 5120: 14 chunks a block at K 7168) it falls back to a pair loop that
     * waits for every other chunk (14.8 us at K 7168 N 2112, M 1..16, H100): the split
     * kernel's ring (64 tokens, split 8) then, with small_split (off by default: measured on
     * an H200 it loses 15% at K 7168, M 1..16, data/h200_w8a16_s256.txt) */
    kind = (g->k / 64 + TPS_W8P_STREAM_SPLITS - 1) / TPS_W8P_STREAM_SPLITS > 10 && g->small_split == 1 ? TPS_W8P_SPLIT
                                                                                                 : TPS_W8P_STREAM;
  else { /* the least modelled of: the split kernel (up to 1024 rows), the 256-token wgmma
          * pass, the stream-K kernel; up to 128 rows the stream kernel where the split pick is
          * its geometry (128 tokens, split 8: the stream launch measured 0.2-0.3 us faster) */
    int bt = 128, sp = 1, skbt = 128;
    const double ts = m <= 1024 ? tps_w8_split_pick(g, m, &bt, &sp) : 1e30, tw = tps_w8_wgmma256_us(g, m);
    const double tk = sk_ok(g, m) ? tps_w8_sk_pick(g, m, &skbt) : 1e30;
    kind = ts <= tw ? TPS_W8P_SPLIT : TPS_W8P_WGMMA;
    if (tk < (ts < tw ? ts : tw)) kind = TPS_W8P_SK;
    if (kind == TPS_W8P_SPLIT && m <= 128 && bt == 128 && sp == TPS_W8P_STREAM_SPLITS) kind = TPS_W8P_STREAM;
    p->head = head_rows(g, m, one_launch_us(g, m)); /* the least of ts, tw, tk */
    if (p->head > 0) kind = TPS_W8P_WGMMA;
  }
  p->kind = kind;
  switch (kind) {
  case TPS_W8P_STREAM:
    p->bt = tps_w8_stream_tile(g, m);
    p->splits = TPS_W8P_STREAM_SPLITS;
    break;
  case TPS_W8P_SPLIT:
    p->us = tps_w8_split_pick(g, m, &p->bt, &p->splits);
    if (m <= 64 && g->small_split == 1) { p->bt = 64; p->splits = TPS_W8P_STREAM_SPLITS; } /* small M past the stream kernel's stages */
    break;
  case TPS_W8P_SK:
    p->us = tps_w8_sk_pick(g, m, &p->bt);
    p->splits = tps_w8_sk_grid(g, m, p->bt);
    break;
  default:
    p->bt = 256;
    p->splits = 1;
    p->us = tps_w8_wgmma256_us(g, p->head > 0 ? p->head : m);
    break;
  }
  return 0;
}
