/* calib/mps - clients under the MPS daemon with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE caps.
 *
 * The daemon must already run (calib/run-all.sh starts it with `nvidia-cuda-mps-control -d`
 * and stops it with `echo quit | nvidia-cuda-mps-control` on every exit path). For each
 * percentage (default 100, 50, 25) and each client mix (c = compute-bound worker, m =
 * memory-bound worker; default c, cc, cccc, m, mm, mmmm, cm) it starts the clients together,
 * each running --work-ms worth of kernels of about --len-ms (their length alone, uncapped), and
 * records per-process times and the SM count each client was given. Every client's grid is
 * sized for the whole GPU, so a capped client does the same work per kernel, in more waves. It also records `get_server_list`, which names the
 * MPS server process when the clients really went through MPS.
 *
 * usage: mps [-o FILE] [--pcts 100,50,25] [--mixes c,cc,...] [--len-ms 1] [--work-ms 200]
 *            [--reps 1] [--worker PATH]
 * Output: one JSON object (calib/README.md, section "mps").
 */
#include "share.h"

static void jw_command_output(jw *w, const char *key, const char *cmd)
{
    char buf[2048] = "";
    size_t n = 0;
    FILE *p = popen(cmd, "r");
    if (p) {
        n = fread(buf, 1, sizeof buf - 1, p);
        pclose(p);
    }
    buf[n] = 0;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) {
        buf[--n] = 0;
    }
    jw_str(w, key, buf);
}

int main(int argc, char **argv)
{
    const char *out_path = NULL, *wpath = NULL;
    int pcts[8] = {100, 50, 25}, n_pct = 3, reps = 1;
    const char *mixes_arg = "c,cc,cccc,m,mm,mmmm,cm";
    double len_ms = 1, work_ms = 200;
    for (int i = 1; i < argc; i++) {
        int bad = 0;
        if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out_path = argv[++i];
        } else if (!strcmp(argv[i], "--pcts") && i + 1 < argc) {
            bad = (n_pct = parse_int_list(argv[++i], pcts, 8)) <= 0;
        } else if (!strcmp(argv[i], "--mixes") && i + 1 < argc) {
            mixes_arg = argv[++i];
        } else if (!strcmp(argv[i], "--len-ms") && i + 1 < argc) {
            len_ms = arg_double("mps", "--len-ms", argv[++i], 0.001, 1e5);
        } else if (!strcmp(argv[i], "--work-ms") && i + 1 < argc) {
            work_ms = arg_double("mps", "--work-ms", argv[++i], 0.001, 1e7);
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = (int)arg_long("mps", "--reps", argv[++i], 1, 1000);
        } else if (!strcmp(argv[i], "--worker") && i + 1 < argc) {
            wpath = argv[++i];
        } else {
            bad = 1;
        }
        if (bad || !(len_ms > 0) || !(work_ms > 0)) {
            fprintf(stderr, "usage: mps [-o FILE] [--pcts LIST] [--mixes c,cm,...] [--len-ms MS] "
                            "[--work-ms MS] [--reps N] [--worker PATH]\n");
            return 2;
        }
    }
    char mixes[16][SHARE_MAX_WORKERS + 1];
    int n_mix = 0;
    for (const char *s = mixes_arg; *s && n_mix < 16;) {
        size_t l = strcspn(s, ",");
        if (l == 0 || l > SHARE_MAX_WORKERS || strspn(s, "cm") < l) {
            fprintf(stderr, "mps: bad --mixes '%s'\n", mixes_arg);
            return 2;
        }
        memcpy(mixes[n_mix], s, l);
        mixes[n_mix++][l] = 0;
        s += l + (s[l] == ',');
    }
    char worker[PATH_MAX];
    worker_path(argv[0], wpath, worker, sizeof worker);
    unsetenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");

    FILE *fo = open_out(out_path);
    jw w = {fo, 0, {0}};
    jw_obj(&w, NULL);
    jw_str(&w, "program", "mps");
    const char *pd = getenv("CUDA_MPS_PIPE_DIRECTORY");
    jw_str(&w, "pipe_directory", pd ? pd : "/tmp/nvidia-mps (default)");
    jw_num(&w, "kernel_ms_target", len_ms);
    jw_num(&w, "work_ms_per_process", work_ms);
    double t_start = now_s();
    int n_fail = 0;
    long work_c = 0, work_m = 0;
    const char *cal = calibrate(worker, "compute", len_ms, &work_c);
    if (!cal) {
        jw_str(&w, "error", "compute calibration failed (MPS server not reachable?)");
        jw_end_obj(&w);
        fputc('\n', fo);
        return 1;
    }
    jw_raw(&w, "calibration_compute", cal);
    /* cal points at calibrate()'s buffer: read what is needed before the next call. */
    double kms_c = json_number_after(cal, "\"kernel_ms\":", len_ms);
    int full_sms = (int)json_number_after(cal, "\"sms_reported\":", 0.0);
    cal = calibrate(worker, "memory", len_ms, &work_m);
    if (!cal) {
        jw_str(&w, "error", "memory calibration failed");
        jw_end_obj(&w);
        fputc('\n', fo);
        return 1;
    }
    jw_raw(&w, "calibration_memory", cal);
    double kms_m = json_number_after(cal, "\"kernel_ms\":", len_ms);
    jw_command_output(&w, "server_list", "echo get_server_list | nvidia-cuda-mps-control 2>&1");

    jw_arr(&w, "runs");
    for (int pi = 0; pi < n_pct; pi++) {
        char pct[16];
        snprintf(pct, sizeof pct, "%d", pcts[pi]);
        setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", pct, 1);
        for (int mi = 0; mi < n_mix; mi++) {
            for (int r = 0; r < reps; r++) {
                int n = (int)strlen(mixes[mi]);
                wspec sp[SHARE_MAX_WORKERS];
                for (int k = 0; k < n; k++) {
                    int mem = mixes[mi][k] == 'm';
                    double kms = mem ? kms_m : kms_c;
                    long count = (long)(work_ms / kms + 0.5);
                    sp[k] = (wspec){mem ? "memory" : "compute", mem ? work_m : work_c,
                                    count < 1 ? 1 : count, 0, full_sms};
                }
                jw_obj(&w, NULL);
                jw_int(&w, "thread_percentage", pcts[pi]);
                jw_str(&w, "mix", mixes[mi]);
                jw_int(&w, "rep", r);
                if (run_group(worker, n, sp, &w) != 0) {
                    n_fail++;
                }
                jw_end_obj(&w);
            }
        }
        fprintf(stderr, "mps: %d%% done (%.1f s)\n", pcts[pi], now_s() - t_start);
    }
    unsetenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    jw_end_arr(&w);
    jw_int(&w, "failed_groups", n_fail);
    jw_finish_doc(&w, fo, t_start);
    return n_fail ? 1 : 0;
}
