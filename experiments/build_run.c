/* experiments/build_run.c - the run's built state: its profiles and the checks on the empty
 * cluster (see build_run.h). */
#include "experiments/build_run.h"

#include <inttypes.h>
#include <stdio.h>

#include "experiments/build.h"
#include "experiments/build_service.h"
#include "model/cluster/job.h"

/* The workload profile `name`, loaded once per run (experiments/build.h build_load_profile). */
const jobrate_profile *build_run_profile(built_run *b, const char *name, src_loc at,
                                         const char *path)
{
    return build_load_profile(b->spec, &b->phys, b->profiles, &b->n_profiles, name, at, path,
                              b->a, b->d);
}

/* Every class's request must be satisfiable on the empty cluster: under FIFO one job that can
 * never start would block every later job forever. Also the services' batch times (for the
 * estimate), while the cluster exists. */
void build_run_check_requests(built_run *b, const synth_class *cls)
{
    char why[256];
    cluster *c = NULL;
    if (cluster_create(&b->cc, &c, why, sizeof why) != 0) {
        diag_error(b->d, b->spec->cluster.at, "cluster", "%s", why);
        return;
    }
    b->svc_batch_s = arena_calloc(b->a, b->spec->n_services + 1, sizeof *b->svc_batch_s);
    for (size_t i = 0; i < b->spec->n_services; i++) {
        b->svc_batch_s[i] = build_service_batch_s(b, c, i);
    }
    for (size_t i = 0; i < b->spec->workload.n_jobs; i++) {
        const scenario_job_class *jc = &b->spec->workload.jobs[i];
        char path[128];
        snprintf(path, sizeof path, "workload.jobs[%zu].request", i);
        /* where its node_selector and tolerations admit it (its `nodes` groups were checked
         * at load) */
        job_pod pod = {.place = cls[i].place};
        if (!job_any_slice(&(job_spec){.req = cls[i].req}) &&
            !build_request_fits(c, &cls[i].req, &pod)) {
            char have[512];
            diag_error(b->d, jc->request.at, path,
                       "no node%s can hold it; expected at most the units one node advertises "
                       "(%s), got %" PRIu32 " x '%s'",
                       cls[i].place ? " its node_selector and tolerations admit" : "",
                       build_advertised(c, have, sizeof have), cls[i].req.per_worker,
                       jc->request.resource);
        }
    }
    cluster_destroy(c);
}
