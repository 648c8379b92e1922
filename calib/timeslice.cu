/* calib/timeslice - time-slicing: 1, 2, 4, 8 processes on one GPU (or one MIG device).
 *
 * For each kernel length L (default 0.1, 1, 10 ms of a compute-bound kernel that fills the
 * GPU alone), each host-gap mode (0: kernels back to back; 1: the host sleeps L after each
 * kernel), each repetition and each process count N, it starts N workers (calib/bin/worker)
 * that each run --work-ms worth of kernels, and records each process's start, end and wall
 * time. Efficiency follows in `slicesim fit`: eta(N) = N * T(1) / T(N).
 * This program never initialises CUDA itself. Run it without the MPS daemon.
 *
 * usage: timeslice [-o FILE] [--lengths 0.1,1,10] [--procs 1,2,4,8] [--work-ms 200]
 *                  [--gaps 0,1] [--reps 2] [--worker PATH]
 * Output: one JSON object (calib/README.md, section "timeslice").
 */
#include "share.h"

int main(int argc, char **argv)
{
    const char *out_path = NULL, *wpath = NULL;
    double lengths[16] = {0.1, 1, 10}, gaps[4] = {0, 1};
    int n_len = 3, n_gap = 2, procs[16] = {1, 2, 4, 8}, n_procs = 4, reps = 2;
    double work_ms = 200;
    for (int i = 1; i < argc; i++) {
        int bad = 0;
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--lengths") && i + 1 < argc) {
            bad = (n_len = parse_double_list(argv[++i], lengths, 16)) <= 0;
        } else if (!strcmp(argv[i], "--gaps") && i + 1 < argc) {
            bad = (n_gap = parse_double_list(argv[++i], gaps, 4)) <= 0;
        } else if (!strcmp(argv[i], "--procs") && i + 1 < argc) {
            bad = (n_procs = parse_int_list(argv[++i], procs, 16)) <= 0;
        } else if (!strcmp(argv[i], "--work-ms") && i + 1 < argc) {
            work_ms = arg_double("timeslice", "--work-ms", argv[++i], 0.001, 1e7);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = (int)arg_long("timeslice", "--reps", argv[++i], 1, 1000);
        } else if (!strcmp(argv[i], "--worker") && i + 1 < argc) {
            wpath = argv[++i];
        } else {
            bad = 1;
        }
        if (bad) {
            fprintf(stderr, "usage: timeslice [-o FILE] [--lengths LIST] [--procs LIST] "
                            "[--work-ms MS] [--gaps LIST] [--reps N] [--worker PATH]\n");
            return 2;
        }
    }
    for (int i = 0; i < n_procs; i++) {
        if (procs[i] > SHARE_MAX_WORKERS) {
            fprintf(stderr, "timeslice: at most %d processes\n", SHARE_MAX_WORKERS);
            return 2;
        }
    }
    char worker[PATH_MAX];
    worker_path(argv[0], wpath, worker, sizeof worker);
    FILE *fo = open_out(out_path);
    jw w = {fo, 0, {0}};
    jw_obj(&w, NULL);
    jw_str(&w, "program", "timeslice");
    jw_str(&w, "kernel", "fp32 FMA chains, one full wave over all SMs");
    jw_num(&w, "work_ms_per_process", work_ms);
    jw_str(&w, "gap_unit", "gap_ms = gap factor x measured solo kernel length");
    double t_start = now_s();
    int n_fail = 0;
    jw_arr(&w, "lengths");
    for (int li = 0; li < n_len; li++) {
        long work = 0;
        const char *cal = calibrate(worker, "compute", lengths[li], &work);
        jw_obj(&w, NULL);
        jw_num(&w, "kernel_ms_target", lengths[li]);
        if (!cal) {
            jw_str(&w, "error", "calibration run failed");
            jw_end_obj(&w);
            n_fail++;
            continue;
        }
        jw_raw(&w, "calibration", cal);
        double kernel_ms = json_number_after(cal, "\"kernel_ms\":", lengths[li]);
        long count = (long)(work_ms / kernel_ms + 0.5);
        if (count < 1) {
            count = 1;
        }
        jw_int(&w, "kernels_per_process", count);
        jw_arr(&w, "runs");
        for (int gi = 0; gi < n_gap; gi++) {
            for (int r = 0; r < reps; r++) {
                for (int pi = 0; pi < n_procs; pi++) {
                    wspec sp[SHARE_MAX_WORKERS];
                    for (int k = 0; k < procs[pi]; k++) {
                        sp[k] = (wspec){"compute", work, count, gaps[gi] * kernel_ms, 0};
                    }
                    jw_obj(&w, NULL);
                    jw_num(&w, "gap_factor", gaps[gi]);
                    jw_num(&w, "gap_ms", gaps[gi] * kernel_ms);
                    jw_int(&w, "rep", r);
                    if (run_group(worker, procs[pi], sp, &w) != 0) {
                        n_fail++;
                    }
                    jw_end_obj(&w);
                }
            }
        }
        jw_end_arr(&w);
        jw_end_obj(&w);
        fprintf(stderr, "timeslice: L=%g ms done (%.1f s)\n", lengths[li], now_s() - t_start);
    }
    jw_end_arr(&w);
    jw_int(&w, "failed_groups", n_fail);
    jw_finish_doc(&w, fo, t_start);
    return n_fail ? 1 : 0;
}
