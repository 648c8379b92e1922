#!/usr/bin/env python3
"""calib/ddp/table.py - the validation table and the host-cost fit of calib/ddp/ddp.py's JSON.

  python3 calib/ddp/table.py calib/ddp/2026-11-28-h200x4.json.gz \
      [--csv experiments/validation/data/h200x4-ddp.csv] [--kinds solo,ddp2,ddp4]

Rows (one per model and configuration): the iteration rate of one worker (every worker of a DDP
job steps together) = 1 / the median step time of each rank's timed steps, averaged over every
rank of every job of the configuration; rel_sd = the standard deviation of those per-rank rates
over their mean (the solo row pools the solo runs at the start and at the end of the exclusive
phase, four GPUs each, so the drift is in it). gpu_util: NVML utilisation of the solo runs' GPUs
over their timed steps: the share of time a kernel ran, mean of the 50 ms polls from two of
NVML's own sample periods (nvml_period, 0.2 s here) after the first timed step to the last, as
a poll reports the last completed period (the earlier polls report the warm-up or the previous
configuration). Not the CUDA events: an event pair brackets the stream's span, which for a
host-bound loop is the host's launch time (events/step 0.996-0.998 for every model but the
MLP, whose GPU runs 0.95 of the step), calib/ddp/NOTES.md. The solo GPU time split, from the CUDA
events of the solo runs (medians): backward_frac = backward / (forward + backward),
optimizer_frac = optimiser step / (forward + backward + step). grad_tensors / buffer_tensors:
parameter and buffer tensors of the model (DDP copies each gradient tensor into its bucket and
back, and broadcasts the buffers before every forward); buckets: DDP's own count
(num_buckets_reduced, logging data); step_cv: the solo runs' step-to-step spread (--step-cv
below; the gang waits at every step for its slowest worker, model/physics/ddp.h); host_s: the
solo runs' host clock per step, from the step's start to the return of the optimiser call (median
of each process's timed steps, mean over the solo processes): the host's own work, without the
wait for the GPU at the step's end (the synchronisation), which is what the row's step adds;
ddp2_host_sd: the relative sd between the ranks' host times (the same clock) within one step of
the 2-worker runs, root-mean-square over their steps and their two jobs (a table that fits the
ddp2 rows takes the gang's spread from it, model/physics/ddp.h's straggler term).

Printed, not written: the least-squares fit of DDP's host time per step against solo,
  dH = c_launch * (2 grad_tensors + buffer_tensors) + c_coll * (buckets + broadcasts)
on the bucket-size sweep rows (ddp2-b5, ddp2-b100 of ResNet-152, GPT-2, ViT-B/16: 6 rows that
are not in the validation table), dH = the host time from the step's start to the end of the
optimiser call, DDP run minus solo run; broadcasts = 2 when the model has buffers (float and
int64, one coalesced broadcast per dtype), else 0. model/physics/comm.yaml's ddp.host_launch_s and
ddp.host_collective_s are these two numbers.

  python3 calib/ddp/table.py --x2 FILE.json.gz [FILE.json.gz ...] [--csv CSV] [--rounds-csv CSV2]
writes the table of ddp.py --phases x2 recordings (their rounds pooled; experiments/validation/
data/h200x2-ddp.csv): each row the mean over the rounds of the round's rate, rel_sd its standard
error; CSV2 every round's rate (calib/ddp/2026-11-29-h200x2-rounds.csv).

  python3 calib/ddp/table.py --x4 FILE.json.gz [FILE.json.gz ...] [--csv CSV] [--rounds-csv CSV2]
the same for ddp.py --phases x4 recordings (the scaling rows solo, ddp2, ddp4 of 4 GPUs in rotated
rounds; experiments/validation/data/h200x4-ddp-scale-c.csv): the solo row pools the four solo
processes of every round, ddp2 both jobs of a round.

  python3 calib/ddp/table.py --spread FILE.json.gz [FILE.json.gz ...]
prints the spread of one worker's step between processes instead (model/physics/comm.yaml
ddp.host_spread): per set of solo processes that ran at the same time (solo, solo-end of each
file), each process's median step over the set's mean; the relative sd pooled over the sets of
the host-bound models (all but widemlp, whose host waits for its GPU), n - 1 degrees of freedom
per set.

  python3 calib/ddp/table.py --step-max FILE.json.gz
prints, per model, what a gang of 2 and of 4 would wait for if each step waited for the slowest
of independent workers: the mean over steps of the maximum of n concurrent solo processes'
step times (every n of the four solo processes of a set, step by step), over the mean step, and
their ratio (4 over 2), beside each process's step-to-step relative sd.

  python3 calib/ddp/table.py --ring-fill FILE.json.gz
prints the fit of NCCL's first-loop idle time on the framework all-reduce sweep of 4 GPUs
(model/physics/comm.yaml ring_pipeline.first_loop_idle): the sweep's rows from 16 MiB (Simple,
past the framework's per-call floor) against t = L + (2(n-1)/n S + rho C c) / B, c = min(2 MiB,
S / (C n)) the chunk of the first loop of each of C = 24 channels (NCCL's log of the run), B =
18 NVLinks x 20.6 GB/s (NCCL src/graph/topo.h SM90_NVLINK_BW), L free (the framework's cost per
call); least squares in relative error, L solved for each rho, rho by golden section. The
2-GPU sweep is printed beside it with the same rho (not fitted).

  python3 calib/ddp/table.py --calib-allreduce N FILE.json.gz OUT.json
writes the framework all-reduce sweep of N GPUs (rank 0's CUDA-event times, 7 repetitions a
size) as a calibration JSON (schema slicesim-calib, its `allreduce` section, calib/README.md),
for `slicesim fit --allreduce-sweep`: only the rows from 16 MiB, where the GPU's time is past
the framework's per-call floor (the rows below are 42-65 us whatever their size: the host's
launch, not NCCL's), all run with NCCL's Simple protocol (`protocol: simple`; NCCL's tuner
leaves LL at 1-2 MiB on these GPUs, calib/results' 2-GPU sweep).

  python3 calib/ddp/table.py --step-cv FILE.json.gz [--host-spread S]
prints each model's step-to-step spread (the profile's step_cv, the CSV's step_cv column): the
relative sd of one solo process's step times about its own mean, root-mean-square over the solo
processes of the file (solo and solo-end, four each); and, by hand, what the straggler term of
model/physics/ddp.h makes of the 2 -> 4 GPU rows of the file with it: a gang of n waits for
the slowest of n host times, each normal with relative sd sqrt(S^2 + step_cv^2) (S the spread
between processes, model/physics/comm.yaml ddp.host_spread, 0.066), so a host-bound ddp4 row is
its ddp2 row times (1 + s e_2) / (1 + s e_4); printed beside S alone (today's term) and step_cv
alone, with each variant's error against the measured ddp4 row and their mean.
"""
import argparse
import gzip
import json
import statistics as st
import sys

