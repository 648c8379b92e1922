/* calib/allreduce - NCCL all-reduce time against message size across the node's GPUs.
 *
 * One process drives every visible GPU (ncclCommInitAll). For each size from --min (8 B) to
 * --max (1 GiB), doubling, it times `inner` back-to-back float sum all-reduces with CUDA
 * events on GPU 0 (nccl-tests style), --reps samples of that, after warm-up, and checks the
 * result (every element = 1 + 2 + ... + n). algbw = bytes / t; busbw = algbw * 2 (n-1) / n.
 * NVLink multicast (NVLS) stays off: NCCL_NVLS_ENABLE=0 is forced before initialisation.
 *
 * usage: allreduce [-o FILE] [--min BYTES] [--max BYTES] [--reps N]
 * Output: one JSON object (calib/README.md, section "allreduce").
 */
#include "common.h"

#include <nccl.h>

#define NCCL_CHECK(expr)                                                                      \
    do {                                                                                      \
        ncclResult_t r_ = (expr);                                                             \
        if (r_ != ncclSuccess) {                                                              \
            fprintf(stderr, "%s:%d: NCCL error: %s: %s\n", __FILE__, __LINE__,                \
                    ncclGetErrorString(r_), #expr);                                           \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

#define MAXG 16

__global__ void k_fill(float *p, size_t n, float v)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        p[i] = v;
    }
}

int main(int argc, char **argv)
{
    const char *out_path = NULL;
    long long min_b = 8, max_b = 1LL << 30;
    int reps = 7;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--min") && i + 1 < argc) {
            min_b = arg_long("allreduce", "--min", argv[++i], 4, 1L << 40);
        } else if (!strcmp(argv[i], "--max") && i + 1 < argc) {
            max_b = arg_long("allreduce", "--max", argv[++i], 4, 1L << 40);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = (int)arg_long("allreduce", "--reps", argv[++i], 1, 100000);
        } else {
            fprintf(stderr, "usage: allreduce [-o FILE] [--min BYTES] [--max BYTES] [--reps N]\n");
            return 2;
        }
    }
    if (min_b < 4 || max_b < min_b || reps < 1 || reps > 1000) {
        fprintf(stderr, "allreduce: bad sizes or --reps\n");
        return 2;
    }
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    int n = 0;
    CUDA_CHECK(cudaGetDeviceCount(&n));
    FILE *fo = open_out(out_path);
    jw w = {fo, 0, {0}};
    jw_obj(&w, NULL);
    jw_str(&w, "program", "allreduce");
    jw_int(&w, "gpus", n);
    if (n < 2) {
        jw_str(&w, "skipped", "fewer than 2 GPUs visible");
        jw_end_obj(&w);
        fputc('\n', fo);
        if (fo != stdout) {
            fclose(fo);
        }
        return 0;
    }
    if (n > MAXG) {
        n = MAXG;
    }
    int ver = 0;
    NCCL_CHECK(ncclGetVersion(&ver));
    jw_int(&w, "nccl_version", ver);
    jw_str(&w, "nccl_nvls_enable", getenv("NCCL_NVLS_ENABLE"));
    jw_arr(&w, "devices");
    for (int d = 0; d < n; d++) {
        jw_obj(&w, NULL);
        jw_device(&w, d);
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    int p2p = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&p2p, 0, 1));
    jw_bool(&w, "p2p_0_1", p2p);

    ncclComm_t comms[MAXG];
    int devs[MAXG];
    float *sb[MAXG], *rb[MAXG];
    cudaStream_t st[MAXG];
    size_t max_n = (size_t)(max_b / 4);
    double t_init = now_s();
    for (int d = 0; d < n; d++) {
        devs[d] = d;
    }
    NCCL_CHECK(ncclCommInitAll(comms, n, devs));
    jw_num(&w, "init_s", now_s() - t_init);
    for (int d = 0; d < n; d++) {
        CUDA_CHECK(cudaSetDevice(d));
        CUDA_CHECK(cudaStreamCreateWithFlags(&st[d], cudaStreamNonBlocking));
        CUDA_CHECK(cudaMalloc(&sb[d], max_n * sizeof(float)));
        CUDA_CHECK(cudaMalloc(&rb[d], max_n * sizeof(float)));
        k_fill<<<1024, 256, 0, st[d]>>>(sb[d], max_n, (float)(d + 1));
        KERNEL_CHECK();
        CUDA_CHECK(cudaStreamSynchronize(st[d]));
    }
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    const float want = (float)(n * (n + 1) / 2);
    double t_start = now_s();
    int bad = 0;
    jw_arr(&w, "runs");
    for (long long b = min_b; b <= max_b; b *= 2) {
        size_t cnt = (size_t)(b / 4);
        int inner = b <= (1 << 20) ? 50 : (b <= (64 << 20) ? 10 : 2);
        double ms[1000], busbw[1000];
        for (int r = -2; r < reps; r++) { /* r < 0: warm-up */
            CUDA_CHECK(cudaSetDevice(0));
            CUDA_CHECK(cudaEventRecord(e0, st[0]));
            for (int k = 0; k < inner; k++) {
                NCCL_CHECK(ncclGroupStart());
                for (int d = 0; d < n; d++) {
                    NCCL_CHECK(ncclAllReduce(sb[d], rb[d], cnt, ncclFloat, ncclSum, comms[d], st[d]));
                }
                NCCL_CHECK(ncclGroupEnd());
            }
            CUDA_CHECK(cudaSetDevice(0));
            CUDA_CHECK(cudaEventRecord(e1, st[0]));
            for (int d = 0; d < n; d++) {
                CUDA_CHECK(cudaSetDevice(d));
                CUDA_CHECK(cudaStreamSynchronize(st[d]));
            }
            float t = 0;
            CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
            if (r >= 0) {
                ms[r] = t / inner;
                busbw[r] = (double)b / (ms[r] * 1e-3) / 1e9 * 2.0 * (n - 1) / n;
            }
        }
        float got[2];
        CUDA_CHECK(cudaSetDevice(n - 1));
        CUDA_CHECK(cudaMemcpy(got, rb[n - 1] + (cnt - 1), sizeof(float), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(got + 1, rb[n - 1], sizeof(float), cudaMemcpyDeviceToHost));
        int ok = got[0] == want && got[1] == want;
        bad += !ok;
        jw_obj(&w, NULL);
        jw_int(&w, "bytes", b);
        jw_int(&w, "inner", inner);
        jw_bool(&w, "correct", ok);
        jw_int(&w, "reps", reps);
        jw_samples(&w, "ms", ms, reps);
        jw_samples(&w, "busbw_gb_s", busbw, reps);
        jw_end_obj(&w);
    }
    jw_end_arr(&w);
    jw_num(&w, "elapsed_s", now_s() - t_start);
    jw_end_obj(&w);
    fputc('\n', fo);
    if (fo != stdout) {
        fclose(fo);
    }
    for (int d = 0; d < n; d++) {
        NCCL_CHECK(ncclCommDestroy(comms[d]));
    }
    fprintf(stderr, "allreduce: %d GPUs, %d wrong results\n", n, bad);
    return bad ? 1 : 0;
}
