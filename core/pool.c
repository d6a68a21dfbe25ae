/* The fork-join pool (pool.h). One region at a time, run from the thread that
 * calls forward (Node's main thread, a page's, the worker driving forwardAsync,
 * or natively a libuv thread: the bindings serialize the calls of a runtime,
 * and natively a lock serializes the regions of every caller in the process).
 *
 * Region protocol, all counters in shared memory:
 *   caller: publish (fn, ctx, n); next = 0; finished = 0;
 *           for each worker i it uses: wake[i]++, notify it if it sleeps;
 *           take tasks (next++) until none is left; spin until finished == helpers
 *   worker i: spin, then sleep, while wake[i] == seen; seen = wake[i]; take tasks; finished++
 * A region uses only the workers its encoder's thread count asks for (and no
 * more than it has tasks for): each worker waits on a word of its own, so the
 * others are never woken and cost nothing. The caller waits for every worker
 * it woke before it returns, so no worker can still be inside a region when
 * the next one is published. Workers check in (arrived++) before regions use
 * them.
 *
 * Two homes for the protocol, one code:
 *   wasm threads (__wasm_atomics__): workers are wasm instances on the same
 *     memory that JS starts (runtime/threads.js) and that sleep in
 *     memory.atomic.wait32; a page's main thread may not sleep, only spin;
 *   native (SF_THREADS): pthreads the pool starts itself (sf_pool_grow), asleep
 *     on a futex (Linux) or a condition variable. */
#if defined(SF_THREADS) && defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* syscall(SYS_futex) */
#endif
#include "pool.h"

#if defined(__wasm_atomics__) || defined(SF_THREADS)

#include <stdatomic.h>

#ifndef SF_POOL_SPINS
#define SF_POOL_SPINS 20000 /* loads of its wake word before a worker sleeps: tens of microseconds */
#endif

/* ---------------------------------------------------------------- the platform's waiting */

#if defined(__wasm_atomics__)

#define SF_POOL_TLS /* one wasm instance drives its regions from one thread at a time */
static void sleep_on(_Atomic int *w, int v, long long ns) { __builtin_wasm_memory_atomic_wait32((int *)w, v, ns); }
static void wake_one(_Atomic int *w) { __builtin_wasm_memory_atomic_notify((int *)w, 1); }
static void region_begin(void) {}
static void region_end(void) {}
static int caller_can_wait; /* the caller may sleep at a region's end (Node's main thread, a worker), not a page's main thread */

#else /* SF_THREADS */

#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

/* The shipped addon loads on glibc older than the one it is linked on: glibc
 * 2.34 moved pthread_create, pthread_join and pthread_attr_setstacksize into
 * libc under a new symbol version; these bind to the first one, which every
 * glibc has (build.sh checks the binary's highest version against its floor). */
#if defined(SF_GLIBC_COMPAT) && defined(__x86_64__)
__asm__(".symver pthread_create,pthread_create@GLIBC_2.2.5");
__asm__(".symver pthread_join,pthread_join@GLIBC_2.2.5");
__asm__(".symver pthread_attr_setstacksize,pthread_attr_setstacksize@GLIBC_2.2.5");
#elif defined(SF_GLIBC_COMPAT) && defined(__aarch64__)
__asm__(".symver pthread_create,pthread_create@GLIBC_2.17");
__asm__(".symver pthread_join,pthread_join@GLIBC_2.17");
__asm__(".symver pthread_attr_setstacksize,pthread_attr_setstacksize@GLIBC_2.17");
#endif

