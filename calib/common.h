/* calib/common.h - helpers shared by the calibration programs (CUDA only lives in calib/).
 *
 * CUDA_CHECK / CU_CHECK wrap every runtime / driver call: on failure they print the error
 * string, the expression and file:line, then exit 1. `jw` is a minimal JSON writer (stable
 * key order, %.12g numbers, null for non-finite values). `part_*` opens a partition of the GPU:
 * the whole device (primary context) or a CUDA green context confined to N SMs.
 * Everything here is header-only `static` so each program is one translation unit.
 * Units: times in ms unless a name says _s or _ns, sizes in bytes.
 */
#ifndef SIMPROJ_CALIB_COMMON_H
#define SIMPROJ_CALIB_COMMON_H

#include <cuda.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CUDA_CHECK(expr)                                                                      \
    do {                                                                                      \
        cudaError_t e_ = (expr);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: CUDA error: %s: %s\n", __FILE__, __LINE__,                \
                    cudaGetErrorString(e_), #expr);                                           \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

#define CU_CHECK(expr)                                                                        \
    do {                                                                                      \
        CUresult r_ = (expr);                                                                 \
        if (r_ != CUDA_SUCCESS) {                                                             \
            const char *s_ = "unknown";                                                       \
            cuGetErrorString(r_, &s_);                                                        \
            fprintf(stderr, "%s:%d: CUDA driver error: %s: %s\n", __FILE__, __LINE__, s_,    \
                    #expr);                                                                   \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

/* Launch check: the launch itself, then the kernel's completion when `sync` is true. */
#define KERNEL_CHECK() CUDA_CHECK(cudaGetLastError())

/* ---------------------------------------------------------------- JSON writer */
typedef struct jw {
    FILE *f;
    int depth;
    int n_items[64]; /* items written at each depth, for commas */
} jw;

static inline void jw__sep(jw *w, const char *key)
{
    if (w->depth > 0 && w->n_items[w->depth]++ > 0) {
        fputc(',', w->f);
    }
    if (key) {
        fprintf(w->f, "\"%s\":", key);
    }
}
static inline void jw_begin(jw *w, const char *key, char c)
{
    jw__sep(w, key);
    fputc(c, w->f);
    w->n_items[++w->depth] = 0;
}
static inline void jw_obj(jw *w, const char *key) { jw_begin(w, key, '{'); }
static inline void jw_arr(jw *w, const char *key) { jw_begin(w, key, '['); }
static inline void jw_end_obj(jw *w) { fputc('}', w->f); w->depth--; }
static inline void jw_end_arr(jw *w) { fputc(']', w->f); w->depth--; }
static inline void jw_num(jw *w, const char *key, double v)
{
    jw__sep(w, key);
    if (isfinite(v)) {
        fprintf(w->f, "%.12g", v);
    } else {
        fputs("null", w->f);
    }
}
static inline void jw_int(jw *w, const char *key, long long v)
{
    jw__sep(w, key);
    fprintf(w->f, "%lld", v);
}
static inline void jw_bool(jw *w, const char *key, int v)
{
    jw__sep(w, key);
    fputs(v ? "true" : "false", w->f);
}
static inline void jw_str(jw *w, const char *key, const char *s)
{
    jw__sep(w, key);
    fputc('"', w->f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(w->f, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(w->f, "\\u%04x", *p);
        } else {
            fputc(*p, w->f);
        }
    }
    fputc('"', w->f);
}
/* Raw JSON text (already valid) as a value. */
static inline void jw_raw(jw *w, const char *key, const char *json)
{
    jw__sep(w, key);
    fputs(json, w->f);
}
static inline void jw_nums(jw *w, const char *key, const double *v, int n)
{
    jw_arr(w, key);
    for (int i = 0; i < n; i++) {
        jw_num(w, NULL, v[i]);
    }
    jw_end_arr(w);
}

/* ---------------------------------------------------------------- statistics */
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
typedef struct stats {
    double median, min, max, mean, stdev;
} stats;
static inline stats stats_of(const double *v, int n)
{
    stats s = {NAN, NAN, NAN, NAN, NAN};
    if (n <= 0) {
        return s;
    }
    double *t = (double *)malloc(sizeof(double) * (size_t)n);
    memcpy(t, v, sizeof(double) * (size_t)n);
    qsort(t, (size_t)n, sizeof(double), cmp_double);
    s.median = (n % 2) ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    s.min = t[0];
    s.max = t[n - 1];
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        sum += t[i];
    }
    s.mean = sum / n;
    for (int i = 0; i < n; i++) {
        sq += (t[i] - s.mean) * (t[i] - s.mean);
    }
    s.stdev = n > 1 ? sqrt(sq / (n - 1)) : 0.0;
    free(t);
    return s;
}
/* Writes the raw samples under `key` and their median/min/max/stdev (same unit). The caller
 * writes "reps" once per object (two sample sets in one object used to repeat the key). */
static inline void jw_samples(jw *w, const char *key, const double *v, int n)
{
    stats s = stats_of(v, n);
    char k[96];
    jw_nums(w, key, v, n);
    snprintf(k, sizeof k, "%s_median", key); jw_num(w, k, s.median);
    snprintf(k, sizeof k, "%s_min", key);    jw_num(w, k, s.min);
    snprintf(k, sizeof k, "%s_max", key);    jw_num(w, k, s.max);
    snprintf(k, sizeof k, "%s_stdev", key);  jw_num(w, k, s.stdev);
}

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Sleep on the host for ms milliseconds (nanosleep, resumed after a signal). */
static inline void sleep_ms(double ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000.0);
    ts.tv_nsec = (long)((ms - 1000.0 * (double)ts.tv_sec) * 1e6);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* End a program's JSON document: write "elapsed_s" since t_start, close the root object (the
 * caller has closed its arrays), end the line and close fo unless it is stdout. */
static inline void jw_finish_doc(jw *w, FILE *fo, double t_start)
{
    jw_num(w, "elapsed_s", now_s() - t_start);
    jw_end_obj(w);
    fputc('\n', fo);
    if (fo != stdout) {
        fclose(fo);
    }
}

/* ---------------------------------------------------------------- device identity */
static inline void jw_device(jw *w, int dev)
{
    cudaDeviceProp p;
    CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
    int clk_khz = 0, mclk_khz = 0, drv = 0, rt = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, dev));
    CUDA_CHECK(cudaDeviceGetAttribute(&mclk_khz, cudaDevAttrMemoryClockRate, dev));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    char uuid[64];
    const unsigned char *u = (const unsigned char *)p.uuid.bytes;
    snprintf(uuid, sizeof uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
             u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
             u[14], u[15]);
    char pci[32];
    snprintf(pci, sizeof pci, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
    jw_obj(w, "device");
    jw_str(w, "name", p.name);
    jw_str(w, "uuid", uuid);
    jw_str(w, "pci_bus_id", pci);
    jw_int(w, "cc_major", p.major);
    jw_int(w, "cc_minor", p.minor);
    jw_int(w, "sms", p.multiProcessorCount);
    jw_int(w, "mem_bytes", (long long)p.totalGlobalMem);
    jw_int(w, "l2_bytes", p.l2CacheSize);
    jw_num(w, "sm_clock_max_mhz", clk_khz / 1000.0);
    jw_num(w, "mem_clock_max_mhz", mclk_khz / 1000.0);
    jw_int(w, "cuda_driver_version", drv);
    jw_int(w, "cuda_runtime_version", rt);
    jw_end_obj(w);
}

/* ---------------------------------------------------------------- partitions (green contexts) */
typedef struct part {
    int sms;          /* SMs of the partition */
    int is_green;     /* 1: green context, 0: whole device in the primary context */
    CUgreenCtx green;
    CUcontext ctx;    /* current while the partition is open */
    cudaStream_t stream;
} part;

typedef struct part_info {
    int available;           /* green contexts usable on this device */
    int total_sms, min_sms, align_sms;
    char why[256];           /* when not available */
} part_info;

static CUcontext g_primary; /* set by part_setup; the only file-scope state of a program */

/* Initialise the device and learn how it can be split. Never fails hard on green contexts. */
static inline part_info part_setup(int dev)
{
    part_info in;
    memset(&in, 0, sizeof in);
    CUDA_CHECK(cudaSetDevice(dev));
    CUDA_CHECK(cudaFree(0));
    CU_CHECK(cuCtxGetCurrent(&g_primary));
    CUdevice cd;
    CU_CHECK(cuDeviceGet(&cd, dev));
    int n = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev));
    in.total_sms = n;
    CUdevResource res;
    CUresult r = cuDeviceGetDevResource(cd, &res, CU_DEV_RESOURCE_TYPE_SM);
    if (r != CUDA_SUCCESS) {
        const char *s = "unknown";
        cuGetErrorString(r, &s);
        snprintf(in.why, sizeof in.why, "cuDeviceGetDevResource: %s", s);
        return in;
    }
    in.available = 1;
    in.min_sms = (int)res.sm.minSmPartitionSize;
    in.align_sms = (int)res.sm.smCoscheduledAlignment;
    if (in.min_sms <= 0) {
        in.min_sms = 8;
    }
    if (in.align_sms <= 0) {
        in.align_sms = in.min_sms;
    }
    return in;
}

