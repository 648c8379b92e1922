/* calib/worker - one GPU client process, started by timeslice and mps (fork/exec).
 *
 * Kinds: "compute" (fp32 FMA chains, one full wave over the SMs the process sees; work =
 * iterations per thread) and "memory" (triad over three 128 MiB arrays, repeated `work` passes
 * in one kernel). The SM count comes from the device attribute, which MPS lowers when
 * CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is set.
 *
 *   worker --kind K --calibrate L_MS
 *       prints {"kind":..,"work":W,"kernel_ms":T,"sms_reported":S}: the work for kernels of
 *       about L_MS alone on the GPU, and the measured length (median of 5).
 *   worker --kind K --work W --count N --gap-ms G --go-fd FD [--grid-sms S]
 *       initialises, warms up, prints "READY", waits until FD reaches end of file (the parent
 *       closes it to start every worker at once), then runs N kernels: back to back when G = 0
 *       (one synchronisation at the end), else synchronising after each and sleeping G ms on the
 *       host. Prints one JSON line with monotonic start/end times (seconds, system-wide clock).
 *       --grid-sms S sizes the grid for S SMs instead of the SMs this process sees, so that a
 *       client capped by MPS does the same work per kernel as an uncapped one.
 */
#include "common.h"

#include <errno.h>
#include <unistd.h>

#define THREADS 256
#define CHAINS 8

__global__ void __launch_bounds__(THREADS) k_compute(long iters, float b, float c, float *out)
{
    float a[CHAINS];
    unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int j = 0; j < CHAINS; j++) {
        a[j] = 1e-3f * (float)((tid + j) & 63);
    }
    for (long i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < CHAINS; j++) {
            a[j] = fmaf(a[j], b, c);
        }
    }
    float s = 0;
#pragma unroll
    for (int j = 0; j < CHAINS; j++) {
        s += a[j];
    }
    out[tid] = s;
}

__global__ void __launch_bounds__(THREADS) k_memory(long passes, float4 *__restrict__ a,
                                                   const float4 *__restrict__ b,
                                                   const float4 *__restrict__ c, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (long p = 0; p < passes; p++) {
        for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
            float4 x = b[i], y = c[i];
            a[i] = make_float4(x.x + 1.5f * y.x, x.y + 1.5f * y.y, x.z + 1.5f * y.z,
                               x.w + 1.5f * y.w);
        }
    }
}

typedef struct wk {
    int is_mem, sms, grid;
    float *out;
    float4 *a, *b, *c;
    size_t n4;
    cudaStream_t s;
} wk;

static void wk_init(wk *k, int is_mem, int grid_sms)
{
    memset(k, 0, sizeof *k);
    k->is_mem = is_mem;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaDeviceGetAttribute(&k->sms, cudaDevAttrMultiProcessorCount, 0));
    CUDA_CHECK(cudaStreamCreateWithFlags(&k->s, cudaStreamNonBlocking));
    int bps = 0;
    if (is_mem) {
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, k_memory, THREADS, 0));
        size_t bytes = (size_t)128 << 20;
        k->n4 = bytes / sizeof(float4);
        CUDA_CHECK(cudaMalloc(&k->a, bytes));
        CUDA_CHECK(cudaMalloc(&k->b, bytes));
        CUDA_CHECK(cudaMalloc(&k->c, bytes));
        CUDA_CHECK(cudaMemsetAsync(k->a, 0, bytes, k->s));
        CUDA_CHECK(cudaMemsetAsync(k->b, 0, bytes, k->s));
        CUDA_CHECK(cudaMemsetAsync(k->c, 0, bytes, k->s));
    } else {
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, k_compute, THREADS, 0));
    }
    k->grid = (grid_sms > 0 ? grid_sms : k->sms) * (bps > 0 ? bps : 1);
    CUDA_CHECK(cudaMalloc(&k->out, sizeof(float) * (size_t)k->grid * THREADS));
    CUDA_CHECK(cudaStreamSynchronize(k->s));
}

static void wk_launch(const wk *k, long work)
{
    if (k->is_mem) {
        k_memory<<<k->grid, THREADS, 0, k->s>>>(work, k->a, k->b, k->c, k->n4);
    } else {
        k_compute<<<k->grid, THREADS, 0, k->s>>>(work, 0.999999f, 1e-6f, k->out);
    }
    KERNEL_CHECK();
}

