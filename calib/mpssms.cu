/* calib/mpssms - how many SMs one MPS client gets under CUDA_MPS_ACTIVE_THREAD_PERCENTAGE.
 *
 * Run it as an MPS client (the daemon already running, the percentage in the environment;
 * calib/coloc/mpscap.py does both). It prints one JSON object: the percentage it was started
 * with, the device's multiProcessorCount as this client sees it (under MPS with a thread
 * percentage, the limited count), and the SMs its kernels really ran on: a kernel of
 * 32 x (reported SMs) blocks that each spin ~0.2 ms and record their SM (%smid) in a bitmap, run
 * --reps times; `sms_used` is the number of distinct SMs over all runs, `sms_used_min` the
 * fewest in one run. Default a whole GPU of up to 256 SMs.
 *
 * usage: mpssms [--reps 5]
 * Build: nvcc -arch=sm_90 -O2 -o mpssms mpssms.cu -lcuda (or make -C calib).
 */
#include "common.h"

#define MAX_SMS 256

__global__ void record_sm(unsigned *seen, long long spin)
{
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    long long t0 = clock64();
    while (clock64() - t0 < spin) {
    }
    if (threadIdx.x == 0 && sm < MAX_SMS) {
        atomicOr(&seen[sm / 32], 1u << (sm % 32));
    }
}

static int popcount_words(const unsigned *v, int n)
{
    int c = 0;
    for (int i = 0; i < n; i++) {
        c += __builtin_popcount(v[i]);
    }
    return c;
}

int main(int argc, char **argv)
{
    long reps = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = arg_long("mpssms", "--reps", argv[++i], 1, 100);
        } else {
            fprintf(stderr, "usage: mpssms [--reps N]\n");
            return 2;
        }
    }
    int dev = 0, sms = 0, clock_khz = 0;
    CUDA_CHECK(cudaSetDevice(dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
    int occ = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, record_sm, 128, 0));
    enum { W = MAX_SMS / 32 };
    unsigned *d_seen = NULL, all[W] = {0}, one[W];
    CUDA_CHECK(cudaMalloc(&d_seen, sizeof all));
    long long spin = (long long)clock_khz / 5; /* ~0.2 ms at the base clock */
    int used_min = MAX_SMS;
    for (long r = 0; r < reps; r++) {
        CUDA_CHECK(cudaMemset(d_seen, 0, sizeof all));
        record_sm<<<32 * (sms > 0 ? sms : 1), 128>>>(d_seen, spin);
        KERNEL_CHECK();
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(one, d_seen, sizeof one, cudaMemcpyDeviceToHost));
        int u = popcount_words(one, W);
        used_min = u < used_min ? u : used_min;
        for (int i = 0; i < W; i++) {
            all[i] |= one[i];
        }
    }
    CUDA_CHECK(cudaFree(d_seen));
    const char *pct = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    jw w = {stdout, 0, {0}};
    jw_obj(&w, NULL);
    jw_str(&w, "thread_percentage_env", pct ? pct : "");
    jw_int(&w, "sms_reported", sms);
    jw_int(&w, "occupancy_blocks_per_sm", occ);
    jw_int(&w, "sms_used", popcount_words(all, W));
    jw_int(&w, "sms_used_min", used_min);
    jw_int(&w, "reps", reps);
    jw_end_obj(&w);
    fputc('\n', stdout);
    return 0;
}