#define SF_POOL_TLS _Thread_local /* each calling thread (each Node env) its own encoders' limit */
#if defined(__linux__)
static void sleep_on(_Atomic int *w, int v, long long ns) {
    struct timespec t = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    syscall(SYS_futex, (int *)w, FUTEX_WAIT_PRIVATE, v, ns < 0 ? NULL : &t, NULL, 0);
}
static void wake_one(_Atomic int *w) { syscall(SYS_futex, (int *)w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }
#else
static pthread_mutex_t sleep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sleep_cond = PTHREAD_COND_INITIALIZER;
static void sleep_on(_Atomic int *w, int v, long long ns) {
    (void)ns; /* woken by every wake_one */
    pthread_mutex_lock(&sleep_lock);
    if (atomic_load(w) == v) pthread_cond_wait(&sleep_cond, &sleep_lock);
    pthread_mutex_unlock(&sleep_lock);
}
static void wake_one(_Atomic int *w) {
    (void)w;
    pthread_mutex_lock(&sleep_lock);
    pthread_cond_broadcast(&sleep_cond);
    pthread_mutex_unlock(&sleep_lock);
}
#endif
/* One region at a time across the process: a libuv thread's forwardAsync, a JS
 * thread's forward, each worker_threads env's calls. */
static pthread_mutex_t region = PTHREAD_MUTEX_INITIALIZER, start_lock = PTHREAD_MUTEX_INITIALIZER;
static void region_begin(void) { pthread_mutex_lock(&region); }
static void region_end(void) { pthread_mutex_unlock(&region); }
static const int caller_can_wait = 1;
static pthread_t threads[SF_POOL_MAX + 1];
static int started; /* threads[1 .. started] exist */

#endif

/* ---------------------------------------------------------------- the protocol */

static _Atomic int wake[SF_POOL_MAX + 1];       /* worker i waits for wake[i] to change */
static _Atomic int sleeping[SF_POOL_MAX + 1];   /* worker i is in (or entering) its sleep */
static _Atomic int tasks_done[SF_POOL_MAX + 1]; /* tasks thread i has run (0: the callers) */
static _Atomic int next_task, finished, arrived, stopping, workers, caller_sleeping;
static SF_POOL_TLS int limit = 1;
/* The region's job, written by the caller before it wakes the workers. Read
 * atomically: a worker must see this region's job, never an older one that an
 * optimiser kept in a local across its wait (binaryen's wasm-opt does). */
static _Atomic(sf_task_fn) job_fn;
static _Atomic(void *) job_ctx;
static _Atomic int job_n;

int sf_pool_threads(void) {
    int w = atomic_load(&workers) + 1;
    return w < limit ? w : limit;
}
void sf_pool_use(int threads) { limit = threads < 1 ? 1 : threads > SF_POOL_MAX + 1 ? SF_POOL_MAX + 1 : threads; }

/* Tasks are taken in order from one counter: a task's outputs do not depend on who takes it. */
static void work(int id) {
    sf_task_fn fn = atomic_load(&job_fn);
    void *ctx = atomic_load(&job_ctx);
    int t, n = 0, count = atomic_load(&job_n);
    while ((t = atomic_fetch_add(&next_task, 1)) < count) {
        fn(ctx, t, count);
        n++;
    }
    if (n) atomic_fetch_add(&tasks_done[id], n);
}

static void wake_worker(int i) {
    atomic_fetch_add(&wake[i], 1);
    if (atomic_load(&sleeping[i])) wake_one(&wake[i]);
}

void sf_parallel(sf_task_fn fn, void *ctx, int ntasks) {
    if (ntasks <= 0) return;
    int helpers = sf_pool_threads() - 1;
    if (helpers > ntasks - 1) helpers = ntasks - 1; /* a worker with no task would cost a wake-up */
    if (helpers <= 0) {
        for (int t = 0; t < ntasks; t++) fn(ctx, t, ntasks);
        atomic_fetch_add(&tasks_done[0], ntasks);
        return;
    }
    region_begin();
    atomic_store(&job_fn, fn);
    atomic_store(&job_ctx, ctx);
    atomic_store(&job_n, ntasks);
    atomic_store(&next_task, 0);
    atomic_store(&finished, 0);
    for (int i = 1; i <= helpers; i++) wake_worker(i);
    work(0);
    /* the caller spins for the stragglers; where it may, it then sleeps (a busy
     * machine may have descheduled a worker: spinning would take its core) */
    for (int f, spins = 0; (f = atomic_load(&finished)) < helpers;)
        if (caller_can_wait && ++spins > SF_POOL_SPINS) {
            atomic_store(&caller_sleeping, 1);
            if ((f = atomic_load(&finished)) < helpers) sleep_on(&finished, f, 1000000);
            atomic_store(&caller_sleeping, 0);
        }
    region_end();
}

void sf_worker_run(int id) {
    if (id < 1 || id > SF_POOL_MAX) return;
    int seen = atomic_load(&wake[id]);
    atomic_fetch_add(&arrived, 1);
    for (;;) {
        /* regions come in bursts (a forward is hundreds of them): spin a little before
         * sleeping, as musl's __wait does; between forwards the worker sleeps */
        for (int spins = 0; atomic_load(&wake[id]) == seen;)
            if (++spins > SF_POOL_SPINS) {
                atomic_store(&sleeping[id], 1);
                if (atomic_load(&wake[id]) == seen) sleep_on(&wake[id], seen, -1);
                atomic_store(&sleeping[id], 0);
                spins = 0;
            }
        seen = atomic_load(&wake[id]);
        if (atomic_load(&stopping)) break;
        work(id);
        atomic_fetch_add(&finished, 1);
        if (atomic_load(&caller_sleeping)) wake_one(&finished); /* a notify only when the caller sleeps */
    }
    atomic_fetch_sub(&arrived, 1);
}

int sf_pool_arrived(void) { return atomic_load(&arrived); }
int sf_pool_tasks(int id) { return id >= 0 && id <= SF_POOL_MAX ? atomic_load(&tasks_done[id]) : 0; }

/* ---------------------------------------------------------------- starting and stopping workers */

#if defined(__wasm_atomics__) /* JS starts the workers (runtime/threads.js) */

void sf_pool_caller_can_wait(int yes) { caller_can_wait = yes; }

void sf_pool_start(int n) {
    atomic_store(&stopping, 0);
    atomic_store(&workers, n < SF_POOL_MAX ? n : SF_POOL_MAX);
}

void sf_pool_stop(void) {
    atomic_store(&workers, 0);
    atomic_store(&stopping, 1);
    for (int i = 1; i <= SF_POOL_MAX; i++) {
        atomic_fetch_add(&wake[i], 1);
        wake_one(&wake[i]);
    }
}

#else /* native: the pool starts its own threads */

void sf_pool_caller_can_wait(int yes) { (void)yes; }

static void *worker_main(void *arg) {
    sf_worker_run((int)(intptr_t)arg);
    return NULL;
}

/* Workers 1 .. n-1 exist after this (n - 1 workers for n threads; more are
 * started, never fewer). 0, or -1 when a thread could not be created (the pool
 * keeps those it has). */
int sf_pool_grow(int n) {
    int rc = 0;
    if (n > SF_POOL_MAX + 1) n = SF_POOL_MAX + 1;
    pthread_mutex_lock(&start_lock);
    pthread_mutex_lock(&region); /* no region sees the count change */
    atomic_store(&stopping, 0);
    while (started < n - 1) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 << 10);
        int id = started + 1;
        int e = pthread_create(&threads[id], &attr, worker_main, (void *)(intptr_t)id);
        pthread_attr_destroy(&attr);
        if (e) {
            rc = -1;
            break;
        }
        started = id;
    }
    /* a worker reads its wake word before it counts itself arrived: until every
     * new one has, a region's wake-up could come before that read, and the worker
     * would sleep through it while the caller waits for it */
    while (atomic_load(&arrived) < started) sched_yield();
    atomic_store(&workers, started);
    pthread_mutex_unlock(&region);
    pthread_mutex_unlock(&start_lock);
    return rc;
}

