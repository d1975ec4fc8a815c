/* The load of the trace figure: THREADS threads fire bench:hit RATE times a
   second in total for SECONDS, paced in batches each millisecond. Prints
   the hits fired and the CPU time the firing threads used (their own
   CLOCK_THREAD_CPUTIME_ID: the per-hit overhead a tracer adds shows up
   there, in the kernel's uprobe handling done on the firing thread). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench_probes.h"

static long rate_per_thread, seconds;
static long fired[64];
static pthread_barrier_t start;
static double cpu[64];

static double now(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void *worker(void *arg) {
  long id = (long)arg, n = 0;
  pthread_barrier_wait(&start);
  const long per_ms = rate_per_thread / 1000;
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (long ms = 0; ms < seconds * 1000; ms++) {
    for (long i = 0; i < per_ms; i++, n++) BENCH_HIT_GATED(n, id);
    next.tv_nsec += 1000000;
    if (next.tv_nsec >= 1000000000) { next.tv_nsec -= 1000000000; next.tv_sec++; }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
  }
  fired[id] = n;
  cpu[id] = now(CLOCK_THREAD_CPUTIME_ID);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s THREADS RATE SECONDS\n", argv[0]); return 2; }
  long threads = atol(argv[1]);
  rate_per_thread = atol(argv[2]) / threads;
  seconds = atol(argv[3]);
  if (threads < 1 || threads > 64) return 2;
  /* The threads exist, held, before the tracer attaches (it finds them in
     /proc/PID/task); a line on stdin starts the load. */
  pthread_t t[64];
  pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
  for (long i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, (void *)i);
  printf("ready\n");
  fflush(stdout);
  char go[8];
  if (!fgets(go, sizeof go, stdin)) return 3;
  pthread_barrier_wait(&start);
  const double wall0 = now(CLOCK_MONOTONIC);
  long total = 0;
  double cpu_total = 0;
  for (long i = 0; i < threads; i++) {
    pthread_join(t[i], NULL);
    total += fired[i];
    cpu_total += cpu[i];
  }
  printf("fired %ld cpu %.6f wall %.3f\n", total, cpu_total, now(CLOCK_MONOTONIC) - wall0);
  return 0;
}