/* Open a partition of `want` SMs (<= 0 or >= all SMs: the whole device). Returns 0, or -1 with
 * `why` filled when the green context could not be made (the caller records it). The partition
 * is current on return. */
static inline int part_open(int dev, int want, const part_info *in, part *p, char *why, size_t why_len)
{
    memset(p, 0, sizeof *p);
    if (want <= 0 || want >= in->total_sms || !in->available) {
        CU_CHECK(cuCtxSetCurrent(g_primary));
        p->sms = in->total_sms;
        p->ctx = g_primary;
        CUDA_CHECK(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
        return 0;
    }
    CUdevice cd;
    CU_CHECK(cuDeviceGet(&cd, dev));
    CUdevResource all, grp, rest;
    CU_CHECK(cuDeviceGetDevResource(cd, &all, CU_DEV_RESOURCE_TYPE_SM));
    unsigned int ngroups = 1;
    const char *es = "unknown";
    CUresult r = cuDevSmResourceSplitByCount(&grp, &ngroups, &all, &rest, 0, (unsigned)want);
    if (r != CUDA_SUCCESS || ngroups != 1) {
        cuGetErrorString(r, &es);
        snprintf(why, why_len, "cuDevSmResourceSplitByCount(%d): %s", want, es);
        return -1;
    }
    CUdevResourceDesc desc;
    r = cuDevResourceGenerateDesc(&desc, &grp, 1);
    if (r == CUDA_SUCCESS) {
        r = cuGreenCtxCreate(&p->green, desc, cd, CU_GREEN_CTX_DEFAULT_STREAM);
    }
    if (r != CUDA_SUCCESS) {
        cuGetErrorString(r, &es);
        snprintf(why, why_len, "green context of %d SMs: %s", want, es);
        return -1;
    }
    CU_CHECK(cuCtxFromGreenCtx(&p->ctx, p->green));
    CU_CHECK(cuCtxSetCurrent(p->ctx));
    CUstream s;
    CU_CHECK(cuGreenCtxStreamCreate(&s, p->green, CU_STREAM_NON_BLOCKING, 0));
    p->stream = (cudaStream_t)s;
    p->sms = (int)grp.sm.smCount;
    p->is_green = 1;
    return 0;
}

/* Like part_open, but on failure records {"sms_requested": want, "error": why} as one element of
 * the array open in w (the caller counts it and moves on) and returns -1. */
static inline int part_open_or_record(jw *w, int dev, int want, const part_info *in, part *p)
{
    char why[256] = "";
    if (part_open(dev, want, in, p, why, sizeof why) == 0) {
        return 0;
    }
    jw_obj(w, NULL);
    jw_int(w, "sms_requested", want);
    jw_str(w, "error", why);
    jw_end_obj(w);
    return -1;
}

static inline void part_close(part *p)
{
    CUDA_CHECK(cudaStreamSynchronize(p->stream));
    CUDA_CHECK(cudaStreamDestroy(p->stream));
    if (p->is_green) {
        CU_CHECK(cuGreenCtxDestroy(p->green));
    }
    CU_CHECK(cuCtxSetCurrent(g_primary));
    memset(p, 0, sizeof *p);
}

/* SM counts to measure: min, min+align, ... below the total, then the total. */
static inline int part_sm_list(const part_info *in, int *out, int cap)
{
    int n = 0;
    if (in->available) {
        for (int s = in->min_sms; s < in->total_sms && n < cap - 1; s += in->align_sms) {
            out[n++] = s;
        }
    }
    out[n++] = in->total_sms;
    return n;
}

/* The partitioning of a sweep over SM counts on device dev (flops, membw): part_setup's, with
 * --whole (whole != 0) none but the whole device; when no --sms list was given (*n_sms == 0),
 * part_sm_list's counts go into sms_list (at most cap) and *n_sms. */
static inline part_info part_sweep(int dev, int whole, int *sms_list, int *n_sms, int cap)
{
    part_info in = part_setup(dev);
    if (whole) {
        in.available = 0;
        snprintf(in.why, sizeof in.why, "--whole");
    }
    if (*n_sms == 0) {
        *n_sms = part_sm_list(&in, sms_list, cap);
    }
    return in;
}

static inline void jw_part_info(jw *w, const part_info *in, int whole_only)
{
    jw_obj(w, "partitioning");
    jw_str(w, "method", whole_only ? "whole-device" : (in->available ? "green-context" : "whole-device"));
    jw_int(w, "total_sms", in->total_sms);
    if (in->available) {
        jw_int(w, "min_partition_sms", in->min_sms);
        jw_int(w, "alignment_sms", in->align_sms);
    } else {
        jw_str(w, "unavailable", in->why);
    }
    jw_end_obj(w);
}

/* In-kernel clock probes: SM cycles and global nanoseconds, read by one thread. */
__device__ __forceinline__ unsigned long long gtimer_ns(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Strict whole-string parsing of a command-line value (never atoi/atof, which accept "12abc"):
 * on a bad or out-of-range value print "PROG: FLAG: expected LO..HI, got 'TEXT'" and exit 2. */
static inline long arg_long(const char *prog, const char *flag, const char *s, long lo, long hi)
{
    char *end = NULL;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr, "%s: %s: expected an integer from %ld to %ld, got '%s'\n", prog, flag, lo,
                hi, s ? s : "");
        exit(2);
    }
    return v;
}

