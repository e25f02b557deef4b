/* Is building the profile memory-bound? A plain C version of the engine's profile build (one
 * sweep per slot: previous slot OR one running job's row), on one thread and split in two
 * line-aligned word ranges on two spinning threads. Shapes of the deep pass: 2,016 slots, 2,000
 * running jobs' rows at scattered positions, 143 words (9,128 units) or a 144-word stride.
 *
 *     gcc -O3 -pthread -o /tmp/build_bandwidth bench/build_bandwidth.c
 *     /tmp/build_bandwidth 143 && /tmp/build_bandwidth 144
 *
 * Session 3 on this 2-core VM: 1 thread 0.070-0.081 ms per build, 2 threads 0.066-0.082 ms
 * (docs/engine.md, "Where the threads pay").
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <stdatomic.h>
#define NS 2016
#define NR 2000
static int W = 143, S;       /* S = stride */
static uint64_t *slots, *pool, *freebits;
static int order[NR], rowof[NR];
static atomic_int go, done;
static double now(){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec*1e3+t.tv_nsec/1e6;}
static void build(int lo, int hi){
  uint64_t *b = slots;
  for(int k=lo;k<hi;k++) b[k]=freebits[k];
  for(int i=0;i<NR;i++){
    uint64_t *n = b + S; uint64_t *row = pool + (int64_t)rowof[order[i]]*S;
    for(int k=lo;k<hi;k++) n[k] = b[k] | row[k];
    b = n;
  }
}
static int split;
static void* worker(void*a){
  int gen=0;
  for(;;){ while(atomic_load(&go)==gen) __builtin_ia32_pause(); gen=atomic_load(&go); if(gen<0) return 0;
    build(split, W); atomic_fetch_add(&done,1);}
}
int main(int argc,char**argv){
  S = argc>1 ? atoi(argv[1]) : 143;
  slots = aligned_alloc(64, (size_t)(NS+1)*S*8); pool = aligned_alloc(64,(size_t)NR*S*8); freebits=calloc(S,8);
  memset(slots,0,(size_t)(NS+1)*S*8);
  for(int i=0;i<NR*S;i++) pool[i]=(i*2654435761u)&(i%7==0?~0ull:0);
  for(int i=0;i<NR;i++){order[i]=i; rowof[i]=(i*7919)%NR;}
  split = (W/2 + 7) & ~7;
  pthread_t th; pthread_create(&th,0,worker,0);
  for(int rep=0;rep<5;rep++){
    double t0=now(); for(int r=0;r<100;r++) build(0,W); double t1=now();
    double t2=now(); for(int r=0;r<100;r++){ atomic_store(&done,0); atomic_fetch_add(&go,1); build(0,split); while(atomic_load(&done)==0) __builtin_ia32_pause(); } double t3=now();
    printf("stride %d: 1 thread %.3f ms, 2 threads %.3f ms per build\n", S, (t1-t0)/100, (t3-t2)/100);
  }
  atomic_store(&go,-1); return 0;
}
