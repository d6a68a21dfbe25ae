/* A fork-join pool for the threaded wasm builds (shared memory, atomics): the
 * calling thread and the workers run the tasks of one parallel region, then
 * the caller returns. Workers are wasm instances on the same memory that sit
 * in sf_worker_run, asleep (memory.atomic.wait32) between regions: no busy
 * loop when idle. The caller cannot sleep (a browser's main thread may not
 * wait), so it works, then spins until the region is done.
 *
 * Determinism: a task computes a fixed set of outputs with fixed arithmetic,
 * whichever thread takes it; callers split only independent outputs (matrix
 * columns, attention heads), never a sum. So results are bit-identical for
 * any number of threads.
 *
 * In the single-threaded builds (and natively) sf_parallel runs the tasks
 * inline, in order. */
#ifndef SF_POOL_H
#define SF_POOL_H

typedef void (*sf_task_fn)(void *ctx, int task, int ntasks);

/* Most workers a pool has (threads beyond the caller). */
#define SF_POOL_MAX 63

/* Runs fn(ctx, t, ntasks) for t = 0 .. ntasks-1, on up to sf_pool_threads() threads. */
void sf_parallel(sf_task_fn fn, void *ctx, int ntasks);

/* Threads a region may use: min(the workers started + 1, the limit set by sf_pool_use). */
int sf_pool_threads(void);

/* The limit for the regions that follow (an encoder's thread count). */
void sf_pool_use(int threads);

/* For JS: the worker with this id (1 ..) runs regions until sf_pool_stop. */
void sf_worker_run(int id);
/* For JS: how many workers are inside sf_worker_run. */
int sf_pool_arrived(void);
/* For JS: workers 1 .. n have started (each is in, or about to enter, sf_worker_run). */
void sf_pool_start(int n);
/* For JS, before a call that runs regions: whether that thread may sleep
 * (memory.atomic.wait32) while it waits for the workers; a page's main thread may not. */
void sf_pool_caller_can_wait(int yes);
/* Natively (SF_THREADS): starts worker threads until the pool has n threads
 * with the caller (never fewer than it has); 0, or -1 if a thread could not
 * be created. */
int sf_pool_grow(int n);
/* For JS: every worker returns from sf_worker_run. */
void sf_pool_stop(void);
/* For JS and tests: the tasks thread id has run since the instance started (0: the callers). */
int sf_pool_tasks(int id);

#endif
