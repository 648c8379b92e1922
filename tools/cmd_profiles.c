/* tools/cmd_profiles.c - `slicesim profiles [GPU] [--catalog FILE]`: a GPU's MIG profile table.
 *
 * Without GPU, lists the catalog's GPU types. Columns: profile name, nvidia-smi profile id, SMs,
 * memory (GiB as nvidia-smi mig -lgip prints it), compute and memory slices, engines (copy,
 * NVDEC, NVENC, JPEG, OFA), max instances per GPU, placements ({starts}:size in memory slices),
 * and the first driver branch that offers the profile. "-" marks a figure no source gives. */
#include "tools/cli.h"

#include <stdio.h>
#include <string.h>

#include "model/hw/catalog.h"
#include "sim/arena.h"
#include "sim/diag.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: slicesim profiles [GPU] [--catalog FILE]\n"
                 "  Prints the MIG GPU-instance profiles of GPU (a name from the catalog, or an\n"
                 "  alias such as A100-40GB); without GPU, lists the catalog's GPU types.\n"
                 "  --catalog FILE  read this catalog instead of the built-in model/hw/gpus.yaml\n");
}

static void num_or_dash(char *buf, size_t n, int v, bool known)
{
    if (known) {
        snprintf(buf, n, "%d", v);
    } else {
        snprintf(buf, n, "-");
    }
}

static void print_profiles(const gpu_type *g)
{
    if (g->compute_slices <= 0) { /* a GPU without MIG (T4, V100, ...): no profile table */
        printf("%s (%s): no MIG; %d SMs\n", g->name, g->arch ? g->arch : "-", g->sms_total);
        if (g->note) {
            printf("note: %s\n", g->note);
        }
        printf("sources: %s\n", g->src ? g->src : "-");
        return;
    }
    printf("%s (%s): %d compute slices, %d memory slices, at most %d instances", g->name,
           g->arch ? g->arch : "-", g->compute_slices, g->memory_slices, g->max_mig_instances);
    if (g->sms_mig_full > 0 && g->sms_total > 0) {
        printf(", %d of %d SMs usable with MIG on", g->sms_mig_full, g->sms_total);
    } else if (g->sms_mig_full > 0) {
        printf(", %d SMs usable with MIG on", g->sms_mig_full);
    }
    if (g->mig_min_driver > 0) {
        printf(", MIG from driver R%d", g->mig_min_driver);
    }
    printf("\n\n%-12s %3s %4s %9s %7s %7s %3s %3s %3s %4s %3s %3s  %-18s %s\n", "profile", "id",
           "SMs", "mem(GiB)", "compute", "memory", "CE", "DEC", "ENC", "JPEG", "OFA", "max",
           "placements", "min driver");
    for (int i = 0; i < g->n_profiles; i++) {
        const mig_profile *p = &g->profiles[i];
        char id[16], sms[16], mem[24], place[64], drv[16];
        num_or_dash(id, sizeof id, p->id, p->id >= 0);
        num_or_dash(sms, sizeof sms, p->sms, p->sms > 0);
        if (p->mem_bytes > 0) {
            snprintf(mem, sizeof mem, "%.2f", (double)p->mem_bytes / 1073741824.0);
        } else {
            snprintf(mem, sizeof mem, "-");
        }
        int k = snprintf(place, sizeof place, "{");
        for (int s = 0; s < p->n_starts && k > 0 && (size_t)k < sizeof place; s++) {
            k += snprintf(place + k, sizeof place - (size_t)k, "%s%d", s ? "," : "", p->starts[s]);
        }
        if (k > 0 && (size_t)k < sizeof place) {
            snprintf(place + k, sizeof place - (size_t)k, "}:%d", p->mem_slices);
        }
        if (p->min_driver > 0) {
            snprintf(drv, sizeof drv, "R%d", p->min_driver);
        } else {
            snprintf(drv, sizeof drv, "-");
        }
        printf("%-12s %3s %4s %9s %7d %7d %3d %3d %3d %4d %3d %3d  %-18s %s\n", p->name, id, sms,
               mem, p->compute_slices, p->mem_slices, p->copy_engines, p->nvdec, p->nvenc, p->jpeg,
               p->ofa, p->max_instances, place, drv);
    }
    printf("\n");
    for (int i = 0; i < g->n_profiles; i++) {
        const mig_profile *p = &g->profiles[i];
        if (p->unsourced || p->note) {
            printf("%s:%s%s%s%s\n", p->name, p->unsourced ? " unsourced: " : "",
                   p->unsourced ? p->unsourced : "", p->note ? " note: " : "",
                   p->note ? p->note : "");
        }
    }
    if (g->note) {
        printf("note: %s\n", g->note);
    }
    printf("sources: %s\n", g->src ? g->src : "-");
}

int cmd_profiles(int argc, char **argv)
{
    const char *gpu = NULL, *catalog = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(argv[i], "--catalog")) {
            if (++i >= argc) {
                return cli_usage_error("profiles", "--catalog needs a file name");
            }
            catalog = argv[i];
        } else if (argv[i][0] == '-') {
            return cli_usage_error("profiles", "unknown option '%s'; expected --catalog or --help",
                                   argv[i]);
        } else if (gpu) {
            return cli_usage_error("profiles", "one GPU at a time; got '%s' and '%s'", gpu,
                                   argv[i]);
        } else {
            gpu = argv[i];
        }
    }
    arena *a = arena_create();
    diag *d = diag_create();
    gpu_catalog cat;
    const gpu_type *g = NULL;
    int status = cli_load_catalog("profiles", catalog, gpu, a, d, &cat, &g);
    if (status == CLI_EXIT_OK && !gpu) {
        printf("%-18s %-10s %s\n", "GPU", "arch", "aliases");
        for (size_t i = 0; i < cat.n_gpus; i++) {
            const gpu_type *t = &cat.gpus[i];
            printf("%-18s %-10s", t->name, t->arch);
            for (int k = 0; k < t->n_aliases; k++) {
                printf("%s%s", k ? ", " : " ", t->aliases[k]);
            }
            printf("\n");
        }
    } else if (status == CLI_EXIT_OK) {
        print_profiles(g);
    }
    diag_destroy(d);
    arena_destroy(a);
    return status;
}
