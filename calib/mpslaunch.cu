/* calib/mpslaunch - kernel launch throughput of one client, to run k of them at once under MPS.
 *
 * One process launches one kernel shape back to back on one stream for --windows windows of
 * --window-s seconds each, all starting at the wall-clock instant --start-at (CLOCK_REALTIME ns,
 * so that k clients started together measure the same interval), and synchronises at the end of
 * each window: a window's rate is its launches over the time from its start to that
 * synchronisation, i.e. kernels that the GPU ran. Shapes: --blocks B x --threads T, each block
 * spinning --spin-ns on the SM (%globaltimer; 0 = an empty kernel), with --gap-ns of host busy wait
 * after each launch (a loop's host time between launches) and --sync-every N (a stream
 * synchronisation after every N launches: 1 = launch and wait, a latency-bound loop; 0 = only at
 * a window's end). Used by calib/coloc/launchceil.py (docs/validation.md, issue 25: does one
 * client's kernel cost hold other clients' kernels back under MPS?).
 *
 * usage: mpslaunch --start-at NS [--blocks 1] [--threads 32] [--spin-ns 0] [--gap-ns 0]
 *                  [--sync-every 0] [--windows 3] [--window-s 0.5]
 * Output: one JSON object on stdout: the arguments, the SMs this client sees, per window the
 * launches, seconds and rate (kernels/s), and the start lateness (ns past --start-at).
 * Build: make -C calib (bin/mpslaunch).
 */
#include "common.h"

__global__ void spin_kernel(long long spin_ns)
{
    if (spin_ns <= 0) {
        return;
    }
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while ((long long)(t - t0) < spin_ns);
}

static long long now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void host_wait(long long ns)
{
    if (ns <= 0) {
        return;
    }
    long long t0 = now_ns(CLOCK_MONOTONIC);
    while (now_ns(CLOCK_MONOTONIC) - t0 < ns) {
    }
}

#define MAX_WINDOWS 16

int main(int argc, char **argv)
{
    long long start_at = 0, spin_ns = 0, gap_ns = 0;
    int blocks = 1, threads = 32, sync_every = 0, windows = 3;
    double window_s = 0.5;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--start-at")) {
            start_at = atoll(v);
        } else if (!strcmp(k, "--blocks")) {
            blocks = atoi(v);
        } else if (!strcmp(k, "--threads")) {
            threads = atoi(v);
        } else if (!strcmp(k, "--spin-ns")) {
            spin_ns = atoll(v);
        } else if (!strcmp(k, "--gap-ns")) {
            gap_ns = atoll(v);
        } else if (!strcmp(k, "--sync-every")) {
            sync_every = atoi(v);
        } else if (!strcmp(k, "--windows")) {
            windows = atoi(v);
        } else if (!strcmp(k, "--window-s")) {
            window_s = atof(v);
        } else {
            fprintf(stderr, "mpslaunch: unknown argument %s\n", k);
            return 2;
        }
    }
    if (argc % 2 != 1 || blocks < 1 || threads < 1 || windows < 1 || windows > MAX_WINDOWS ||
        window_s <= 0) {
        fprintf(stderr, "usage: mpslaunch --start-at NS [--blocks B] [--threads T] [--spin-ns N] "
                        "[--gap-ns N] [--sync-every N] [--windows 1..16] [--window-s S]\n");
        return 2;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int i = 0; i < 2000; i++) { /* warm up: module load, launch path */
        spin_kernel<<<blocks, threads, 0, s>>>(spin_ns);
    }
    KERNEL_CHECK();
    CUDA_CHECK(cudaStreamSynchronize(s));
    long long late = now_ns(CLOCK_REALTIME) - start_at;
    while (now_ns(CLOCK_REALTIME) < start_at) {
    }
    long long n[MAX_WINDOWS], dt[MAX_WINDOWS];
    long long w0 = now_ns(CLOCK_MONOTONIC);
    for (int w = 0; w < windows; w++) {
        long long end = w0 + (long long)(window_s * 1e9), count = 0;
        while (now_ns(CLOCK_MONOTONIC) < end) {
            spin_kernel<<<blocks, threads, 0, s>>>(spin_ns);
            count++;
            if (sync_every > 0 && count % sync_every == 0) {
                CUDA_CHECK(cudaStreamSynchronize(s));
            }
            host_wait(gap_ns);
        }
        CUDA_CHECK(cudaStreamSynchronize(s));
        long long w1 = now_ns(CLOCK_MONOTONIC);
        n[w] = count;
        dt[w] = w1 - w0;
        w0 = w1;
    }
    KERNEL_CHECK();
    jw j = {stdout, 0, {0}};
    jw_obj(&j, NULL);
    jw_int(&j, "blocks", blocks);
    jw_int(&j, "threads", threads);
    jw_num(&j, "spin_ns", (double)spin_ns);
    jw_num(&j, "gap_ns", (double)gap_ns);
    jw_int(&j, "sync_every", sync_every);
    jw_int(&j, "sms", prop.multiProcessorCount);
    jw_num(&j, "late_ns", (double)late);
    jw_arr(&j, "windows");
    for (int w = 0; w < windows; w++) {
        jw_obj(&j, NULL);
        jw_num(&j, "launches", (double)n[w]);
        jw_num(&j, "s", dt[w] * 1e-9);
        jw_num(&j, "rate", n[w] / (dt[w] * 1e-9));
        jw_end_obj(&j);
    }
    jw_end_arr(&j);
    jw_end_obj(&j);
    fputc('\n', stdout);
    return 0;
}
