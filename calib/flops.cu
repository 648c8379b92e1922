/* calib/flops - arithmetic rate per number format against the number of SMs.
 *
 * Formats: fp64, fp32, fp16 (half2) FMA chains on the CUDA cores; fp16 and bf16 on the tensor
 * cores through WMMA 16x16x16 with fp32 accumulation (mma.sync, as dcgmproftester's per-format
 * figures; Hopper's wgmma path is faster and not used here). Each launch is one full wave:
 * grid = SMs x resident blocks per SM, so the launch time stays about constant while the SM
 * count changes. SMs are limited with CUDA green contexts (or the whole device with --whole,
 * e.g. one MIG device). Block 0 also records SM cycles and global time, giving the effective
 * SM clock during the launch.
 *
 * usage: flops [-o FILE] [--whole] [--sms 8,16,...] [--reps N] [--target-ms T] [--device D]
 * Output: one JSON object (calib/README.md, section "flops").
 */
#include "common.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#define CHAINS 8
#define THREADS 256

struct clk_probe {
    unsigned long long c0, c1, t0, t1;
};

template <typename T> struct fma_op;
template <> struct fma_op<float> {
    static __device__ __forceinline__ float f(float a, float b, float c) { return fmaf(a, b, c); }
    static __device__ __forceinline__ float from(float x) { return x; }
    static __device__ __forceinline__ float to_f(float x) { return x; }
};
template <> struct fma_op<double> {
    static __device__ __forceinline__ double f(double a, double b, double c) { return fma(a, b, c); }
    static __device__ __forceinline__ double from(float x) { return x; }
    static __device__ __forceinline__ float to_f(double x) { return (float)x; }
};
template <> struct fma_op<__half2> {
    static __device__ __forceinline__ __half2 f(__half2 a, __half2 b, __half2 c) { return __hfma2(a, b, c); }
    static __device__ __forceinline__ __half2 from(float x) { return __float2half2_rn(x); }
    static __device__ __forceinline__ float to_f(__half2 x) { return __low2float(x) + __high2float(x); }
};

template <typename T>
__global__ void __launch_bounds__(THREADS) k_fma(long iters, float bf, float cf, float *out, clk_probe *cp)
{
    T a[CHAINS];
    const T b = fma_op<T>::from(bf), c = fma_op<T>::from(cf);
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < CHAINS; j++) {
        a[j] = fma_op<T>::from(1e-3f * (float)((tid + j) & 63));
    }
    unsigned long long c0 = 0, t0 = 0;
    if (tid == 0) {
        c0 = clock64();
        t0 = gtimer_ns();
    }
    for (long i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < CHAINS; j++) {
            a[j] = fma_op<T>::f(a[j], b, c);
        }
    }
    float s = 0;
#pragma unroll
    for (int j = 0; j < CHAINS; j++) {
        s += fma_op<T>::to_f(a[j]);
    }
    out[tid] = s;
    if (tid == 0) {
        cp->c1 = clock64();
        cp->t1 = gtimer_ns();
        cp->c0 = c0;
        cp->t0 = t0;
    }
}

#define ACC 8
template <typename T>
__global__ void __launch_bounds__(THREADS) k_wmma(long iters, const T *in, float *out, clk_probe *cp)
{
    using namespace nvcuda;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[ACC];
    wmma::load_matrix_sync(fa, in, 16);
    wmma::load_matrix_sync(fb, in + 256, 16);
#pragma unroll
    for (int j = 0; j < ACC; j++) {
        wmma::fill_fragment(acc[j], 0.0f);
    }
    const unsigned tid = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long c0 = 0, t0 = 0;
    if (tid == 0) {
        c0 = clock64();
        t0 = gtimer_ns();
    }
    for (long i = 0; i < iters; i++) {
#pragma unroll
        for (int j = 0; j < ACC; j++) {
            wmma::mma_sync(acc[j], fa, fb, acc[j]);
        }
    }
    float s = 0;
#pragma unroll
    for (int j = 0; j < ACC; j++) {
        for (int e = 0; e < acc[j].num_elements; e++) {
            s += acc[j].x[e];
        }
    }
    out[tid] = s;
    if (tid == 0) {
        cp->c1 = clock64();
        cp->t1 = gtimer_ns();
        cp->c0 = c0;
        cp->t0 = t0;
    }
}

typedef enum { F_FP64, F_FP32, F_FP16, F_FP16_TC, F_BF16_TC, F_N } fmt;
static const char *fmt_name[F_N] = {"fp64", "fp32", "fp16", "fp16_tensor", "bf16_tensor"};
static const char *fmt_unit[F_N] = {"cuda_core", "cuda_core", "cuda_core", "tensor_core", "tensor_core"};
static const char *fmt_instr[F_N] = {"DFMA chains", "FFMA chains", "HFMA2 chains",
                                     "wmma 16x16x16 f16 in, f32 acc (mma.sync)",
                                     "wmma 16x16x16 bf16 in, f32 acc (mma.sync)"};

