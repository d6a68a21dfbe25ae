/* The fork-join pool (pool.h). One region at a time, run from the thread that
 * calls forward (the page's main thread, or a worker driving forwardAsync).
 *
 * Region protocol, all counters in shared memory:
 *   caller: publish (fn, ctx, n); next = 0; finished = 0; gen++ ; notify
 *           take tasks (next++) until none is left; spin until finished == workers
 *   worker: sleep while gen == seen; seen = gen; take tasks; finished++
 * The caller waits for every worker before it returns, so no worker can still
 * be inside a region when the next one is published: the job's fields are only
 * ever written while every worker sleeps or is about to. Workers check in
 * (arrived++) before JS lets regions use them (sf_pool_start). */
#include "pool.h"

#if defined(__wasm_atomics__)

#include <stdatomic.h>

#ifndef SF_POOL_SPINS
#define SF_POOL_SPINS 20000 /* loads of gen before a worker sleeps: tens of microseconds */
#endif

static _Atomic int gen, next_task, finished, arrived, stopping;
static int workers; /* started and checked in: the regions wait for each */
static int caller_can_wait; /* the caller may sleep at a region's end (Node's main thread, a worker), not a page's main thread */
static int limit = 1;
static sf_task_fn job_fn;
static void *job_ctx;
static int job_n;

int sf_pool_threads(void) { return workers + 1 < limit ? workers + 1 : limit; }
void sf_pool_use(int threads) { limit = threads < 1 ? 1 : threads; }

/* Tasks are taken in order from one counter: a task's outputs do not depend on who takes it. */
static void work(void) {
    for (int t; (t = atomic_fetch_add(&next_task, 1)) < job_n;) job_fn(job_ctx, t, job_n);
}

void sf_parallel(sf_task_fn fn, void *ctx, int ntasks) {
    if (ntasks <= 0) return;
    if (ntasks == 1 || sf_pool_threads() <= 1) {
        for (int t = 0; t < ntasks; t++) fn(ctx, t, ntasks);
        return;
    }
    job_fn = fn, job_ctx = ctx, job_n = ntasks;
    atomic_store(&next_task, 0);
    atomic_store(&finished, 0);
    atomic_fetch_add(&gen, 1);
    __builtin_wasm_memory_atomic_notify((int *)&gen, (unsigned)workers);
    work();
    /* the caller spins for the stragglers; where it may, it then sleeps (a busy
     * machine may have descheduled a worker: spinning would take its core) */
    for (int f, spins = 0; (f = atomic_load(&finished)) < workers;)
        if (caller_can_wait && ++spins > SF_POOL_SPINS) __builtin_wasm_memory_atomic_wait32((int *)&finished, f, 1000000);
}

void sf_pool_caller_can_wait(int yes) { caller_can_wait = yes; }

void sf_worker_run(int id) {
    (void)id;
    int seen = atomic_load(&gen);
    atomic_fetch_add(&arrived, 1);
    for (;;) {
        int g, spins = 0;
        /* regions come in bursts (a forward is hundreds of them): spin a little before
         * sleeping, as musl's __wait does; between forwards the worker sleeps */
        while ((g = atomic_load(&gen)) == seen)
            if (++spins > SF_POOL_SPINS) __builtin_wasm_memory_atomic_wait32((int *)&gen, seen, -1);
        seen = g;
        if (atomic_load(&stopping)) break;
        work();
        atomic_fetch_add(&finished, 1);
        __builtin_wasm_memory_atomic_notify((int *)&finished, 1);
    }
    atomic_fetch_sub(&arrived, 1);
}

/* JS polls this until every worker it started has checked in. */
int sf_pool_arrived(void) { return atomic_load(&arrived); }

void sf_pool_start(int n) {
    atomic_store(&stopping, 0);
    workers = n;
}

void sf_pool_stop(void) {
    workers = 0;
    atomic_store(&stopping, 1);
    atomic_fetch_add(&gen, 1);
    __builtin_wasm_memory_atomic_notify((int *)&gen, 0xffffffffu);
}

#else /* single-threaded builds and native: the tasks in order */

int sf_pool_threads(void) { return 1; }
void sf_pool_use(int threads) { (void)threads; }
void sf_parallel(sf_task_fn fn, void *ctx, int ntasks) {
    for (int t = 0; t < ntasks; t++) fn(ctx, t, ntasks);
}
void sf_worker_run(int id) { (void)id; }
int sf_pool_arrived(void) { return 0; }
void sf_pool_start(int n) { (void)n; }
void sf_pool_stop(void) {}
void sf_pool_caller_can_wait(int yes) { (void)yes; }

#endif
