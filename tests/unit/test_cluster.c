/* Unit tests for model/cluster (advertised resources per sharing mode, bookkeeping, memory
 * rules), model/job (lifecycle) and the FIFO policy's placement.
 * The GPU type here is a made-up fixture (TEST-GPU), not catalog data: these tests check the
 * device-plugin semantics, not hardware figures. Catalog-based checks are in test_run.c. */
#include <criterion/criterion.h>
#include <string.h>

#include "model/cluster/cluster.h"
#include "model/cluster/job.h"
#include "model/policy/policy.h"
#include "model/policy/view.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/diagfx.h"

static uint32_t total_cap(const cluster *c, const char *res)
{
    res_id r;
    if (!cluster_resource_find(c, res, &r)) {
        return 0;
    }
    uint32_t n = 0;
    for (node_id k = 0; k < cluster_n_nodes(c); k++) {
        n += cluster_capacity(c, k, r);
    }
    return n;
}

static cluster *make1(const cluster_gpu_cfg *gpus, uint32_t n)
{
    cluster_node_cfg node = {.name = "n0", .n_gpus = n, .gpus = gpus};
    cluster_cfg cfg = {.n_nodes = 1, .nodes = &node};
    cluster *c = NULL;
    char why[128] = "";
    cr_assert_eq(cluster_create(&cfg, &c, why, sizeof why), 0, "%s", why);
    return c;
}

Test(cluster, resource_names_follow_the_device_plugin)
{
    gpu_type g = test_gpu();
    char buf[64];
    cr_assert(cluster_resource_name_for(NULL, false, buf, sizeof buf));
    cr_assert_str_eq(buf, "nvidia.com/gpu");
    cr_assert(cluster_resource_name_for(NULL, true, buf, sizeof buf));
    cr_assert_str_eq(buf, "nvidia.com/gpu.shared");
    cr_assert(cluster_resource_name_for(&g.profiles[0], false, buf, sizeof buf));
    cr_assert_str_eq(buf, "nvidia.com/mig-1g.x");
    cr_assert(cluster_resource_name_for(&g.profiles[2], false, buf, sizeof buf));
    cr_assert_str_eq(buf, "nvidia.com/mig-1g.x.me"); /* '+' -> '.' as rm.go does */
    cr_assert_not(cluster_resource_name_for(NULL, false, buf, 5));
}

Test(cluster, whole_gpus_advertise_one_gpu_each)
{
    gpu_type g = test_gpu();
    cluster_gpu_cfg gc = {.type = &g};
    cluster_gpu_cfg gpus[3] = {gc, gc, gc};
    cluster *c = make1(gpus, 3);
    cr_assert_eq(cluster_n_devices(c), 3);
    cr_assert_eq(cluster_n_resources(c), 1);
    cr_assert_eq(total_cap(c, "nvidia.com/gpu"), 3);
    cr_assert_eq(cluster_units_total(c), 3);
    cr_assert_eq(cluster_device_get(c, 2)->sms, 100);
    cr_assert_eq(cluster_device_get(c, 2)->mem_bytes, 8000);
    cluster_destroy(c);
}

Test(cluster, mig_gpu_advertises_one_resource_per_instance_profile)
{
    gpu_type g = test_gpu();
    cluster_gpu_cfg gc = {.type = &g,
                          .mig_enabled = true,
                          .n_mig = 3,
                          .mig = {&g.profiles[0], &g.profiles[0], &g.profiles[1]},
                          .mig_start = {0, 1, 2}};
    cluster_gpu_cfg whole = {.type = &g};
    cluster_gpu_cfg gpus[2] = {gc, whole};
    cluster *c = make1(gpus, 2);
    cr_assert_eq(cluster_n_devices(c), 4);
    cr_assert_eq(total_cap(c, "nvidia.com/mig-1g.x"), 2);
    cr_assert_eq(total_cap(c, "nvidia.com/mig-2g.y"), 1);
    cr_assert_eq(total_cap(c, "nvidia.com/gpu"), 1);
    const cluster_device *d = cluster_device_get(c, 2);
    cr_assert_eq(d->gpu, 0);
    cr_assert_eq(d->index, 2);
    cr_assert_eq(d->mig_start, 2);
    cr_assert_eq(d->sms, 20);
    cr_assert_eq(d->mem_bytes, 2000);
    cr_assert_eq(cluster_gpu_get(c, 1)->first_dev, 3);
    dev_id first;
    uint32_t count;
    cluster_node_devices(c, 0, &first, &count);
    cr_assert_eq(first, 0);
    cr_assert_eq(count, 4);
    cluster_destroy(c);
}

