/* Unit tests for experiments/timeslicing.c (the k8s device plugin's sharing config). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "experiments/timeslicing.h"
#include "sim/err.h"
#include "tests/unit/diagfx.h"

static arena *A;
static diag *D;

static void setup(void)
{
    A = arena_create();
    D = diag_create();
}

static void teardown(void)
{
    diag_destroy(D);
    arena_destroy(A);
}

TestSuite(timeslicing, .init = setup, .fini = teardown);

Test(timeslicing, fixtures)
{
    timeslicing_config c;
    int rc = timeslicing_load("experiments/sharing/time-slicing.yaml", A, &c, D);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(c.version, "v1");
    cr_assert_eq(c.mig_strategy, TIMESLICING_MIG_UNSET);
    cr_assert(c.time_slicing.present);
    cr_assert_not(c.mps.present);
    cr_assert_eq(timeslicing_active(&c), &c.time_slicing);
    cr_assert_eq(timeslicing_replicas(&c, "nvidia.com/gpu"), 4);
    cr_assert_eq(timeslicing_replicas(&c, "nvidia.com/mig-1g.5gb"), 1);
    cr_assert(c.time_slicing.resources[0].all_devices);
    char buf[64];
    cr_assert_str_eq(timeslicing_advertised(&c.time_slicing, &c.time_slicing.resources[0], buf,
                                            sizeof buf),
                     "nvidia.com/gpu.shared");

    rc = timeslicing_load("experiments/sharing/time-slicing-mig-mixed.yaml", A, &c, D);
    cr_assert_eq(rc, 0);
    cr_assert_eq(c.mig_strategy, TIMESLICING_MIG_MIXED);
    cr_assert_eq(c.time_slicing.n_resources, 5);
    cr_assert_eq(timeslicing_replicas(&c, "nvidia.com/mig-3g.20gb"), 3);
    cr_assert(c.time_slicing.fail_requests_greater_than_one);
    cr_assert_str_eq(timeslicing_advertised(&c.time_slicing, &c.time_slicing.resources[1], buf,
                                            sizeof buf),
                     "nvidia.com/mig-1g.5gb.shared");
}

Test(timeslicing, everything_the_real_format_has)
{
    const char *y = "version: v1\n"
                    "flags:\n"
                    "  migStrategy: single\n"
                    "  failOnInitError: true\n"
                    "  nvidiaDriverRoot: /run/nvidia/driver\n"
                    "  plugin:\n"
                    "    passDeviceSpecs: false\n"
                    "    deviceListStrategy: [envvar, cdi-annotations]\n"
                    "    deviceIDStrategy: uuid\n"
                    "  gfd:\n"
                    "    oneshot: false\n"
                    "    sleepInterval: 60s\n"
                    "imex:\n"
                    "  channelIDs: [0]\n"
                    "sharing:\n"
                    "  mps:\n"
                    "    renameByDefault: true\n"
                    "    resources:\n"
                    "      - name: nvidia.com/gpu\n"
                    "        replicas: 10\n"
                    "        rename: gpu-mps\n"
                    "        devices: [0, \"1\", \"GPU-b1028956-cfa2-0990-bf4a-5da9abb51763\"]\n";
    timeslicing_config c;
    int rc = timeslicing_load_buffer("dp.yaml", y, strlen(y), A, &c, D);
    if (rc) {
        diag_print(D, stderr);
    }
    cr_assert_eq(rc, 0);
    cr_assert_eq(c.mig_strategy, TIMESLICING_MIG_SINGLE);
    cr_assert_eq(timeslicing_active(&c), &c.mps);
    cr_assert_eq(timeslicing_replicas(&c, "nvidia.com/gpu"), 10);
    const timeslicing_resource *r = &c.mps.resources[0];
    cr_assert_not(r->all_devices);
    cr_assert_eq(r->n_device_refs, 3);
    cr_assert_str_eq(r->device_refs[2], "GPU-b1028956-cfa2-0990-bf4a-5da9abb51763");
    char buf[64];
    cr_assert_str_eq(timeslicing_advertised(&c.mps, r, buf, sizeof buf), "gpu-mps");
}

static const char *bad(const char *y)
{
    static char msg[1024];
    timeslicing_config c;
    diag_clear(D);
    cr_assert_eq(timeslicing_load_buffer("dp.yaml", y, strlen(y), A, &c, D), SIM_EINPUT);
    snprintf(msg, sizeof msg, "%s", fx_diag_message(D, 0));
    return msg;
}

#define TS(res) "version: v1\nsharing:\n  timeSlicing:\n    resources:\n" res

Test(timeslicing, bad_input)
{
    cr_assert_str_eq(bad(TS("      - name: nvidia.com/gpu\n        replica: 4\n")),
                     "dp.yaml:6:9: error: sharing.timeSlicing.resources[0].replica: unknown key; "
                     "expected one of [name, rename, replicas, devices], got 'replica'");
    cr_assert_str_eq(bad(TS("      - name: nvidia.com/gpu\n        replicas: 0\n")),
                     "dp.yaml:6:19: error: sharing.timeSlicing.resources[0].replicas: out of "
                     "range; expected an integer from 1 to 1024, got '0'");
    cr_assert_str_eq(bad(TS("      - name: nvidia.com/gpus\n        replicas: 2\n")),
                     "dp.yaml:5:9: error: sharing.timeSlicing.resources[0].name: not a "
                     "device-plugin resource; expected nvidia.com/gpu or "
                     "nvidia.com/mig-<C>g.<M>gb, got 'nvidia.com/gpus'");
    cr_assert_str_eq(bad(TS("      - name: nvidia.com/gpu\n        replicas: 2\n"
                            "      - name: nvidia.com/gpu\n        replicas: 3\n")),
                     "dp.yaml:7:9: error: sharing.timeSlicing.resources[1].name: resource already "
                     "listed at resources[0]; expected each resource once, got 'nvidia.com/gpu'");
    cr_assert_str_eq(bad(TS("      - name: nvidia.com/gpu\n        replicas: 2\n"
                            "        devices: some\n")),
                     "dp.yaml:7:18: error: sharing.timeSlicing.resources[0].devices: wrong value; "
                     "expected all, a device count from 1 to 1024, or a list of devices, got "
                     "'some'");
    cr_assert_str_eq(bad("version: v1\nflags:\n  migStrategy: mix\n"),
                     "dp.yaml:3:16: error: flags.migStrategy: unknown value; expected one of "
                     "[none, single, mixed], got 'mix'");
    cr_assert_str_eq(bad("version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                         "      - {name: nvidia.com/gpu, replicas: 2}\n"
                         "  mps:\n    resources:\n      - {name: nvidia.com/gpu, replicas: 2}\n"),
                     "dp.yaml:7:5: error: sharing.mps: time-slicing and MPS are mutually "
                     "exclusive; expected only one of sharing.timeSlicing and sharing.mps, got "
                     "both");
    cr_assert_str_eq(bad("version: v1\nsharing:\n  mps:\n    resources:\n"
                         "      - {name: nvidia.com/mig-1g.5gb, replicas: 2}\n"),
                     "dp.yaml:5:9: error: sharing.mps.resources[0].name: MPS shares only full "
                     "GPUs; expected nvidia.com/gpu, got 'nvidia.com/mig-1g.5gb'");
    cr_assert_str_eq(bad("version: v2\n"),
                     "dp.yaml:1:10: error: version: unknown value; expected one of [v1], got 'v2'");
}

/* The device plugin's config inside the GPU operator's ConfigMap (experiments/configmap.h). */
Test(timeslicing, configmap_holds_the_config)
{
    timeslicing_config c;
    int rc = timeslicing_load("experiments/sharing/configmap-time-slicing.yaml", A, &c, D);
    cr_assert_eq(rc, 0);
    cr_assert_eq(timeslicing_replicas(&c, "nvidia.com/gpu"), 4);
    cr_assert(c.time_slicing.rename_by_default);
    /* the embedded config starts on line 7 (1-based), indented by 4 */
    cr_assert_str_eq(bad("apiVersion: v1\nkind: ConfigMap\ndata:\n  slice: |-\n"
                         "    version: v1\n    sharing:\n      timeSlicing:\n"
                         "        resources:\n          - name: nvidia.com/gpu\n"
                         "            replica: 4\n"),
                     "dp.yaml:10:13: error: sharing.timeSlicing.resources[0].replica: unknown "
                     "key; expected one of [name, rename, replicas, devices], got 'replica'");
}