static double wk_time(const wk *k, long work)
{
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    CUDA_CHECK(cudaEventRecord(e0, k->s));
    wk_launch(k, work);
    CUDA_CHECK(cudaEventRecord(e1, k->s));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    return ms;
}

int main(int argc, char **argv)
{
    const char *kind = "compute";
    double calib_ms = -1, gap_ms = 0;
    long work = 0, count = 0;
    int go_fd = -1, grid_sms = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--kind") && i + 1 < argc) {
            kind = argv[++i];
        } else if (!strcmp(argv[i], "--calibrate") && i + 1 < argc) {
            calib_ms = arg_double("worker", "--calibrate", argv[++i], 0.001, 1e5);
        } else if (!strcmp(argv[i], "--work") && i + 1 < argc) {
            work = arg_long("worker", "--work", argv[++i], 1, LONG_MAX);
        } else if (!strcmp(argv[i], "--count") && i + 1 < argc) {
            count = arg_long("worker", "--count", argv[++i], 1, LONG_MAX);
        } else if (!strcmp(argv[i], "--gap-ms") && i + 1 < argc) {
            gap_ms = arg_double("worker", "--gap-ms", argv[++i], 0.0, 1e5);
        } else if (!strcmp(argv[i], "--grid-sms") && i + 1 < argc) {
            grid_sms = (int)arg_long("worker", "--grid-sms", argv[++i], 0, 100000);
        } else if (!strcmp(argv[i], "--go-fd") && i + 1 < argc) {
            go_fd = (int)arg_long("worker", "--go-fd", argv[++i], 0, 65535);
        } else {
            fprintf(stderr, "worker: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    int is_mem = !strcmp(kind, "memory");
    if (!is_mem && strcmp(kind, "compute")) {
        fprintf(stderr, "worker: --kind must be compute or memory\n");
        return 2;
    }
    wk k;
    wk_init(&k, is_mem, grid_sms);
    jw w = {stdout, 0, {0}};
    if (calib_ms > 0) {
        long wl = is_mem ? 1 : 1000;
        wk_time(&k, wl); /* warm-up */
        double t = wk_time(&k, wl);
        double scaled = (double)wl * calib_ms / (t > 1e-3 ? t : 1e-3);
        if (!is_mem && t < 0.2 * calib_ms) { /* small probe: measure again, longer */
            wl = (long)(scaled * 0.5) + 1;
            t = wk_time(&k, wl);
            scaled = (double)wl * calib_ms / (t > 1e-3 ? t : 1e-3);
        }
        wl = scaled < 1 ? 1 : (long)(scaled + 0.5);
        double ms[5];
        for (int r = 0; r < 5; r++) {
            ms[r] = wk_time(&k, wl);
        }
        jw_obj(&w, NULL);
        jw_str(&w, "kind", kind);
        jw_int(&w, "work", wl);
        jw_num(&w, "kernel_ms", stats_of(ms, 5).median);
        jw_int(&w, "sms_reported", k.sms);
        jw_end_obj(&w);
        putchar('\n');
        return 0;
    }
    if (work <= 0 || count <= 0 || go_fd < 0) {
        fprintf(stderr, "worker: need --work, --count and --go-fd (or --calibrate)\n");
        return 2;
    }
    wk_launch(&k, work); /* warm-up: module load, first launch */
    CUDA_CHECK(cudaStreamSynchronize(k.s));
    printf("READY\n");
    fflush(stdout);
    char c;
    while (read(go_fd, &c, 1) > 0) {
    }
    double t0 = now_s();
    for (long i = 0; i < count; i++) {
        wk_launch(&k, work);
        if (gap_ms > 0) {
            CUDA_CHECK(cudaStreamSynchronize(k.s));
            sleep_ms(gap_ms);
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(k.s));
    double t1 = now_s();
    jw_obj(&w, NULL);
    jw_str(&w, "kind", kind);
    jw_int(&w, "pid", (long long)getpid());
    jw_int(&w, "sms_reported", k.sms);
    jw_int(&w, "grid", k.grid);
    jw_int(&w, "work", work);
    jw_int(&w, "kernels", count);
    jw_num(&w, "gap_ms", gap_ms);
    jw_num(&w, "start_s", t0);
    jw_num(&w, "end_s", t1);
    jw_num(&w, "wall_s", t1 - t0);
    jw_end_obj(&w);
    putchar('\n');
    fflush(stdout);
    return 0;
}