Test(cluster, time_slicing_replicas_and_rename_by_default)
{
    gpu_type g = test_gpu();
    cluster_share_rule rule = {.resource = "nvidia.com/gpu", .replicas = 4};
    cluster_gpu_cfg renamed = {.type = &g,
                               .sharing = CLUSTER_SHARE_TIMESLICE,
                               .rename_by_default = true,
                               .n_rules = 1,
                               .rules = &rule};
    cluster_gpu_cfg plain = renamed;
    plain.rename_by_default = false;
    cluster_gpu_cfg gpus[3] = {renamed, renamed, plain};
    cluster *c = make1(gpus, 3);
    /* "8 GPUs with replicas: 10 advertise 80 nvidia.com/gpu, or 80 nvidia.com/gpu.shared" */
    cr_assert_eq(total_cap(c, "nvidia.com/gpu.shared"), 8);
    cr_assert_eq(total_cap(c, "nvidia.com/gpu"), 4);
    cr_assert_eq(cluster_units_total(c), 12);
    cr_assert_eq(cluster_device_get(c, 0)->slots, 4);
    cr_assert_eq(cluster_device_get(c, 0)->sharing, CLUSTER_SHARE_TIMESLICE);
    cluster_destroy(c);
}

Test(cluster, time_slicing_applies_only_to_named_mig_resources)
{
    gpu_type g = test_gpu();
    cluster_share_rule rule = {.resource = "nvidia.com/mig-1g.x", .replicas = 2};
    cluster_gpu_cfg gc = {.type = &g,
                          .mig_enabled = true,
                          .n_mig = 2,
                          .mig = {&g.profiles[0], &g.profiles[1]},
                          .mig_start = {0, 2},
                          .sharing = CLUSTER_SHARE_TIMESLICE,
                          .rename_by_default = true,
                          .n_rules = 1,
                          .rules = &rule};
    cluster *c = make1(&gc, 1);
    cr_assert_eq(total_cap(c, "nvidia.com/mig-1g.x.shared"), 2);
    cr_assert_eq(total_cap(c, "nvidia.com/mig-1g.x"), 0);
    cr_assert_eq(total_cap(c, "nvidia.com/mig-2g.y"), 1);
    cr_assert_eq(cluster_device_get(c, 1)->sharing, CLUSTER_SHARE_NONE);
    cluster_destroy(c);
}

Test(cluster, take_and_give_keep_counts)
{
    gpu_type g = test_gpu();
    cluster_share_rule rule = {.resource = "nvidia.com/gpu", .replicas = 3};
    cluster_gpu_cfg gc = {
        .type = &g, .sharing = CLUSTER_SHARE_TIMESLICE, .n_rules = 1, .rules = &rule};
    cluster *c = make1(&gc, 1);
    res_id r;
    cr_assert(cluster_resource_find(c, "nvidia.com/gpu", &r));
    cluster_take(c, 0, 100);
    cluster_take(c, 0, 200);
    cr_assert_eq(cluster_free(c, 0, r), 1);
    cr_assert_eq(cluster_units_used(c), 2);
    cr_assert_eq(cluster_device_get(c, 0)->mem_used_bytes, 300);
    cluster_give(c, 0, 100);
    cr_assert_eq(cluster_free(c, 0, r), 2);
    cr_assert_eq(cluster_device_get(c, 0)->mem_used_bytes, 200);
    cluster_destroy(c);
}

Test(cluster, memory_rules_per_sharing_mode)
{
    gpu_type g = test_gpu();
    cluster_share_rule rule = {.resource = "nvidia.com/gpu", .replicas = 4};
    cluster_gpu_cfg ts = {
        .type = &g, .sharing = CLUSTER_SHARE_TIMESLICE, .n_rules = 1, .rules = &rule};
    cluster_gpu_cfg mps = {.type = &g, .sharing = CLUSTER_SHARE_MPS, .n_rules = 1, .rules = &rule};
    cluster_gpu_cfg ex = {.type = &g};
    cluster_gpu_cfg gpus[3] = {ex, ts, mps};
    cluster *c = make1(gpus, 3);
    /* exclusive: the whole device memory */
    cr_assert(cluster_mem_fits(c, 0, 8000));
    cr_assert_not(cluster_mem_fits(c, 0, 8001));
    cr_assert(cluster_mem_fits(c, 0, 0)); /* unstated need never fails */
    /* time-sliced: co-runners share one capacity */
    cluster_take(c, 1, 5000);
    cr_assert(cluster_mem_fits(c, 1, 3000));
    cr_assert_not(cluster_mem_fits(c, 1, 3001));
    /* MPS: a pinned limit of memory / replicas per client */
    cr_assert(cluster_mem_fits(c, 2, 2000));
    cr_assert_not(cluster_mem_fits(c, 2, 2001));
    cluster_destroy(c);
}