void sf_pool_start(int n) { (void)sf_pool_grow(n + 1); }

/* Every worker returns and is joined (tests; a process exits with them asleep). */
void sf_pool_stop(void) {
    pthread_mutex_lock(&start_lock);
    pthread_mutex_lock(&region);
    atomic_store(&workers, 0);
    atomic_store(&stopping, 1);
    for (int i = 1; i <= started; i++) {
        atomic_fetch_add(&wake[i], 1);
        wake_one(&wake[i]);
    }
    for (int i = 1; i <= started; i++) pthread_join(threads[i], NULL);
    started = 0;
    pthread_mutex_unlock(&region);
    pthread_mutex_unlock(&start_lock);
}

#endif

#else /* single-threaded builds, and the native tests built without SF_THREADS: the tasks in order */

static int tasks_done;
int sf_pool_threads(void) { return 1; }
void sf_pool_use(int threads) { (void)threads; }
void sf_parallel(sf_task_fn fn, void *ctx, int ntasks) {
    for (int t = 0; t < ntasks; t++) fn(ctx, t, ntasks);
    if (ntasks > 0) tasks_done += ntasks;
}
void sf_worker_run(int id) { (void)id; }
int sf_pool_arrived(void) { return 0; }
void sf_pool_start(int n) { (void)n; }
void sf_pool_stop(void) {}
void sf_pool_caller_can_wait(int yes) { (void)yes; }
int sf_pool_tasks(int id) { return id == 0 ? tasks_done : 0; }

#endif
