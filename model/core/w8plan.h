/* w8plan.h: the SM90 dispatch of our W8A16 kernels (kernels/gemm/gemm_w8a16*.cu), pure: which
 * kernel, token tile and split-K run m rows, and the dispatch's own modelled time of each
 * launch.  One home for the rule and its arithmetic: the kernels ask it with the device's
 * occupancy and their environment overrides (kernels/gemm/gemm_w8a16.cu, tps_w8_choose), the
 * latency model of the w8a16 path with a GPU's SM count (model/latency/xgemm.c, tps_xw8), so
 * the model follows the dispatch the kernels run.
 *
 * Kernels (doc/gemm-kernels.md):
 *  - stream: M <= stream_max (64): split-K over a cluster of 8, one launch per token tile
 *    (16, 32, 48, 64 or 128 tokens); up to 128 rows also where the split pick is its geometry;
 *  - split: 65..1024 rows: 64 or 128 (256 with s256) tokens x 128 weight rows per block,
 *    cluster split-K 1/2/4/8 of least modelled time, every token tile in one launch;
 *  - sk: stream-K, a persistent grid sharing the (tile, 64-wide chunk) iterations equally
 *    (64 or 128 tokens up to 2048 rows; 256 tokens at any M, whole waves of tiles first);
 *  - wgmma: 256-token tiles, one pass over K per block; past one wave of it, the rows of whole
 *    waves run first and the rows left by their own pick (a second launch), where that models
 *    faster (head).
 * The modelled times are the dispatch's (us per 64-wide chunk and block measured on an H100,
 * the constants in w8plan.c): they rank the choices; the latency model scales them. */