Test(cluster, inconsistent_configs_are_refused_with_a_reason)
{
    gpu_type g = test_gpu();
    cluster_share_rule rule = {.resource = "nvidia.com/gpu", .replicas = 2};
    cluster_gpu_cfg gc = {.type = &g,
                          .mig_enabled = true,
                          .n_mig = 1,
                          .mig = {&g.profiles[0]},
                          .sharing = CLUSTER_SHARE_MPS,
                          .n_rules = 1,
                          .rules = &rule};
    cluster_node_cfg node = {.name = "a", .n_gpus = 1, .gpus = &gc};
    cluster_cfg cfg = {.n_nodes = 1, .nodes = &node};
    cluster *c = NULL;
    char why[128];
    cr_assert_eq(cluster_create(&cfg, &c, why, sizeof why), SIM_EINPUT);
    cr_assert_str_eq(why, "node a gpu 0: MPS sharing is not supported on MIG");
    gpu_type nomig = g;
    nomig.compute_slices = 0;
    gc.type = &nomig;
    gc.sharing = CLUSTER_SHARE_NONE;
    cr_assert_eq(cluster_create(&cfg, &c, why, sizeof why), SIM_EINPUT);
    cr_assert_str_eq(why, "node a gpu 0: TEST-GPU does not support MIG");
    cfg.n_nodes = 0;
    cr_assert_eq(cluster_create(&cfg, &c, why, sizeof why), SIM_EINPUT);
    cr_assert_str_eq(why, "the cluster has no nodes");
}

Test(job, lifecycle_and_times)
{
    job_table *t = job_table_create();
    job_spec s = {.class_name = "a", .req = {"nvidia.com/gpu", 2, 1}, .submit = 10, .work_s = 1.0};
    job_id id = job_table_add(t, &s);
    cr_assert_eq(id, 0);
    cr_assert_eq(job_table_get(t, id)->state, JOB_PENDING);
    job_submit(t, id, 10);
    cr_assert_eq(job_wait_ns(job_table_get(t, id)), -1);
    dev_id units[2] = {3, 4};
    job_start(t, id, 25, units, 2);
    cr_assert_eq(job_wait_ns(job_table_get(t, id)), 15);
    cr_assert_eq(job_table_get(t, id)->units[1], 4);
    job_finish(t, id, 125);
    const job *j = job_table_get(t, id);
    cr_assert_eq(j->state, JOB_DONE);
    cr_assert_eq(job_jct_ns(j), 115);
    cr_assert_str_eq(job_state_name(j->state), "done");
    job_id k = job_table_add(t, &s);
    job_submit(t, k, 10);
    job_fail_oom(t, k, 30, units, 2);
    cr_assert_eq(job_table_get(t, k)->state, JOB_FAILED_OOM);
    cr_assert_eq(job_table_get(t, k)->end, 30);
    job_table_destroy(t);
}

/* ---- FIFO placement through the policy interface ---- */

typedef struct fifo_fixture {
    gpu_type g;
    cluster *c;
    job_table *jobs;
    cluster_view view;
    const policy_ops *ops;
    void *state;
    decision_buf *out;
} fifo_fixture;

static void fixture_init(fifo_fixture *f, uint32_t n_nodes, uint32_t gpus_per_node)
{
    f->g = test_gpu();
    cluster_gpu_cfg gc[8];
    cluster_node_cfg nodes[4];
    static const char *names[4] = {"n0", "n1", "n2", "n3"};
    for (uint32_t i = 0; i < gpus_per_node; i++) {
        gc[i] = (cluster_gpu_cfg){.type = &f->g};
    }
    for (uint32_t n = 0; n < n_nodes; n++) {
        nodes[n] = (cluster_node_cfg){.name = names[n], .n_gpus = gpus_per_node, .gpus = gc};
    }
    cluster_cfg cfg = {.n_nodes = n_nodes, .nodes = nodes};
    char why[128];
    cr_assert_eq(cluster_create(&cfg, &f->c, why, sizeof why), 0);
    f->jobs = job_table_create();
    f->view = (cluster_view){.c = f->c, .jobs = f->jobs, .now = 0};
    f->ops = pol_find("fifo");
    cr_assert_not_null(f->ops);
    f->state = calloc(1, f->ops->state_size);
    diag *d = diag_create();
    cr_assert_eq(f->ops->init(f->state, NULL, d), 0);
    diag_destroy(d);
    f->out = decision_buf_create();
}