static inline double arg_double(const char *prog, const char *flag, const char *s, double lo,
                                double hi)
{
    char *end = NULL;
    errno = 0;
    double v = s ? strtod(s, &end) : 0.0;
    if (!s || end == s || *end != '\0' || errno == ERANGE || !(v >= lo && v <= hi)) {
        fprintf(stderr, "%s: %s: expected a number from %g to %g, got '%s'\n", prog, flag, lo, hi,
                s ? s : "");
        exit(2);
    }
    return v;
}

/* The number that follows KEY (e.g. "\"kernel_ms\":") in a JSON text a worker printed, or dflt
 * when KEY is absent or not followed by a number. */
static inline double json_number_after(const char *json, const char *key, double dflt)
{
    const char *k = json ? strstr(json, key) : NULL;
    if (!k) {
        return dflt;
    }
    char *end = NULL;
    errno = 0;
    double v = strtod(k + strlen(key), &end);
    return (end == k + strlen(key) || errno == ERANGE) ? dflt : v;
}

/* Parse "8,16,32" into out (at most cap); returns the count, or -1 on a bad list. */
static inline int parse_int_list(const char *s, int *out, int cap)
{
    int n = 0;
    while (*s && n < cap) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v <= 0) {
            return -1;
        }
        out[n++] = (int)v;
        s = end;
        if (*s == ',') {
            s++;
        } else if (*s) {
            return -1;
        }
    }
    return n;
}
static inline int parse_double_list(const char *s, double *out, int cap)
{
    int n = 0;
    while (*s && n < cap) {
        char *end;
        double v = strtod(s, &end);
        if (end == s || !(v >= 0)) {
            return -1;
        }
        out[n++] = v;
        s = end;
        if (*s == ',') {
            s++;
        } else if (*s) {
            return -1;
        }
    }
    return n;
}

/* Open the output file named by -o (or stdout). */
static inline FILE *open_out(const char *path)
{
    if (!path || !strcmp(path, "-")) {
        return stdout;
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(1);
    }
    return f;
}

#endif