typedef struct ctx {
    float *out;
    clk_probe *cp;
    __half *hin;
    __nv_bfloat16 *bin;
} ctx;

static int blocks_per_sm(fmt f)
{
    int b = 0;
    switch (f) {
    case F_FP64: CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k_fma<double>, THREADS, 0)); break;
    case F_FP32: CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k_fma<float>, THREADS, 0)); break;
    case F_FP16: CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k_fma<__half2>, THREADS, 0)); break;
    case F_FP16_TC: CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k_wmma<__half>, THREADS, 0)); break;
    default: CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k_wmma<__nv_bfloat16>, THREADS, 0)); break;
    }
    return b > 0 ? b : 1;
}

/* FLOP done by one thread per iteration. */
static double flop_per_thread_iter(fmt f)
{
    switch (f) {
    case F_FP64:
    case F_FP32: return 2.0 * CHAINS;
    case F_FP16: return 4.0 * CHAINS;
    default: return 2.0 * 16 * 16 * 16 * ACC / 32.0; /* per warp / 32 threads */
    }
}

static void launch(fmt f, int grid, long iters, cudaStream_t s, const ctx *c)
{
    switch (f) {
    case F_FP64: k_fma<double><<<grid, THREADS, 0, s>>>(iters, 0.999999f, 1e-6f, c->out, c->cp); break;
    case F_FP32: k_fma<float><<<grid, THREADS, 0, s>>>(iters, 0.999999f, 1e-6f, c->out, c->cp); break;
    case F_FP16: k_fma<__half2><<<grid, THREADS, 0, s>>>(iters, 0.999f, 1e-3f, c->out, c->cp); break;
    case F_FP16_TC: k_wmma<__half><<<grid, THREADS, 0, s>>>(iters, c->hin, c->out, c->cp); break;
    default: k_wmma<__nv_bfloat16><<<grid, THREADS, 0, s>>>(iters, c->bin, c->out, c->cp); break;
    }
    KERNEL_CHECK();
}

