/* calib/tslice - the GPU's time-slice scheduler seen from inside the contexts it switches.
 *
 * Part "slices": P processes (fork; the parent never initialises CUDA) each run ONE kernel
 * (one 32-thread block per SM) that spins for --span-ms by the GPU's %globaltimer. Thread 0 of
 * block 0 reads the timer in a tight loop; two consecutive readings more than --min-gap-us
 * apart mean the context was off the GPU in between: that gap [before, after] is recorded (ns
 * of %globaltimer, one clock for every context of the GPU). The runs between a process's gaps
 * are its time slices; a gap of one process holds the others' slices plus the switches, so the
 * quantum and the switch gap follow from the timelines (experiments/tslice_json.c).
 * P = 1 first: the gaps a context sees alone (timer noise, the display of none).
 *
 * Part "return": process A keeps the GPU busy (one spinning kernel as above, --busy-ms long, or
 * with --stream-ms L > 0 back-to-back work kernels of about L ms with a synchronisation after
 * every --stream-sync of them, like calib/coloc's memory stream), while process B alternates a
 * host sleep of u ms (pseudo-random, uniform in --sleep-ms LO,HI, fixed seed) and one tiny
 * kernel followed by a synchronisation. B records for each launch the host sleep it really had,
 * the host-side latency from launch to the return of the synchronisation, and the %globaltimer
 * reading at its kernel's start. B alone first (the latency without a busy context), then
 * beside A: the difference is what a process coming back from a host phase waits for the
 * context that holds the GPU.
 *
 * usage: tslice [-o FILE] [--procs 2,3] [--reps 2] [--span-ms 400] [--min-gap-us 5]
 *               [--returns 300] [--sleep-ms 0.05,4] [--busy-ms 2500] [--stream-ms 0.25]
 *               [--stream-sync 8]
 * Output: one JSON object (calib/README.md, section "tslice").
 * Build: make -C calib (nvcc -arch sm_90). Run it without the MPS daemon.
 */
#include "share.h"

#include <sys/types.h>

#define MAX_GAPS 8192
#define MAX_RETURNS 4096