#ifndef TPS_MODEL_W8PLAN_H
#define TPS_MODEL_W8PLAN_H
#ifdef __cplusplus
extern "C" {
#endif

typedef enum { TPS_W8P_STREAM = 0, TPS_W8P_SPLIT, TPS_W8P_SK, TPS_W8P_WGMMA, TPS_W8P_NKIND } tps_w8p_kind;
extern const char *const tps_w8p_kind_names[TPS_W8P_NKIND]; /* "stream", "split", "sk", "wgmma" */

enum { TPS_W8P_STREAM_SPLITS = 8 }; /* the stream kernel's cluster split-K */
/* the 256-token stream-K form in the default dispatch (the kernels' TPS_W8_SK256 default and the
 * model's geometry): measured no slower than the dispatch before it at any of the 29 M of
 * data/h100_w8a16_grid_*, both shapes, in the same device call (doc/gemm-kernels.md, "Stream-K
 * over the 256-token tiles") */
enum { TPS_W8P_SK256_DEFAULT = 1 };
/* the 256-token stream-K form's modelled time (sk2_time, w8plan.c): 0 the first fit (call 1 of
 * data/h100_w8a16_sk256.txt), 1 the refit to the current form (call 2 and data/h100_w8a16_s30.txt); the
 * kernels' TPS_W8_SK2FIT default and the model's geometry.  1 since the tables of data/h100_w8a16_grid_*
 * re-measured with it (data/h100_w8a16_sk2fit.txt): no M slower than with 0 in the same call, the five
 * M whose pick it changes 5-13% faster */
enum { TPS_W8P_SK2FIT_DEFAULT = 1 };
/* the 256-token stream-K form on an even grid (tps_w8_sk_grid): G = tiles x p blocks (p = 1..8, G within the
 * resident blocks, K / 64 a multiple of p), each block exactly 1/p of one tile, no whole waves first, priced by
 * the measured line of those launches (w8plan.c, SKEVEN_*); the kernels' TPS_W8_SKEVEN default and the model's
 * geometry (0: the grid of every resident block only, the dispatch before) */
enum { TPS_W8P_SKEVEN_DEFAULT = 1 };
/* the fix-up of a tile cut into p pieces on an even grid: 1 reduce-scatter (each of the p blocks adds the others'
 * partials of 1/p of the tile and stores that part; priced by w8plan.c SKRS_*), 0 the owner's (the block of piece 0
 * adds the p - 1 others' whole partials and stores the tile; SKEVEN_FIX_US, SKEVEN_PIECE_US), 2 reduce-scatter with
 * the slices staged by cp.async (an experiment, priced as 1); the kernels' TPS_W8_SKRS default and the model's
 * geometry */
enum { TPS_W8P_SKRS_DEFAULT = 1 };

typedef struct {
  int sms;                 /* SMs; <= 0: 132 */
  int n, k;                /* weight rows, reduction depth (a multiple of 64) */
  int split_slots[3][4];   /* split kernel: blocks that run at once per token tile (64, 128, 256)
                              and split-K (1, 2, 4, 8); 0: sms */
  int sk_slots[3];         /* stream-K kernel: resident blocks per token tile (64, 128, 256); 0: sms */
  int sk_blocks;           /* the most blocks a stream-K launch may have (its workspace); 0: no stream-K kernel */
  int sk_grid_max;         /* a smaller stream-K grid (override), 0: none */
  int stream_max;          /* the stream kernel's largest M (64) */
  int stream_bt;           /* the stream kernel's token tile forced (16, 32, 48, 64, 128), 0: by M */
  int small_split;         /* 1: M <= stream_max past 10 chunks a block runs the split kernel (64 x 8) */
  int s256;                /* 1: the split kernel may take 256-token tiles */
  int head;                /* -1: whole waves first where modelled faster; 0 never; R > 0: forced */
  int sk256;               /* 1: the stream-K kernel's 256-token form is a choice; 0: not (default TPS_W8P_SK256_DEFAULT) */
  int sk2fit;              /* sk2_time's constants: 0 the first fit, 1 the refit (default TPS_W8P_SK2FIT_DEFAULT) */
  int sk_dpw;              /* 256-token stream-K: whole (data-parallel) waves first, -1: by the rule (tps_w8_sk_dpw), else
                              that many (as many as leave every block stream-K work) */
  int sk_even;             /* 1: the 256-token stream-K form may run on an even grid (tiles x p, 1/p of a tile a block);
                              0: not (default TPS_W8P_SKEVEN_DEFAULT) */
  int sk_rs;               /* 1 (or 2): an even grid's fix-up is reduce-scatter; 0: the owner's (default TPS_W8P_SKRS_DEFAULT) */
  int sk_tail;             /* 256-token stream-K with whole waves first: p > 0 cuts each tile left after them into p
                              pieces on the first tiles x p blocks (the rest idle; tps_w8_sk_tail), 0: shared over every
                              block by the weighted partition (default) */
} tps_w8_geom;

/* The geometry a GPU of `sms` SMs gives without a device to ask (the model's view): one block
 * of each kernel per SM, clusters of s blocks filling floor(sms / s) x s SMs, every override
 * at its default. */
void tps_w8_geom_default(tps_w8_geom *g, int sms, int n, int k);

typedef struct {
  tps_w8p_kind kind;
  int bt;        /* token tile */
  int splits;    /* split-K (stream, split), the persistent grid (sk), 1 (wgmma) */
  int head;      /* wgmma: the rows of whole waves run first (0: all m rows); the rest: tps_w8_pick of m - head */
  double us;     /* the dispatch's modelled time of this launch (of the head launch when head > 0);
                    the stream kernel's is not modelled here: NaN */
} tps_w8_pick;

/* The default choice for m >= 1 rows (no kernel forced).  0, or -1 for invalid input. */
int tps_w8_pick_default(const tps_w8_geom *g, int m, tps_w8_pick *p);

/* The parts of the rule, for the kernels' forced forms: */
int tps_w8_stream_tile(const tps_w8_geom *g, int m);                        /* 16..128 */
double tps_w8_split_pick(const tps_w8_geom *g, int m, int *bt, int *splits);  /* least modelled split form, us */
double tps_w8_wgmma256_us(const tps_w8_geom *g, int m);                      /* the 256-token wgmma pass, us */
double tps_w8_sk_pick(const tps_w8_geom *g, int m, int *bt);                 /* least modelled stream-K form, us (1e30: none) */
int tps_w8_sk_grid(const tps_w8_geom *g, int m, int bt);                     /* the stream-K launch's grid */
int tps_w8_sk_even(const tps_w8_geom *g, int m, int grid);                   /* 256 tokens: p when grid is even (tiles x p), else 0 */
int tps_w8_sk_dpw(const tps_w8_geom *g, int m, int grid);                    /* 256-token stream-K: whole waves first */
int tps_w8_sk_tail(const tps_w8_geom *g, int m, int grid, int dpw);          /* p of an even tail after them, else 0 */
/* the pieces of each cut tile where the partition is even (an even grid with dpw 0, an even tail after dpw > 0 whole
 * waves), else 0 (the weighted partition): a tile cut into p > 1 is summed by reduce-scatter where sk_rs, else by its
 * owner; the one answer the launch and its configuration line ask */
int tps_w8_sk_cut(const tps_w8_geom *g, int m, int grid, int dpw);
/* The 256-token stream-K form's partition for m rows on `grid` blocks with `dpw` whole waves
 * first: bnd[0..grid] (grid + 1 values, TPS_W8_SK2_MAXG + 1 at most), block b's stream-K
 * iterations [bnd[b], bnd[b + 1]) (iteration it: tile it / (K/64), chunk it % (K/64), tiles
 * tile-major), each range non-empty, bnd[grid] every iteration.  Weighted: a chunk of a tile
 * whose 128 weight rows are at most half inside N (N 2112: the 17th) costs SK2_W_HALF of the
 * full SK2_W_FULL (one warpgroup idles), and each block's whole-wave tiles count, so the blocks
 * end together; on an even grid with no whole waves first (sk_even, tps_w8_sk_even) not weighted: block
 * b exactly iterations [b K/64/p, (b + 1) K/64/p); with an even tail (tps_w8_sk_tail: p) block b < tiles left x p
 * iterations [base + b K/64/p, base + (b + 1) K/64/p), the blocks after it none.  Returns the largest block's work in
 * full chunks, or -1 (grid too large, too few iterations). */
enum { TPS_W8_SK2_MAXG = 256 };
double tps_w8_sk2_bounds(const tps_w8_geom *g, int m, int grid, int dpw, int *bnd);
/* The 256-token stream-K form's modelled time (sk2_time): most x chunk_us + fixed_us + shared_us x
 * share + piece_us x pieces, not a choice past SK2_L2_BYTES (50 MB) live.  The constants of fit 0
 * (the first fit) or 1 (the refit); the terms of one launch (grid blocks, dpw whole waves first):
 * the busiest block's work in chunks (tps_w8_sk2_bounds), the stream-K part's share of the
 * iterations, the pieces past two a tile is cut into, the X and weight bytes the part keeps live.
 * 0, or -1 where tps_w8_sk2_bounds refuses the launch. */
typedef struct { double chunk_us, fixed_us, shared_us, piece_us; } tps_w8_sk2c;
typedef struct { double most, share, pieces, live_bytes; } tps_w8_sk2_term;
const tps_w8_sk2c *tps_w8_sk2_coef(int fit);
int tps_w8_sk2_terms(const tps_w8_geom *g, int m, int grid, int dpw, tps_w8_sk2_term *t);

#ifdef __cplusplus
}
#endif
#endif