static void fixture_fini(fifo_fixture *f)
{
    f->ops->fini(f->state);
    free(f->state);
    decision_buf_destroy(f->out);
    job_table_destroy(f->jobs);
    cluster_destroy(f->c);
}

static job_id submit(fifo_fixture *f, uint32_t per_worker, uint32_t workers)
{
    job_spec s = {.class_name = "t", .req = {"nvidia.com/gpu", per_worker, workers}, .work_s = 1.0};
    job_id id = job_table_add(f->jobs, &s);
    job_submit(f->jobs, id, 0);
    decision_buf_clear(f->out);
    f->ops->on_arrival(f->state, &f->view, id, f->out);
    return id;
}

/* Apply decision i as the model would (no validation needed for these tests). */
static void apply_decision(fifo_fixture *f, size_t i)
{
    pol_decision d;
    decision_buf_get(f->out, i, &d);
    for (uint32_t k = 0; k < d.n_units; k++) {
        cluster_take(f->c, d.units[k], 0);
    }
    job_start(f->jobs, d.job, 0, d.units, d.n_units);
}

Test(fifo, gang_of_several_gpus_lands_on_one_node_per_worker)
{
    fifo_fixture f;
    fixture_init(&f, 2, 4);
    job_id a = submit(&f, 3, 1);
    cr_assert_eq(decision_buf_count(f.out), 1);
    pol_decision d;
    decision_buf_get(f.out, 0, &d);
    cr_assert_eq(d.job, a);
    cr_assert_eq(d.n_units, 3);
    cr_assert_eq(d.units[0], 0);
    cr_assert_eq(d.units[2], 2);
    apply_decision(&f, 0);
    /* 2 workers x 2 GPUs: node 0 has 1 free, so both workers go to node 1 */
    job_id b = submit(&f, 2, 2);
    cr_assert_eq(decision_buf_count(f.out), 1);
    decision_buf_get(f.out, 0, &d);
    cr_assert_eq(d.job, b);
    dev_id want[4] = {4, 5, 6, 7};
    cr_assert_arr_eq(d.units, want, sizeof want);
    fixture_fini(&f);
}

Test(fifo, head_of_line_blocks_later_jobs)
{
    fifo_fixture f;
    fixture_init(&f, 1, 4);
    submit(&f, 3, 1);
    apply_decision(&f, 0);
    job_id big = submit(&f, 2, 1); /* needs 2, 1 free: waits */
    cr_assert_eq(decision_buf_count(f.out), 0);
    submit(&f, 1, 1); /* would fit, but FIFO keeps order */
    cr_assert_eq(decision_buf_count(f.out), 0);
    /* the first job ends: both queued jobs start, in submission order */
    const job *j0 = job_table_get(f.jobs, 0);
    for (uint32_t k = 0; k < j0->n_units; k++) {
        cluster_give(f.c, j0->units[k], 0);
    }
    job_finish(f.jobs, 0, 5);
    decision_buf_clear(f.out);
    f.ops->on_finish(f.state, &f.view, 0, f.out);
    cr_assert_eq(decision_buf_count(f.out), 2);
    pol_decision d;
    decision_buf_get(f.out, 0, &d);
    cr_assert_eq(d.job, big);
    decision_buf_get(f.out, 1, &d);
    cr_assert_eq(d.job, big + 1);
    cr_assert_eq(d.units[0], 2); /* tentative bookkeeping: big took 0 and 1 in this call */
    fixture_fini(&f);
}

Test(policy, registry_lists_and_finds)
{
    char names[256];
    cr_assert_str_eq(pol_names(names, sizeof names),
                     "backfill, bestfit, binpack, dotprod, fgd, fifo, "
                     "gpuclustering, gpupacking, k8s, random");
    cr_assert_null(pol_find("fifoo"));
    cr_assert_str_eq(pol_at(0)->name, "backfill");
    cr_assert_str_eq(pol_at(9)->name, "random");
    cr_assert_null(pol_at(10));
    diag *d = diag_create();
    pol_param p = {.key = "depth", .value = "3", .at = {"s.yaml", 7, 5}};
    param_set ps = {.n = 1, .items = &p, .path = "policy.params"};
    cr_assert_eq(pol_find("fifo")->init(NULL, &ps, d), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0),
                     "s.yaml:7:5: error: policy.params.depth: unknown parameter; policy 'fifo' "
                     "takes no parameters, got 'depth'");
    diag_destroy(d);
}
