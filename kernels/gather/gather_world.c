/* gather_world.c: the host group of ranks of gather.h (tps_world_*): one process per GPU
 * under MPI (build --with-mpi, started by mpirun/mpiexec/srun with several processes), else
 * one thread per GPU in this process.
 *
 * Threads: collectives meet at a generation-counted barrier (mutex + condition variable)
 * through one shared scratch area of TPS_GATHER_MAX_RANKS x 4096 bytes.  A rank that fails
 * sets `failed` and wakes everyone: every collective then returns -1 at once, and a wait of
 * more than WAIT_S seconds also counts as a failure, so no thread waits forever on a dead
 * one.  MPI: MPI_Barrier/Allgather/Bcast/Allreduce; a failing rank calls MPI_Abort, which
 * ends every process of the job.
 * This file is C (not CUDA) so that it compiles with the MPI compile flags. */
#include "config.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_MPI
#include <mpi.h>
#endif
#include "kernels/common/check.h"
#include "kernels/gather/gather.h"

#define SLOT_BYTES 4096
#define WAIT_S 300

typedef struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int n, arrived, failed;
  unsigned long gen;
  unsigned char scratch[TPS_GATHER_MAX_RANKS][SLOT_BYTES];
  double maxbuf[512];
} shared_t;

struct tps_world {
  int rank, size, device, mpi, nodev;
  char host[64];
  shared_t *sh; /* threads mode */
  tps_world_fn fn;
  void *arg;
  int rc;
};

int tps_world_is_mpi(void) {
#ifdef HAVE_MPI
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS",
                                     "SLURM_STEP_NUM_TASKS"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v) return 1;
  }
#endif
  return 0;
}

int tps_world_rank(const tps_world *w) { return w->rank; }
int tps_world_size(const tps_world *w) { return w->size; }
const char *tps_world_host(const tps_world *w) { return w->host; }

/* Threads: wait until all n arrived at this generation; -1 when a rank failed or timed out. */
static int sh_barrier(tps_world *w) {
  shared_t *s = w->sh;
  pthread_mutex_lock(&s->mu);
  if (s->failed) { pthread_mutex_unlock(&s->mu); return -1; }
  unsigned long gen = s->gen;
  if (++s->arrived == s->n) {
    s->arrived = 0;
    s->gen++;
    pthread_cond_broadcast(&s->cv);
  } else {
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += WAIT_S;
    while (s->gen == gen && !s->failed) {
      if (pthread_cond_timedwait(&s->cv, &s->mu, &until) == ETIMEDOUT) {
        fprintf(stderr, "tpsplit: rank %d: no other rank arrived within %d s: giving up\n", w->rank, WAIT_S);
        s->failed = 1;
        pthread_cond_broadcast(&s->cv);
      }
    }
  }
  int rc = s->failed ? -1 : 0;
  pthread_mutex_unlock(&s->mu);
  return rc;
}

int tps_world_barrier(tps_world *w) {
#ifdef HAVE_MPI
  if (w->mpi) return MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#endif
  return w->size == 1 ? 0 : sh_barrier(w);
}

int tps_world_allgather(tps_world *w, const void *mine, void *all, size_t bytes) {
  if (bytes > SLOT_BYTES) return -1;
#ifdef HAVE_MPI
  if (w->mpi)
    return MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#endif
  if (w->size == 1) { memcpy(all, mine, bytes); return 0; }
  memcpy(w->sh->scratch[w->rank], mine, bytes);
  if (sh_barrier(w)) return -1;
  for (int r = 0; r < w->size; r++) memcpy((char *)all + (size_t)r * bytes, w->sh->scratch[r], bytes);
  return sh_barrier(w); /* nobody overwrites its slot before everyone has read it */
}

int tps_world_bcast(tps_world *w, void *buf, size_t bytes) {
  if (bytes > SLOT_BYTES) return -1;
#ifdef HAVE_MPI
  if (w->mpi) return MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#endif
  if (w->size == 1) return 0;
  if (w->rank == 0) memcpy(w->sh->scratch[0], buf, bytes);
  if (sh_barrier(w)) return -1;
  if (w->rank != 0) memcpy(buf, w->sh->scratch[0], bytes);
  return sh_barrier(w);
}

int tps_world_max(tps_world *w, double *v, size_t n) {
  if (n > 512) return -1;
#ifdef HAVE_MPI
  if (w->mpi) return MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#endif
  if (w->size == 1) return 0;
  shared_t *s = w->sh;
  if (w->rank == 0)
    for (size_t i = 0; i < n; i++) s->maxbuf[i] = v[i];
  if (sh_barrier(w)) return -1;
  pthread_mutex_lock(&s->mu);
  if (w->rank != 0)
    for (size_t i = 0; i < n; i++)
      if (v[i] > s->maxbuf[i]) s->maxbuf[i] = v[i];
  pthread_mutex_unlock(&s->mu);
  if (sh_barrier(w)) return -1;
  for (size_t i = 0; i < n; i++) v[i] = s->maxbuf[i];
  return sh_barrier(w);
}

