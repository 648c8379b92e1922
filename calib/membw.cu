/* calib/membw - device-memory bandwidth (copy and triad) against the number of SMs.
 *
 * copy: b[i] = a[i]; triad: a[i] = b[i] + 1.5 c[i]; float4 accesses, grid-stride loop, one full
 * wave of blocks (SMs x resident blocks per SM). Arrays are --mib MiB each (default 512, far
 * above any L2), allocated in each partition's context. Bytes counted: copy 2N, triad 3N
 * (bytes read plus bytes written, as STREAM does). SMs limited with green contexts, or the
 * whole device with --whole (e.g. one MIG device).
 *
 * usage: membw [-o FILE] [--whole] [--sms LIST] [--reps N] [--mib M] [--device D]
 * Output: one JSON object (calib/README.md, section "membw").
 */
#include "common.h"

#define THREADS 256

__global__ void __launch_bounds__(THREADS) k_copy(const float4 *__restrict__ a, float4 *__restrict__ b, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        b[i] = a[i];
    }
}

__global__ void __launch_bounds__(THREADS) k_triad(float4 *__restrict__ a, const float4 *__restrict__ b,
                                                  const float4 *__restrict__ c, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        float4 x = b[i], y = c[i];
        a[i] = make_float4(x.x + 1.5f * y.x, x.y + 1.5f * y.y, x.z + 1.5f * y.z, x.w + 1.5f * y.w);
    }
}

__global__ void k_fill(float4 *a, size_t n, float v)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        float f = v + (float)(i & 1023) * 1e-3f;
        a[i] = make_float4(f, f, f, f);
    }
}

int main(int argc, char **argv)
{
    const char *out_path = NULL;
    int whole = 0, reps = 7, dev = 0, n_sms = 0, mib = 512;
    int sms_list[64];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--whole")) {
            whole = 1;
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = (int)arg_long("membw", "--reps", argv[++i], 1, 1000);
        } else if (!strcmp(argv[i], "--mib") && i + 1 < argc) {
            mib = (int)arg_long("membw", "--mib", argv[++i], 16, 65536);
        } else if (!strcmp(argv[i], "--device") && i + 1 < argc) {
            dev = (int)arg_long("membw", "--device", argv[++i], 0, 1023);
        } else if (!strcmp(argv[i], "--sms") && i + 1 < argc) {
            n_sms = parse_int_list(argv[++i], sms_list, 64);
            if (n_sms <= 0) {
                fprintf(stderr, "membw: bad --sms list\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: membw [-o FILE] [--whole] [--sms LIST] [--reps N] [--mib M] [--device D]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000 || mib < 16 || mib > 65536) {
        fprintf(stderr, "membw: bad --reps or --mib\n");
        return 2;
    }
    part_info in = part_sweep(dev, whole, sms_list, &n_sms, 64);
    size_t bytes = (size_t)mib << 20;
    size_t n4 = bytes / sizeof(float4);
    int bps_copy = 0, bps_triad = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps_copy, k_copy, THREADS, 0));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps_triad, k_triad, THREADS, 0));

    FILE *fo = open_out(out_path);
    jw w = {fo, 0, {0}};
    jw_obj(&w, NULL);
    jw_str(&w, "program", "membw");
    jw_device(&w, dev);
    jw_part_info(&w, &in, whole);
    jw_int(&w, "array_bytes", (long long)bytes);
    jw_int(&w, "threads_per_block", THREADS);
    double t_start = now_s();
    jw_arr(&w, "runs");
    int n_fail = 0;
    for (int si = 0; si < n_sms; si++) {
        part p;
        if (part_open_or_record(&w, dev, sms_list[si], &in, &p) != 0) {
            n_fail++;
            continue;
        }
        float4 *a, *b, *c;
        CUDA_CHECK(cudaMalloc(&a, bytes));
        CUDA_CHECK(cudaMalloc(&b, bytes));
        CUDA_CHECK(cudaMalloc(&c, bytes));
        k_fill<<<p.sms * 4, THREADS, 0, p.stream>>>(a, n4, 1.0f);
        KERNEL_CHECK();
        k_fill<<<p.sms * 4, THREADS, 0, p.stream>>>(b, n4, 2.0f);
        KERNEL_CHECK();
        k_fill<<<p.sms * 4, THREADS, 0, p.stream>>>(c, n4, 3.0f);
        KERNEL_CHECK();
        cudaEvent_t e0, e1;
        CUDA_CHECK(cudaEventCreate(&e0));
        CUDA_CHECK(cudaEventCreate(&e1));
        for (int kind = 0; kind < 2; kind++) {
            int grid = p.sms * (kind == 0 ? bps_copy : bps_triad);
            double moved = (kind == 0 ? 2.0 : 3.0) * (double)bytes;
            double ms[1000], gbs[1000];
            for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
                CUDA_CHECK(cudaEventRecord(e0, p.stream));
                if (kind == 0) {
                    k_copy<<<grid, THREADS, 0, p.stream>>>(a, b, n4);
                } else {
                    k_triad<<<grid, THREADS, 0, p.stream>>>(a, b, c, n4);
                }
                KERNEL_CHECK();
                CUDA_CHECK(cudaEventRecord(e1, p.stream));
                CUDA_CHECK(cudaEventSynchronize(e1));
                float t = 0;
                CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
                if (r >= 0) {
                    ms[r] = t;
                    gbs[r] = moved / (t * 1e-3) / 1e9;
                }
            }
            jw_obj(&w, NULL);
            jw_str(&w, "kernel", kind == 0 ? "copy" : "triad");
            jw_int(&w, "sms_requested", sms_list[si]);
            jw_int(&w, "sms", p.sms);
            jw_bool(&w, "green_context", p.is_green);
            jw_int(&w, "grid", grid);
            jw_num(&w, "bytes_moved", moved);
            jw_int(&w, "reps", reps);
            jw_samples(&w, "ms", ms, reps);
            jw_samples(&w, "gb_s", gbs, reps);
            jw_end_obj(&w);
        }
        /* Check one element of the triad result: a = b + 1.5 c, where b holds a's first
         * values (the copy ran first) and the triad's output does not feed its inputs. */
        float4 h;
        CUDA_CHECK(cudaMemcpy(&h, a + 5, sizeof h, cudaMemcpyDeviceToHost));
        float want = (1.0f + 5e-3f) + 1.5f * (3.0f + 5e-3f);
        if (fabsf(h.x - want) > 1e-4f) {
            fprintf(stderr, "membw: triad check failed: got %g, want %g\n", h.x, want);
            return 1;
        }
        CUDA_CHECK(cudaEventDestroy(e0));
        CUDA_CHECK(cudaEventDestroy(e1));
        CUDA_CHECK(cudaFree(a));
        CUDA_CHECK(cudaFree(b));
        CUDA_CHECK(cudaFree(c));
        part_close(&p);
    }
    jw_end_arr(&w);
    jw_finish_doc(&w, fo, t_start);
    fprintf(stderr, "membw: %d SM counts, %d failed\n", n_sms, n_fail);
    return n_fail == n_sms ? 1 : 0;
}