/* Buffers live in the context that is current (each partition allocates its own). */
static void ctx_alloc(ctx *c, int max_threads)
{
    CUDA_CHECK(cudaMalloc(&c->out, sizeof(float) * (size_t)max_threads));
    CUDA_CHECK(cudaMalloc(&c->cp, sizeof(clk_probe)));
    __half h[512];
    __nv_bfloat16 bh[512];
    for (int i = 0; i < 512; i++) {
        float v = (float)((i * 37) % 17) / 64.0f - 0.125f; /* small, exact in both formats */
        h[i] = __float2half(v);
        bh[i] = __float2bfloat16(v);
    }
    CUDA_CHECK(cudaMalloc(&c->hin, sizeof h));
    CUDA_CHECK(cudaMalloc(&c->bin, sizeof bh));
    CUDA_CHECK(cudaMemcpy(c->hin, h, sizeof h, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(c->bin, bh, sizeof bh, cudaMemcpyHostToDevice));
}
static void ctx_free(ctx *c)
{
    CUDA_CHECK(cudaFree(c->out));
    CUDA_CHECK(cudaFree(c->cp));
    CUDA_CHECK(cudaFree(c->hin));
    CUDA_CHECK(cudaFree(c->bin));
}

static float time_launch(fmt f, int grid, long iters, const part *p, const ctx *c, cudaEvent_t e0,
                         cudaEvent_t e1)
{
    CUDA_CHECK(cudaEventRecord(e0, p->stream));
    launch(f, grid, iters, p->stream, c);
    CUDA_CHECK(cudaEventRecord(e1, p->stream));
    CUDA_CHECK(cudaEventSynchronize(e1));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}

int main(int argc, char **argv)
{
    const char *out_path = NULL;
    int whole = 0, reps = 7, dev = 0, n_sms = 0;
    double target_ms = 4.0;
    int sms_list[64];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--whole")) {
            whole = 1;
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = (int)arg_long("flops", "--reps", argv[++i], 1, 1000);
        } else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            dev = (int)arg_long("flops", "--device", argv[++i], 0, 1023);
        } else if (!strcmp(argv[i], "--target-ms") && i + 1 < argc) {
            target_ms = arg_double("flops", "--target-ms", argv[++i], 0.001, 1e6);
        } else if (!strcmp(argv[i], "--sms") && i + 1 < argc) {
            n_sms = parse_int_list(argv[++i], sms_list, 64);
            if (n_sms <= 0) {
                fprintf(stderr, "flops: bad --sms list\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: flops [-o FILE] [--whole] [--sms LIST] [--reps N] [--target-ms T] [--device D]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || !(target_ms > 0)) {
        fprintf(stderr, "flops: bad --reps or --target-ms\n");
        return 2;
    }
    part_info in = part_sweep(dev, whole, sms_list, &n_sms, 64);
    FILE *fo = open_out(out_path);
    jw w = {fo, 0, {0}};
    jw_obj(&w, NULL);
    jw_str(&w, "program", "flops");
    jw_device(&w, dev);
    jw_part_info(&w, &in, whole);
    jw_int(&w, "threads_per_block", THREADS);

    cudaEvent_t e0, e1;
    double t_start = now_s();

    /* Iterations per format: scale a probe launch on the whole device to target_ms. */
    long iters[F_N];
    {
        part p;
        char why[256];
        part_open(dev, 0, &in, &p, why, sizeof why);
        ctx c;
        int grid_max = in.total_sms * 32;
        ctx_alloc(&c, grid_max * THREADS);
        CUDA_CHECK(cudaEventCreate(&e0));
        CUDA_CHECK(cudaEventCreate(&e1));
        for (int f = 0; f < F_N; f++) {
            int grid = in.total_sms * blocks_per_sm((fmt)f);
            long it = 256;
            for (int k = 0; k < 6; k++) {
                float ms = time_launch((fmt)f, grid, it, &p, &c, e0, e1);
                if (ms > 0.5f * target_ms) {
                    break;
                }
                it *= 4;
            }
            float ms = time_launch((fmt)f, grid, it, &p, &c, e0, e1);
            double scaled = (double)it * target_ms / (ms > 1e-3f ? ms : 1e-3f);
            iters[f] = scaled < 16 ? 16 : (long)scaled;
        }
        CUDA_CHECK(cudaEventDestroy(e0));
        CUDA_CHECK(cudaEventDestroy(e1));
        ctx_free(&c);
        part_close(&p);
    }

    jw_arr(&w, "runs");
    int n_fail = 0;
    for (int si = 0; si < n_sms; si++) {
        part p;
        if (part_open_or_record(&w, dev, sms_list[si], &in, &p) != 0) {
            n_fail++;
            continue;
        }
        ctx c;
        ctx_alloc(&c, in.total_sms * 32 * THREADS);
        CUDA_CHECK(cudaEventCreate(&e0));
        CUDA_CHECK(cudaEventCreate(&e1));
        for (int f = 0; f < F_N; f++) {
            int bps = blocks_per_sm((fmt)f);
            int grid = p.sms * bps;
            double flop = flop_per_thread_iter((fmt)f) * (double)iters[f] * grid * THREADS;
            time_launch((fmt)f, grid, iters[f], &p, &c, e0, e1); /* warm-up */
            double ms[1000], tflops[1000], mhz[1000];
            for (int r = 0; r < reps; r++) {
                ms[r] = time_launch((fmt)f, grid, iters[f], &p, &c, e0, e1);
                tflops[r] = flop / (ms[r] * 1e-3) / 1e12;
                clk_probe cp;
                CUDA_CHECK(cudaMemcpy(&cp, c.cp, sizeof cp, cudaMemcpyDeviceToHost));
                double dt = (double)(cp.t1 - cp.t0);
                mhz[r] = dt > 0 ? (double)(cp.c1 - cp.c0) / dt * 1e3 : NAN;
            }
            jw_obj(&w, NULL);
            jw_str(&w, "format", fmt_name[f]);
            jw_str(&w, "unit", fmt_unit[f]);
            jw_str(&w, "instr", fmt_instr[f]);
            jw_int(&w, "sms_requested", sms_list[si]);
            jw_int(&w, "sms", p.sms);
            jw_bool(&w, "green_context", p.is_green);
            jw_int(&w, "grid", grid);
            jw_int(&w, "iters", iters[f]);
            jw_num(&w, "flop", flop);
            jw_int(&w, "reps", reps);
            jw_samples(&w, "ms", ms, reps);
            jw_samples(&w, "tflops", tflops, reps);
            jw_nums(&w, "sm_clock_mhz", mhz, reps);
            jw_end_obj(&w);
        }
        CUDA_CHECK(cudaEventDestroy(e0));
        CUDA_CHECK(cudaEventDestroy(e1));
        ctx_free(&c);
        part_close(&p);
    }
    jw_end_arr(&w);
    jw_finish_doc(&w, fo, t_start);
    fprintf(stderr, "flops: %d SM counts, %d failed\n", n_sms, n_fail);
    return n_fail == n_sms ? 1 : 0;
}