void tps_world_fail(tps_world *w) {
#ifdef HAVE_MPI
  if (w->mpi) {
    fprintf(stderr, "tpsplit: rank %d: aborting all ranks\n", w->rank);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return;
  }
#endif
  if (!w->sh) return;
  pthread_mutex_lock(&w->sh->mu);
  w->sh->failed = 1;
  pthread_cond_broadcast(&w->sh->cv);
  pthread_mutex_unlock(&w->sh->mu);
}

static void *thread_main(void *p) {
  tps_world *w = (tps_world *)p;
  if (!w->nodev && cudaSetDevice(w->device) != cudaSuccess) {
    fprintf(stderr, "tpsplit: rank %d: cudaSetDevice(%d) failed: %s\n", w->rank, w->device,
            cudaGetErrorString(cudaGetLastError()));
    w->rc = TPS_ERR;
  } else {
    w->rc = w->fn(w, w->arg);
  }
  if (w->rc != TPS_OK && w->rc != TPS_SKIP) tps_world_fail(w);
  return NULL;
}

static int combine(int a, int b) {
  if (a != TPS_OK && a != TPS_SKIP) return a;
  if (b != TPS_OK && b != TPS_SKIP) return b;
  return a == TPS_SKIP ? a : b;
}

static int run_threads(int nranks, tps_world_fn fn, void *arg, int nodev, const char *host);

int tps_world_run_threads_nodev(int nranks, tps_world_fn fn, void *arg) {
  return run_threads(nranks, fn, arg, 1, "localhost");
}

int tps_world_run(int nranks, tps_world_fn fn, void *arg) {
  setenv("NCCL_NVLS_ENABLE", "0", 0); /* never NVLink multicast (unless the user said 1) */
  char host[64] = "";
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
  host[sizeof host - 1] = 0;
#ifdef HAVE_MPI
  if (tps_world_is_mpi()) {
    int size, rank, lrank;
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) { fprintf(stderr, "tpsplit: MPI_Init failed\n"); return TPS_ERR; }
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_free(&local);
    if (size != nranks) {
      if (rank == 0) fprintf(stderr, "tpsplit: --tp %d but %d MPI processes: start one process per rank\n", nranks, size);
      MPI_Finalize();
      return TPS_ERR;
    }
    /* local rank -> GPU; modulo the visible GPUs (one GPU per process when the launcher
     * sets CUDA_VISIBLE_DEVICES per rank: then device 0, and no custom backend, since peer
     * access between the processes' GPUs cannot be asked) */
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) ndev = 1;
    tps_world w = {rank, size, lrank % ndev, 1, 0, "", NULL, fn, arg, 0};
    snprintf(w.host, sizeof w.host, "%s", host);
    int rc = TPS_ERR;
    if (cudaSetDevice(w.device) != cudaSuccess)
      fprintf(stderr, "tpsplit: rank %d: cudaSetDevice(%d) failed: %s\n", rank, w.device, cudaGetErrorString(cudaGetLastError()));
    else
      rc = fn(&w, arg);
    if (rc != TPS_OK && rc != TPS_SKIP) tps_world_fail(&w); /* MPI_Abort: nobody hangs */
    /* worst over ranks: error > skip > ok */
    int code = rc == TPS_OK ? 0 : rc == TPS_SKIP ? 1 : 2, worst = code;
    MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Finalize();
    return worst == 0 ? TPS_OK : worst == 1 ? TPS_SKIP : TPS_ERR;
  }
#endif
  return run_threads(nranks, fn, arg, 0, host);
}

static int run_threads(int nranks, tps_world_fn fn, void *arg, int nodev, const char *host) {
  if (nranks < 1 || nranks > TPS_GATHER_MAX_RANKS) {
    fprintf(stderr, "tpsplit: %d ranks: 1 to %d in one process\n", nranks, TPS_GATHER_MAX_RANKS);
    return TPS_ERR;
  }
  shared_t *sh = (shared_t *)calloc(1, sizeof *sh);
  tps_world *ws = (tps_world *)calloc((size_t)nranks, sizeof *ws);
  pthread_t *th = (pthread_t *)calloc((size_t)nranks, sizeof *th);
  if (!sh || !ws || !th) { free(sh); free(ws); free(th); return TPS_ERR; }
  pthread_mutex_init(&sh->mu, NULL);
  pthread_cond_init(&sh->cv, NULL);
  sh->n = nranks;
  int started = 0, rc = TPS_OK;
  for (int r = 0; r < nranks; r++) {
    ws[r] = (tps_world){r, nranks, r, 0, nodev, "", sh, fn, arg, 0};
    snprintf(ws[r].host, sizeof ws[r].host, "%s", host);
  }
  if (nranks == 1) {
    thread_main(&ws[0]); /* no thread for one rank */
    rc = ws[0].rc;
  } else {
    for (int r = 0; r < nranks; r++) {
      if (pthread_create(&th[r], NULL, thread_main, &ws[r]) != 0) {
        fprintf(stderr, "tpsplit: cannot start the thread of rank %d\n", r);
        tps_world_fail(&ws[0]);
        rc = TPS_ERR;
        break;
      }
      started++;
    }
    for (int r = 0; r < started; r++) pthread_join(th[r], NULL);
    for (int r = 0; r < started; r++) rc = combine(rc, ws[r].rc);
  }
  pthread_cond_destroy(&sh->cv);
  pthread_mutex_destroy(&sh->mu);
  free(sh);
  free(ws);
  free(th);
  return rc;
}