__device__ __forceinline__ unsigned long long gtimer(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Spin for span_ns of %globaltimer; block 0 / thread 0 records the gaps longer than min_gap_ns
 * (pairs: the reading before, the reading after) and its first and last readings. */
__global__ void k_spin_record(unsigned long long span_ns, unsigned long long min_gap_ns,
                              unsigned long long *gaps, int cap, int *n_gaps,
                              unsigned long long *first_last)
{
    bool rec = blockIdx.x == 0 && threadIdx.x == 0;
    unsigned long long t0 = gtimer(), prev = t0, now;
    int n = 0;
    do {
        now = gtimer();
        if (rec && now - prev > min_gap_ns) {
            if (n < cap) {
                gaps[2 * n] = prev;
                gaps[2 * n + 1] = now;
            }
            n++;
        }
        prev = now;
    } while (now - t0 < span_ns);
    if (rec) {
        *n_gaps = n;
        first_last[0] = t0;
        first_last[1] = now;
    }
}

/* Work kernel (the stream's stand-in): a dependent FMA chain of `iters` per thread. */
__global__ void k_work(long iters, float *out)
{
    float a = 1e-3f * (float)(threadIdx.x & 31);
    for (long i = 0; i < iters; i++) {
        a = fmaf(a, 0.999999f, 1e-6f);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

/* B's tiny kernel: the %globaltimer reading at its start. */
__global__ void k_stamp(unsigned long long *slot) { *slot = gtimer(); }

typedef struct opts {
    double span_ms, min_gap_us, sleep_lo, sleep_hi, busy_ms, stream_ms;
    int returns, stream_sync;
} opts;

/* Child side: ready -> wait for the go pipe to close -> run. */
static void child_ready(int go_fd)
{
    printf("READY\n");
    fflush(stdout);
    char c;
    while (read(go_fd, &c, 1) > 0) {
    }
}

static int sms_of_device(void)
{
    int sms = 0;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    return sms;
}

/* role "slice": one spinning kernel of span_ms; prints its timeline. */
static void role_slice(const opts *o, double span_ms, int go_fd, int with_device)
{
    int sms = sms_of_device();
    unsigned long long *d_gaps, *d_fl, h_fl[2];
    int *d_n, h_n = 0;
    CUDA_CHECK(cudaMalloc(&d_gaps, sizeof(unsigned long long) * 2 * MAX_GAPS));
    CUDA_CHECK(cudaMalloc(&d_fl, sizeof h_fl));
    CUDA_CHECK(cudaMalloc(&d_n, sizeof h_n));
    unsigned long long min_gap = (unsigned long long)(o->min_gap_us * 1e3);
    k_spin_record<<<sms, 32>>>(1000000ULL, min_gap, d_gaps, MAX_GAPS, d_n, d_fl); /* warm-up */
    KERNEL_CHECK();
    CUDA_CHECK(cudaDeviceSynchronize());
    child_ready(go_fd);
    double t0 = now_s();
    k_spin_record<<<sms, 32>>>((unsigned long long)(span_ms * 1e6), min_gap, d_gaps, MAX_GAPS,
                               d_n, d_fl);
    KERNEL_CHECK();
    CUDA_CHECK(cudaDeviceSynchronize());
    double t1 = now_s();
    CUDA_CHECK(cudaMemcpy(&h_n, d_n, sizeof h_n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(h_fl, d_fl, sizeof h_fl, cudaMemcpyDeviceToHost));
    int kept = h_n < MAX_GAPS ? h_n : MAX_GAPS;
    unsigned long long *h_gaps =
        (unsigned long long *)malloc(sizeof(unsigned long long) * 2 * (size_t)(kept + 1));
    CUDA_CHECK(cudaMemcpy(h_gaps, d_gaps, sizeof(unsigned long long) * 2 * (size_t)kept,
                          cudaMemcpyDeviceToHost));
    jw w = {stdout, 0, {0}};
    jw_obj(&w, NULL);
    jw_str(&w, "role", "slice");
    jw_int(&w, "pid", (long long)getpid());
    jw_int(&w, "grid", sms);
    if (with_device) {
        jw_device(&w, 0);
    }
    jw_num(&w, "host_wall_s", t1 - t0);
    jw_int(&w, "t_first_ns", (long long)h_fl[0]);
    jw_int(&w, "t_last_ns", (long long)h_fl[1]);
    jw_int(&w, "n_gaps", h_n);
    jw_arr(&w, "gaps_ns"); /* [before, after] pairs, absolute %globaltimer */
    for (int i = 0; i < kept; i++) {
        jw_arr(&w, NULL);
        jw_int(&w, NULL, (long long)h_gaps[2 * i]);
        jw_int(&w, NULL, (long long)h_gaps[2 * i + 1]);
        jw_end_arr(&w);
    }
    jw_end_arr(&w);
    jw_end_obj(&w);
    putchar('\n');
    fflush(stdout);
    free(h_gaps);
}

/* One work kernel alone, timed by events (ms). */
static float time_work(int sms, long iters, float *d_out, cudaEvent_t e0, cudaEvent_t e1)
{
    float ms = 0;
    CUDA_CHECK(cudaEventRecord(e0));
    k_work<<<sms, 256>>>(iters, d_out);
    KERNEL_CHECK();
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaEventSynchronize(e1));
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    return ms;
}

/* role "stream": back-to-back work kernels of ~stream_ms, a synchronisation every stream_sync,
 * for busy_ms of host time. */
static void role_stream(const opts *o, int go_fd)
{
    int sms = sms_of_device();
    float *d_out;
    CUDA_CHECK(cudaMalloc(&d_out, sizeof(float) * (size_t)sms * 256));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    long iters = 10000;
    float ms = 0;
    for (int r = 0; r < 3; r++) { /* scale the chain to ~stream_ms alone */
        ms = time_work(sms, iters, d_out, e0, e1);
        iters = (long)((double)iters * o->stream_ms / (ms > 1e-3 ? ms : 1e-3)) + 1;
    }
    ms = time_work(sms, iters, d_out, e0, e1);
    child_ready(go_fd);
    double t0 = now_s();
    long kernels = 0;
    while (now_s() - t0 < o->busy_ms * 1e-3) {
        for (int i = 0; i < o->stream_sync; i++) {
            k_work<<<sms, 256>>>(iters, d_out);
            kernels++;
        }
        KERNEL_CHECK();
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    double t1 = now_s();
    jw w = {stdout, 0, {0}};
    jw_obj(&w, NULL);
    jw_str(&w, "role", "stream");
    jw_int(&w, "pid", (long long)getpid());
    jw_num(&w, "kernel_ms_alone", ms);
    jw_int(&w, "iters", iters);
    jw_int(&w, "sync_every", o->stream_sync);
    jw_int(&w, "kernels", kernels);
    jw_num(&w, "host_wall_s", t1 - t0);
    jw_end_obj(&w);
    putchar('\n');
    fflush(stdout);
}

/* role "return": sleep u, launch a tiny kernel, synchronise; o->returns times. */
static void role_return(const opts *o, double lead_ms, int go_fd)
{
    sms_of_device();
    int n = o->returns;
    unsigned long long *d_st, *h_st = (unsigned long long *)malloc(sizeof *h_st * (size_t)n);
    double *slept = (double *)malloc(sizeof(double) * (size_t)n);
    double *lat = (double *)malloc(sizeof(double) * (size_t)n);
    CUDA_CHECK(cudaMalloc(&d_st, sizeof *d_st * (size_t)n));
    k_stamp<<<1, 1>>>(d_st); /* warm-up */
    KERNEL_CHECK();
    CUDA_CHECK(cudaDeviceSynchronize());
    child_ready(go_fd);
    sleep_ms(lead_ms);
    unsigned long long lcg = 0x9e3779b97f4a7c15ULL; /* fixed seed: the same sleeps every run */
    double t_prev = now_s();
    for (int i = 0; i < n; i++) {
        lcg = lcg * 6364136223846793005ULL + 1442695040888963407ULL;
        double u01 = (double)(lcg >> 11) / 9007199254740992.0;
        sleep_ms(o->sleep_lo + (o->sleep_hi - o->sleep_lo) * u01);
        double t0 = now_s();
        k_stamp<<<1, 1>>>(d_st + i);
        KERNEL_CHECK();
        CUDA_CHECK(cudaDeviceSynchronize());
        double t1 = now_s();
        slept[i] = 1e3 * (t0 - t_prev);
        lat[i] = 1e3 * (t1 - t0);
        t_prev = t1;
    }
    CUDA_CHECK(cudaMemcpy(h_st, d_st, sizeof *h_st * (size_t)n, cudaMemcpyDeviceToHost));
    jw w = {stdout, 0, {0}};
    jw_obj(&w, NULL);
    jw_str(&w, "role", "return");
    jw_int(&w, "pid", (long long)getpid());
    jw_nums(&w, "host_sleep_ms", slept, n);
    jw_samples(&w, "latency_ms", lat, n);
    jw_arr(&w, "kernel_start_ns");
    for (int i = 0; i < n; i++) {
        jw_int(&w, NULL, (long long)h_st[i]);
    }
    jw_end_arr(&w);
    jw_end_obj(&w);
    putchar('\n');
    fflush(stdout);
    free(h_st);
    free(slept);
    free(lat);
}

typedef struct role {
    const char *name; /* slice | stream | return */
    double span_ms;   /* slice: kernel span; return: lead before the first sleep */
    int with_device;
} role;

typedef struct group_ctx {
    const opts *o;
    const role *ro;
} group_ctx;

static void role_child(int i, int go_fd, void *ctx)
{
    const group_ctx *g = (const group_ctx *)ctx;
    const role *r = &g->ro[i];
    if (!strcmp(r->name, "slice")) {
        role_slice(g->o, r->span_ms, go_fd, r->with_device);
    } else if (!strcmp(r->name, "stream")) {
        role_stream(g->o, go_fd);
    } else {
        role_return(g->o, r->span_ms, go_fd);
    }
}

/* Fork one child per role, start them together (share_fork_group), write "procs", "ok" and
 * "children" into the object open in w. Returns 0 when every child succeeded. */
static int run_roles(const opts *o, int n, const role *ro, jw *w)
{
    static char buf[SHARE_MAX_WORKERS][1 << 20];
    char *lines[SHARE_MAX_WORKERS];
    for (int i = 0; i < SHARE_MAX_WORKERS; i++) {
        lines[i] = buf[i];
    }
    group_ctx g = {o, ro};
    return share_fork_json(n, role_child, &g, lines, (int)sizeof buf[0], w, NULL, "children");
}

/* nvidia-smi's view of GPU 0 (the parent never initialises CUDA itself). */
static void jw_smi(jw *w)
{
    char line[512] = "";
    FILE *p = popen("nvidia-smi --query-gpu=name,uuid,driver_version,compute_mode,"
                    "mig.mode.current,clocks.sm,clocks.max.sm,power.limit,persistence_mode "
                    "--format=csv,noheader -i 0 2>/dev/null", "r");
    if (p) {
        if (!fgets(line, sizeof line, p)) {
            line[0] = 0;
        }
        pclose(p);
    }
    line[strcspn(line, "\n")] = 0;
    jw_str(w, "nvidia_smi_fields", "name, uuid, driver_version, compute_mode, mig.mode.current, "
                                   "clocks.sm, clocks.max.sm, power.limit, persistence_mode");
    jw_str(w, "nvidia_smi", line);
}

static void usage(void)
{
    fprintf(stderr, "usage: tslice [-o FILE] [--procs LIST] [--reps N] [--span-ms MS] "
                    "[--min-gap-us US] [--returns N] [--sleep-ms LO,HI] [--busy-ms MS] "
                    "[--stream-ms MS] [--stream-sync N]\n");
}

int main(int argc, char **argv)
{
    const char *out_path = NULL;
    opts o = {400, 5, 0.05, 4, 2500, 0.25, 300, 8};
    int procs[8] = {2, 3}, n_procs = 2, reps = 2;
    for (int i = 1; i < argc; i++) {
        int bad = 0;
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--procs") && i + 1 < argc) {
            bad = (n_procs = parse_int_list(argv[++i], procs, 8)) <= 0;
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = (int)arg_long("tslice", "--reps", argv[++i], 1, 100);
        } else if (!strcmp(argv[i], "--span-ms") && i + 1 < argc) {
            o.span_ms = arg_double("tslice", "--span-ms", argv[++i], 1, 60000);
        } else if (!strcmp(argv[i], "--min-gap-us") && i + 1 < argc) {
            o.min_gap_us = arg_double("tslice", "--min-gap-us", argv[++i], 0.1, 1e5);
        } else if (!strcmp(argv[i], "--returns") && i + 1 < argc) {
            o.returns = (int)arg_long("tslice", "--returns", argv[++i], 1, MAX_RETURNS);
        } else if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc) {
            double v[2];
            bad = parse_double_list(argv[++i], v, 2) != 2 || !(v[0] >= 0 && v[1] >= v[0]);
            o.sleep_lo = v[0];
            o.sleep_hi = v[1];
        } else if (!strcmp(argv[i], "--busy-ms") && i + 1 < argc) {
            o.busy_ms = arg_double("tslice", "--busy-ms", argv[++i], 1, 60000);
        } else if (!strcmp(argv[i], "--stream-ms") && i + 1 < argc) {
            o.stream_ms = arg_double("tslice", "--stream-ms", argv[++i], 0, 1000);
        } else if (!strcmp(argv[i], "--stream-sync") && i + 1 < argc) {
            o.stream_sync = (int)arg_long("tslice", "--stream-sync", argv[++i], 1, 100000);
        } else {
            bad = 1;
        }
        if (bad) {
            usage();
            return 2;
        }
    }
    for (int i = 0; i < n_procs; i++) {
        if (procs[i] < 1 || procs[i] > SHARE_MAX_WORKERS) {
            fprintf(stderr, "tslice: --procs: 1..%d processes\n", SHARE_MAX_WORKERS);
            return 2;
        }
    }
    FILE *fo = open_out(out_path);
    jw w = {fo, 0, {0}};
    double t_start = now_s();
    char date[32];
    time_t tt = time(NULL);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tt));
    int n_fail = 0;
    jw_obj(&w, NULL);
    jw_str(&w, "schema", "slicesim-tslice");
    jw_int(&w, "schema_version", 1);
    jw_str(&w, "program", "tslice");
    jw_str(&w, "date_utc", date);
    jw_num(&w, "span_ms", o.span_ms);
    jw_num(&w, "min_gap_us", o.min_gap_us);
    jw_str(&w, "clock", "%globaltimer ns (one clock for all contexts of the GPU)");
    jw_smi(&w);
    /* slices: P = 1 (noise), then each P of --procs, --reps times */
    jw_arr(&w, "slices");
    for (int r = 0; r < reps; r++) {
        for (int pi = -1; pi < n_procs; pi++) {
            int p = pi < 0 ? 1 : procs[pi];
            if (pi < 0 && r > 0) {
                continue;
            }
            role ro[SHARE_MAX_WORKERS];
            for (int k = 0; k < p; k++) {
                ro[k] = (role){"slice", o.span_ms, pi < 0};
            }
            jw_obj(&w, NULL);
            jw_int(&w, "rep", r);
            n_fail += run_roles(&o, p, ro, &w) != 0;
            jw_end_obj(&w);
            fprintf(stderr, "tslice: slices P=%d rep %d (%.1f s)\n", p, r, now_s() - t_start);
        }
    }
    jw_end_arr(&w);
    /* return: B alone, B beside one spinning kernel, B beside the stream */
    jw_num(&w, "sleep_lo_ms", o.sleep_lo);
    jw_num(&w, "sleep_hi_ms", o.sleep_hi);
    jw_num(&w, "stream_ms", o.stream_ms);
    jw_int(&w, "stream_sync", o.stream_sync);
    jw_arr(&w, "returns");
    const char *busy[3] = {NULL, "slice", "stream"};
    for (int m = 0; m < (o.stream_ms > 0 ? 3 : 2); m++) {
        role ro[2];
        int n = 0;
        if (busy[m]) {
            ro[n++] = (role){busy[m], o.busy_ms, 0};
        }
        ro[n++] = (role){"return", 50, 0};
        jw_obj(&w, NULL);
        jw_str(&w, "beside", busy[m] ? busy[m] : "none");
        n_fail += run_roles(&o, n, ro, &w) != 0;
        jw_end_obj(&w);
        fprintf(stderr, "tslice: returns beside %s (%.1f s)\n", busy[m] ? busy[m] : "none",
                now_s() - t_start);
    }
    jw_end_arr(&w);
    jw_int(&w, "failed_groups", n_fail);
    jw_finish_doc(&w, fo, t_start);
    return n_fail ? 1 : 0;
}
