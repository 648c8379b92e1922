/* tests/fuzz/fuzz_run.c - libFuzzer target: arbitrary bytes loaded as a scenario *and run*, as
 * `slicesim run` does it (tools/run.h: the estimate and limits, the cluster, jobs, services,
 * faults, re-partitioning, the engine), for at most FUZZ_RUN_EVENTS engine events, with every
 * output file written to memory and dropped: nothing reaches the disk.
 *
 * References resolve against experiments/examples/ (the seeds are the shipped examples, whose
 * mig-parted and sharing files lie beside them); an input naming a device or kernel file
 * (/dev/, /proc/, /sys/) is skipped, since reading one can block. The limits are overridden to
 * small values (FUZZ_RUN_SETS) so that a run the fuzzer makes huge is refused by the estimate
 * instead of exhausting memory. A crash, a sanitizer report or a leak is a bug; bad input must
 * come back as an error.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tools/run.h"

#define FUZZ_RUN_EVENTS 20000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Does the input mention a path that reading could block on? */
static int names_special_file(const uint8_t *data, size_t size)
{
    static const char *const bad[] = {"/dev/", "/proc/", "/sys/", "/dev\\", "fd/"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n = strlen(bad[i]);
        for (size_t k = 0; k + n <= size; k++) {
            if (!memcmp(data + k, bad[i], n)) {
                return 1;
            }
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (names_special_file(data, size)) {
        return 0;
    }
    static const char *const sets[] = {"limits.jobs=20000", "limits.timeseries_rows=20000",
                                       "limits.output=64MiB", "limits.memory=512MiB"};
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {.scenario = "fuzz.yaml",
                  .text = (const char *)data,
                  .text_len = size,
                  .text_dir = "experiments/examples",
                  .sets = sets,
                  .n_sets = sizeof sets / sizeof sets[0],
                  .errors = devnull,
                  .summary = devnull,
                  .force = true,
                  .max_events = FUZZ_RUN_EVENTS,
                  .outputs_in_memory = true};
    run_scenario(&o);
    fclose(devnull);
    return 0;
}