KINDS = ["solo", "ddp2", "ddp4", "ts2", "ts3", "mps1", "mps2", "mps3"]
# buffer tensors per model (running_mean, running_var, num_batches_tracked of each BatchNorm:
# ResNet-152 155 BN layers, MobileNetV3-small 34; ViT-B/16, GPT-2 (transformers 5.17) and the
# MLP register none that DDP broadcasts: the NCCL log of the run shows broadcasts per step only
# for the CNNs)
BUFFERS = {"resnet152": 465, "mobilenet": 102, "gpt2": 0, "vit": 0, "widemlp": 0}
WORKERS = {"solo": 1, "ddp2": 2, "ddp4": 4, "ts2": 2, "ts3": 2, "mps1": 2, "mps2": 2, "mps3": 2}


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as fh:
        return json.load(fh)


def nvml_period(doc):
    """NVML's own sample period (s): the median time between changes of a GPU's utilisation
    in the polled rows (nvmlDeviceGetUtilizationRates reports the share of the last completed
    period, 1/6 s to 1 s depending on the product; 0.200 s on the H200s of 2026-11-28; 0 for a
    --fake recording, which has none)."""
    if not doc["nvml"]["rows"]:
        return 0.0
    gaps = []
    for g in range((len(doc["nvml"]["rows"][0]) - 1) // 4):
        last, t_last = None, None
        for r in doc["nvml"]["rows"]:
            u = r[1 + 4 * g]
            if last is not None and u != last:
                if t_last is not None and r[0] - t_last < 1.0:
                    gaps.append(r[0] - t_last)
                t_last = r[0]
            last = u
    return st.median(gaps)


def nvml_util(doc, gpu, t0, t1, period=0.0):
    """Mean NVML utilisation of the samples polled in [t0 + 2 period, t1]: a sample polled at t
    reports a period that ended in (t - period, t], so only from t0 + 2 periods on does it
    cover timed steps alone (earlier samples report the warm-up, the barrier or the previous
    configuration: a short timed window, the wide MLP's 0.61 s, read 0.755 for 0.953)."""
    v = [r[1 + 4 * gpu] for r in doc["nvml"]["rows"] if t0 + 2 * period <= r[0] <= t1 and
         r[1 + 4 * gpu] is not None]
    return st.mean(v) / 100.0 if v else None


def per_rank(doc):
    """{(model, config name): [record, ...]} of the training records."""
    out = {}
    for r in doc["records"]:
        c = r.get("config")
        if c and "host" in r:
            out.setdefault((c["model"], c["name"]), []).append(r)
    return out


def step_s(r):
    return st.median([h[4] - h[0] for h in r["host"]])


def host_s(r):
    return st.median([h[3] - h[0] for h in r["host"]])


def rank_host_sd(rs):
    """The relative sd between the ranks' host times (step start to the optimiser call's
    return) within one step, root-mean-square over the steps of every job of rs (0 without;
    a job of phase x2 is one per round and file)."""
    jobs = {}
    for r in rs:
        jobs.setdefault((r.get("_src"), r["config"].get("round"), str(r["job"])), []).append(r)
    acc = []
    for js in jobs.values():
        if len(js) < 2:
            continue
        for i in range(min(len(r["host"]) for r in js)):
            h = [r["host"][i][3] - r["host"][i][0] for r in js]
            acc.append(st.variance(h) / st.mean(h) ** 2)
    return st.mean(acc) ** 0.5 if acc else 0.0


HOST_BOUND = ("resnet152", "mobilenet", "gpt2", "vit")


def spread(paths):
    ss, dof = 0.0, 0
    for path in paths:
        recs = per_rank(load(path))
        for (m, name), rs in sorted(recs.items()):
            if name not in ("solo", "solo-end") or len(rs) < 2:
                continue
            v = [step_s(r) for r in rs]
            mu = st.mean(v)
            rel = st.stdev(v) / mu
            print(f"{path.split('/')[-1]} {m} {name}: {len(v)} processes, steps "
                  + " ".join(f"{x * 1e3:.1f}" for x in v) + f" ms, relative sd {rel:.3f}"
                  + ("" if m in HOST_BOUND else " (GPU-bound: not pooled)"))
            if m in HOST_BOUND:
                ss += sum((x / mu - 1) ** 2 for x in v)
                dof += len(v) - 1
    if dof:
        print(f"pooled relative sd of the host-bound models: {(ss / dof) ** 0.5:.4f} "
              f"({dof} degrees of freedom)")


RING_CHANNELS = 24            # NCCL INFO '24 coll channels' of the run's 2- and 4-GPU communicators
RING_CHUNK = 2 * 1024 * 1024  # NCCL ALLREDUCE_CHUNKSTEPS (4) x DEFAULT_BUFFSIZE (4 MiB) / NCCL_STEPS (8)
RING_BUSBW = 18 * 20.6e9      # H200: 18 NVLinks x NCCL's SM90_NVLINK_BW (src/graph/topo.h)


def framework_sweeps(doc):
    """{ranks: [(bytes, median s)]} of the framework all-reduce sweeps (rank 0's timing)."""
    out = {}
    for r in doc["records"]:
        c = r.get("config", {})
        if c.get("kind") == "allreduce" and r.get("rank") == 0:
            out[len(r["job"])] = [(s["bytes"], st.median(s["ms"]) * 1e-3) for s in r["sweep"]]
    return out


def calib_allreduce(n, path, out):
    doc = load(path)
    env = doc["env"]
    smi = env["nvidia_smi"].splitlines()[1].split(", ")
    runs = []
    for r in doc["records"]:
        c = r.get("config", {})
        if c.get("kind") != "allreduce" or r.get("rank") != 0 or len(r["job"]) != n:
            continue
        for s in r["sweep"]:
            if s["bytes"] < 16 << 20:
                continue
            runs.append({"bytes": s["bytes"], "inner": s["iters"], "correct": s["correct"],
                         "reps": len(s["ms"]), "ms": s["ms"], "ms_median": st.median(s["ms"]),
                         "ms_min": min(s["ms"]), "ms_max": max(s["ms"])})
    if not runs:
        sys.exit(f"{path}: no all-reduce sweep of {n} GPUs")
    v = env["versions"]
    calib = {
        "schema": "slicesim-calib", "schema_version": 1, "date_utc": env["date_utc"],
        "source": f"calib/ddp/{path.split('/')[-1]} (calib/ddp/ddp.py allreduce-{n}), written "
                  f"by calib/ddp/table.py --calib-allreduce {n}",
        "gpu_before": {"name": smi[1], "uuid": smi[2], "driver_version": smi[3]},
        "allreduce": {"program": "torch.distributed.all_reduce (calib/ddp/ddp.py), CUDA "
                                 f"events over back-to-back calls; torch {v['torch']}, NCCL "
                                 f"{v['nccl']}, NCCL_NVLS_ENABLE=0",
                      "gpus": n, "protocol": "simple", "runs": runs},
    }
    with open(out, "w") as fh:
        json.dump(calib, fh, indent=1)
        fh.write("\n")


def ring_fill_fit(rows, n, rho):
    """(L, relative residuals) of t = L + (2(n-1)/n S + rho C c) / B with L least squares."""
    a = [(2 * (n - 1) / n * s + rho * RING_CHANNELS * min(RING_CHUNK, s / (RING_CHANNELS * n)))
         / RING_BUSBW for s, _ in rows]
    lat = (sum((1 - ai / t) / t for ai, (_, t) in zip(a, rows))
           / sum(1 / (t * t) for _, t in rows))
    return lat, [(lat + ai) / t - 1 for ai, (_, t) in zip(a, rows)]


def ring_fill(path):
    sweeps = framework_sweeps(load(path))
    rows4 = [(s, t) for s, t in sweeps[4] if s >= 16 << 20]

    def cost(rho):
        return sum(e * e for e in ring_fill_fit(rows4, 4, rho)[1])
    lo, hi = 0.0, 3.0
    g = (5 ** 0.5 - 1) / 2
    for _ in range(80):
        m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if cost(m1) < cost(m2):
            hi = m2
        else:
            lo = m1
    rho = (lo + hi) / 2
    print(f"first_loop_idle rho = {rho:.3f} chunk-times (4 GPUs, {len(rows4)} rows from 16 MiB)")
    for n in (4, 2):
        rows = [(s, t) for s, t in sweeps[n] if s >= 16 << 20]
        lat, res = ring_fill_fit(rows, n, rho)
        print(f"  {n} GPUs{' (not fitted)' if n == 2 else ''}: L = {lat * 1e6:.1f} us; "
              + " ".join(f"{s >> 20}MiB {e * 100:+.1f}%" for (s, _), e in zip(rows, res)))


def step_max(path):
    import itertools
    doc = load(path)
    sets = {}
    for r in doc["records"]:
        c = r.get("config", {})
        if c.get("name") in ("solo", "solo-end") and "host" in r:
            sets.setdefault((r["model"], c["name"]), []).append([h[4] - h[0] for h in r["host"]])
    for (m, name), runs in sorted(sets.items()):
        k = min(len(x) for x in runs)
        runs = [x[:k] for x in runs]
        mean = st.mean([t for x in runs for t in x])
        sd = st.mean([st.stdev(x) / st.mean(x) for x in runs])
        e = {}
        for n in (2, 4):
            if len(runs) >= n:
                e[n] = st.mean([max(runs[j][i] for j in comb)
                                for comb in itertools.combinations(range(len(runs)), n)
                                for i in range(k)]) / mean
        ratio = f"{e[4] / e[2]:.3f}" if 4 in e and 2 in e else "-"
        print(f"{m:10s} {name:8s} {len(runs)} processes x {k} steps, mean {mean * 1e3:.1f} ms, "
              f"step sd {sd * 100:.1f} %: max of 2 x{e.get(2, 0):.3f}, of 4 x{e.get(4, 0):.3f}, "
              f"4 over 2 x{ratio}")


def expected_max(n):
    """E[max of n standard normals] by the trapezoidal rule (model/physics/ddp.c's integral)."""
    import math
    if n < 2:
        return 0.0
    h, lim = 0.125, 9.0
    tot = 0.0
    for i in range(1, int(2 * lim / h)):
        x = -lim + i * h
        phi = math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        cdf = 0.5 * (1 + math.erf(x / math.sqrt(2)))
        tot += x * n * phi * cdf ** (n - 1)
    return tot * h


def step_cvs(doc):
    """{model: within-process relative sd of the solo step}, RMS over the solo processes."""
    acc = {}
    for r in doc["records"]:
        c = r.get("config", {})
        if c.get("name") in ("solo", "solo-end") and "host" in r:
            v = [h[4] - h[0] for h in r["host"]]
            acc.setdefault(r["model"], []).append(st.pvariance(v) / st.mean(v) ** 2)
    return {m: st.mean(x) ** 0.5 for m, x in acc.items()}


def step_cv(path, spread):
    doc = load(path)
    recs = per_rank(doc)
    cvs = step_cvs(doc)
    e2, e4 = expected_max(2), expected_max(4)
    variants = [("S alone (today)", lambda cv: spread), ("step_cv alone", lambda cv: cv),
                ("sqrt(S^2 + step_cv^2)", lambda cv: (spread ** 2 + cv ** 2) ** 0.5)]
    errs = {v[0]: [] for v in variants}
    for m in doc["models"]:
        if m not in cvs or not recs.get((m, "ddp2")) or not recs.get((m, "ddp4")):
            continue
        r2 = st.mean([1 / step_s(r) for r in recs[(m, "ddp2")]])
        r4 = st.mean([1 / step_s(r) for r in recs[(m, "ddp4")]])
        line = f"{m:10s} step_cv {cvs[m]:.4f}; measured ddp4/ddp2 step x{r2 / r4:.3f};"
        for name, f in variants:
            s = f(cvs[m])
            ratio = (1 + s * e4) / (1 + s * e2)
            err = r2 / ratio / r4 - 1
            errs[name].append(abs(err))
            line += f" {name}: s {s:.3f} x{ratio:.3f} ddp4 {err * 100:+.1f} %;"
        print(line)
    for name, e in errs.items():
        if e:
            print(f"MAPE of the ddp4 rows, {name}: {st.mean(e) * 100:.1f} % (host-bound at 2 and 4 "
                  "workers assumed)")


X2_KINDS = ["solo", "ddp2", "ts2", "ts3", "mps1", "mps2", "mps3"]
X4_KINDS = ["solo", "ddp2", "ddp4"]


def x2_table(paths, csv, rounds_csv=None, phase="x2"):
    """The table of ddp.py --phases x2 recordings (one or more files, their rounds pooled): per
    model and configuration, each round's rate (the mean over its ranks of 1 / the median step),
    the row = the mean over the rounds, rel_sd = its standard error over the mean (the rounds'
    sd / sqrt(rounds)). The other columns as the 4-GPU table's, from every solo process of every
    round (NVML of its own file). rounds_csv: every round's rate of every row, with the rounds'
    sd over the mean (round_sd) and their count (the validation CSV has no room for them)."""
    docs = [load(p) for p in paths]
    recs, util_of = {}, {}
    for i, doc in enumerate(docs):
        if phase not in doc.get("phases", {}):
            raise SystemExit(f"{paths[i]}: not a ddp.py --phases {phase} recording")
        period = nvml_period(doc)
        for r in doc["records"]:
            c = r.get("config")
            if c and "host" in r and "error" not in r:
                r["_src"] = i
                recs.setdefault((c["model"], c["name"]), []).append(r)
                if c["name"] == "solo":
                    util_of[id(r)] = nvml_util(doc, r["gpu"], r["t_start"], r["t_end"], period)
    models = list(dict.fromkeys(m for d in docs for m in d["models"]))
    env = docs[0]["env"]
    v = env["versions"]
    def smi(d, i):   # a field of nvidia-smi's first GPU line (driver 3, uuid 2); '?' without
        rows = d["env"]["nvidia_smi"].splitlines()
        return rows[1].split(", ")[i] if len(rows) > 1 else "?"
    srcs = "; ".join(f"{p.split('/')[-1]} {d['env']['date_utc']} driver {smi(d, 3)} {smi(d, 2)}"
                     for p, d in zip(paths, docs))
    rounds_name = (rounds_csv or "").split("/")[-1] or "calib/ddp/table.py --rounds-csv"
    kinds_text = ("solo (one process, no DDP, on GPUs 0 and 1 at once), ddp2 (one 2-worker job), "
                  "tsK / mpsK (K two-worker DDP jobs on GPUs 0 and 1, time-sliced / as MPS "
                  "clients)") if phase == "x2" else (
                  "solo (one process, no DDP, on each of GPUs 0-3 at once), ddp2 (two 2-worker "
                  "jobs at once, GPUs 0-1 and 2-3), ddp4 (one 4-worker job)")
    lines = [
        f"# Real PyTorch DistributedDataParallel on {phase[1]}x NVIDIA H200 (NVLink NV18 between "
        f"{'them' if phase == 'x2' else 'every pair'}), measured by this project with "
        f"calib/ddp/ddp.py --phases {phase} (rotated rounds, every process pinned to its own "
        "CPUs) and averaged by calib/ddp/table.py from",
        f"#   {srcs}; torch {v.get('torch')} CUDA {v.get('cuda')} NCCL {v.get('nccl')} "
        "(NCCL_NVLS_ENABLE=0) "
        f"torchvision {v.get('torchvision')} transformers {v.get('transformers')}",
        "# rate_per_s: iterations per second of one worker, the mean over rounds of each round's "
        "rate (1 / the median timed step of each rank, mean over the configuration's ranks); "
        "rel_sd: that mean's standard error over it (the rounds' sd / sqrt(rounds)); round_sd: "
        f"the rounds' sd over the mean; rounds: their count; kinds: {kinds_text}; step_cv, host_s, "
        "ddp2_host_sd and the other columns as in h200x4-ddp.csv, from every round; every "
        f"round's rate: calib/ddp/{rounds_name}",
        "figure,model,kind,workers,rate_per_s,rel_sd,gpu_util,grad_bytes,grad_tensors,"
        "buffer_tensors,buckets,backward_frac,optimizer_frac,step_cv,host_s,ddp2_host_sd",
    ]
    per_round = [f"# calib/ddp/table.py --{phase} " + " ".join(p.split("/")[-1] for p in paths)
                 + ": every round's rate (it/s of one worker) of each row of "
                 + ((csv or "").split("/")[-1] or "its table") + "; "
                 "round = file index x 100 + the round's index in its file",
                 "figure,mean_per_s,round_sd,rounds,round,rate_per_s"]
    for m in models:
        solos = recs.get((m, "solo"), [])
        if not solos:
            continue
        g = [st.median(x) for x in zip(*[row for r in solos for row in r["gpu_ms"]])]
        us = [util_of[id(r)] for r in solos if util_of.get(id(r)) is not None]
        cv = st.mean([st.pvariance([h[4] - h[0] for h in r["host"]])
                      / st.mean([h[4] - h[0] for h in r["host"]]) ** 2 for r in solos]) ** 0.5
        r0 = solos[0]
        util = st.mean(us) if us else 0.5
        bf = g[1] / (g[0] + g[1]) if g[0] + g[1] > 0 else 0.5
        of = g[2] / sum(g) if sum(g) > 0 else 0.1
        host = st.mean([host_s(r) for r in solos])
        rank_sd = rank_host_sd(recs.get((m, "ddp2"), []))
        src = recs.get((m, "ddp2"), [])
        b = (src[0].get("ddp_buckets") or {}).get("num_buckets_reduced") if src else None
        for kind in (X2_KINDS if phase == "x2" else X4_KINDS):
            rs = recs.get((m, kind), [])
            if not rs:
                continue
            rounds = {}
            for r in rs:
                rounds.setdefault((r["_src"], r["config"]["round"]), []).append(1.0 / step_s(r))
            per = [st.mean(x) for _, x in sorted(rounds.items())]
            mean = st.mean(per)
            rsd = st.stdev(per) / mean if len(per) > 1 else 0.0
            se = rsd / len(per) ** 0.5
            lines.append(
                f"{m}/{kind},{m},{kind},{WORKERS[kind]},{mean:.5g},{se:.3f},{util:.3f},"
                f"{r0['grad_bytes']},{r0['param_tensors']},{BUFFERS[m]},"
                f"{'' if b is None else b},{bf:.4f},{of:.4f},{cv:.4f},{host:.5g},{rank_sd:.4f}")
            for (fi, rr), x in sorted(rounds.items()):
                per_round.append(f"{m}/{kind},{mean:.5g},{rsd:.3f},{len(per)},{fi * 100 + rr},"
                                 f"{st.mean(x):.5g}")
            print(f"{m:10s} {kind:5s} {len(per)} rounds: " + " ".join(f"{x:.2f}" for x in per)
                  + f" it/s; mean {mean:.3f}, round sd {rsd * 100:.1f} %, se {se * 100:.1f} %",
                  file=sys.stderr)
    if csv:
        with open(csv, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    else:
        print("\n".join(lines))
    if rounds_csv:
        with open(rounds_csv, "w") as fh:
            fh.write("\n".join(per_round) + "\n")


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("--x2", "--x4"):
        phase = sys.argv[1][2:]
        ap = argparse.ArgumentParser()
        ap.add_argument("--" + phase, nargs="+", required=True, dest="files")
        ap.add_argument("--csv")
        ap.add_argument("--rounds-csv")
        a = ap.parse_args()
        x2_table(a.files, a.csv, a.rounds_csv, phase)
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--spread":
        spread(sys.argv[2:])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--step-max":
        step_max(sys.argv[2])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--step-cv":
        spread = float(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--host-spread" \
            else 0.066
        step_cv(sys.argv[2], spread)
        return
    if len(sys.argv) > 4 and sys.argv[1] == "--calib-allreduce":
        calib_allreduce(int(sys.argv[2]), sys.argv[3], sys.argv[4])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--ring-fill":
        ring_fill(sys.argv[2])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--csv")
    ap.add_argument("--kinds", help="only these kinds, comma-separated (default: all)")
    a = ap.parse_args()
    doc = load(a.json)
    recs = per_rank(doc)
    models = list(doc["models"])
    env = doc["env"]
    v = env["versions"]
    lines = [
        "# Real PyTorch DistributedDataParallel on 4x NVIDIA H200 (NVLink NV18 between every "
        "pair), measured by this project with calib/ddp/ddp.py and averaged by "
        "calib/ddp/table.py from",
        f"#   {a.json.split('/')[-1]}: {env['date_utc']} driver "
        f"{env['nvidia_smi'].splitlines()[1].split(', ')[3]} torch {v['torch']} CUDA {v['cuda']} "
        f"NCCL {v['nccl']} (NCCL_NVLS_ENABLE=0) torchvision {v['torchvision']} transformers "
        f"{v['transformers']}",
        "# rate_per_s: iterations per second of one worker (median step of each rank, mean over "
        "ranks); kinds: solo (one process, no DDP), ddpN (one job of N workers on GPUs 0..N-1; "
        "ddp2 also on GPUs 2,3 at the same time), tsK / mpsK (K two-worker DDP jobs on GPUs 0 "
        "and 1, time-sliced / as MPS clients); step_cv: the relative sd of a solo process's step "
        "time from step to step, RMS over the solo processes (table.py --step-cv); host_s: the solo "
        "processes' host clock per step, step start to the optimiser call's return (median per "
        "process, mean over them); ddp2_host_sd: the relative sd between the ranks' host times "
        "within a step of the ddp2 runs (RMS over steps and jobs)",
        "figure,model,kind,workers,rate_per_s,rel_sd,gpu_util,grad_bytes,grad_tensors,"
        "buffer_tensors,buckets,backward_frac,optimizer_frac,step_cv,host_s,ddp2_host_sd",
    ]
    cvs = step_cvs(doc)
    period = nvml_period(doc)
    print(f"NVML sample period {period:.3f} s: utilisation from {2 * period:.3f} s after each "
          "solo run's first timed step", file=sys.stderr)
    solo_info = {}
    for m in models:
        solos = recs.get((m, "solo"), []) + recs.get((m, "solo-end"), [])
        if not solos:
            continue
        g = [st.median(x) for x in zip(*[row for r in solos for row in r["gpu_ms"]])]
        util = st.mean([u for u in (nvml_util(doc, r["gpu"], r["t_start"], r["t_end"], period)
                                    for r in solos) if u is not None])
        r0 = solos[0]
        solo_info[m] = {"util": util, "bf": g[1] / (g[0] + g[1]), "of": g[2] / sum(g),
                        "T": r0["param_tensors"], "G": r0["grad_bytes"],
                        "host": st.mean([host_s(r) for r in solos]),
                        "rank_sd": rank_host_sd(recs.get((m, "ddp2"), [])),
                        "step": st.mean([step_s(r) for r in solos])}
        for kind in (a.kinds.split(",") if a.kinds else KINDS):
            rs = solos if kind == "solo" else recs.get((m, kind), [])
            if not rs:
                continue
            rates = [1.0 / step_s(r) for r in rs]
            mean = st.mean(rates)
            sd = st.pstdev(rates) / mean if len(rates) > 1 else 0.0
            # DDP's bucket count (its logging data; the solo row takes the 2-worker job's)
            src = recs.get((m, "ddp2"), []) if kind == "solo" else rs
            b = (src[0].get("ddp_buckets") or {}).get("num_buckets_reduced") if src else None
            buckets = "" if b is None else str(b)
            si = solo_info[m]
            lines.append(
                f"{m}/{kind},{m},{kind},{WORKERS[kind]},{mean:.5g},{sd:.3f},"
                f"{si['util']:.3f}" + f",{si['G']},{si['T']},{BUFFERS[m]},{buckets},"
                f"{si['bf']:.4f},{si['of']:.4f},{cvs[m]:.4f},{si['host']:.5g},{si['rank_sd']:.4f}")
    if a.csv:
        with open(a.csv, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    else:
        print("\n".join(lines))
    # host-cost fit on the bucket-size sweep rows
    X, y, lab = [], [], []
    for m in models:
        for name in ("ddp2-b5", "ddp2-b100"):
            rs = recs.get((m, name))
            if not rs or m not in solo_info:
                continue
            k = (rs[0].get("ddp_buckets") or {}).get("num_buckets_reduced")
            if k is None:
                continue
            si = solo_info[m]
            dh = st.mean([host_s(r) for r in rs]) - si["host"]
            X.append((2 * si["T"] + BUFFERS[m], k + (2 if BUFFERS[m] else 0)))
            y.append(dh)
            lab.append(f"{m}/{name}")
    if len(y) >= 2:
        s11 = sum(x[0] * x[0] for x in X)
        s12 = sum(x[0] * x[1] for x in X)
        s22 = sum(x[1] * x[1] for x in X)
        b1 = sum(x[0] * v for x, v in zip(X, y))
        b2 = sum(x[1] * v for x, v in zip(X, y))
        det = s11 * s22 - s12 * s12
        c1 = (b1 * s22 - b2 * s12) / det
        c2 = (s11 * b2 - s12 * b1) / det
        print(f"host fit on {len(y)} rows: c_launch = {c1 * 1e6:.2f} us, "
              f"c_coll = {c2 * 1e6:.1f} us", file=sys.stderr)
        for lb, x, v in zip(lab, X, y):
            print(f"  {lb:22} launches {x[0]:4d} collectives {x[1]:3d} dH {v * 1e3:6.2f} ms "
                  f"fit {(c1 * x[0] + c2 * x[1]) * 1e3:6.2f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
