#!/usr/bin/env python3
"""calib/coloc/table.py - turn the raw co-location JSON (calib/coloc/coloc.py) into the tables that
`slicesim validate` reads: experiments/validation/data/h100-coloc.csv (run3's machine) and
h100-coloc-run4.csv (run4's machine). One table per machine: the files are grouped by the GPU
UUID in their env, and a table averages only the runs of its own machine, so that every row a
table predicts is predicted from solo rows measured on the same GPU.

One row per figure: throughput of one process (iterations/s) of WORKLOAD in configuration KIND:
  solo                      one process alone without MPS: every exclusive solo measurement of
                            the runs (at the start of its phase and again at the end of the run;
                            run4: the cap blocks' exclusive solos), with its NVML GPU utilisation
  ts2 ts4 ts8               k identical processes time-sliced (mean over the k processes)
  solo-mps                  one uncapped MPS client alone: every solo measurement with sharing
                            mps (run3c/d: the one opening the MPS phase and, where taken, the
                            one at the end of the run; run4: the two inside each cap block)
  mps2 mps3 mps4 mps6 mps8  k identical MPS clients
  cap5 .. cap75             one MPS client alone with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE
  pair-ts pair-mps          WORKLOAD beside WITH, time-sliced / under MPS
Columns beside the rate:
  n          measurements (runs) that went into the row
  rel_sd     measurement noise: sample standard deviation of every sub-window rate of the row
             (schema 2: REPEATS contiguous sub-windows per run; solo rows: across all their
             runs, so drift between the start and the end of a run is in it) over their mean
  busy_frac  solo rows: fraction of the iteration in which some CUDA kernel of the process runs
             (torch.profiler kernel census: union of kernel intervals per iteration x solo rate)
  kernels    solo rows: CUDA kernels per iteration (same census)
  sm_active  solo rows: NVML GPM SM activity (fraction of SM-time with a warp resident)
  dram_util  solo rows: NVML GPM DRAM bandwidth utilisation (fraction of the peak)
             (gpu_util, sm_active, dram_util of a rotated record are sampled over all its rounds
             while its rate is the median round's: they are read per iteration, scaled by the
             median round's rate over the rounds' mean rate, see per_iteration_scale)
  serial_host_s  solo rows: CPU seconds per iteration before the first kernel launch, from the
             workload's definition (coloc.py SERIAL_HOST_S); empty: the loop launches at once
  mps_sm_growth  solo rows: a of 1 + a ln k, the growth of the SM-time one iteration takes beside
             k - 1 identical MPS peers, from the workload's 2-client MPS record against its lone
             MPS client (GPM SM activity x SMs / the clients' rate, see sm_growth); the table's
             own machine's files first, as the census; empty: no file has both records
  gpu_tail_frac  solo rows: the GPU time still to run when the host has issued the iteration's
             last launch (the wait in the closing synchronisation, coloc.py tail_census, a
             census-only run: --phases census) over the census' kernel-busy time per iteration;
             empty: not measured
A workload's census figures come from the first file that has each, the table's own machine's
files first, then the others in the order given: a census-only run added after the others adds
its tail and leaves the earlier census' busy_frac and kernels as they were; a machine without a
census of its own (run4's) takes another machine's, and the table's header names the file and
machine each census column comes from (busy_frac is the census' kernel time per iteration times
the table's own solo rate).
A row's kind says what was measured, in every file alike: a solo record (kind solo, solo_after or
solo_end) measured under MPS (sharing mps: one uncapped client alone) is a solo-mps row, never
part of the solo row, which holds exclusive solos only (a user brings one exclusive solo run;
validate fits the solo rows and predicts the solo-mps ones).
Schema-1 files (one window per run, no census) still load: their rows have no rel_sd. Cap-block
files (coloc.py --phases capblock, run4: schema 2 with a "block" on each record) load the same
way as the others; their caps go into capNN. Every run of every file given counts in its
machine's table; none is selected or dropped.
Usage: python3 calib/coloc/table.py RUN.json... > TABLE.csv   (runs of one machine only)
       python3 calib/coloc/table.py --out UUID=TABLE.csv [--out UUID2=TABLE2.csv ...] RUN.json...
                  (one table per machine; UUID: a prefix of the env's GPU uuid; a machine whose
                  runs have no --out is an error)
       python3 calib/coloc/table.py --out UUID0+UUID1=TABLE.csv RUN0.json RUN1.json
                  (one table of the GPUs of one host measured in one call, run_x2.sh: the files of
                  every GPU whose uuid one of the +-joined prefixes begins, each workload measured
                  on one GPU and fitted on that GPU's solo; the header names each file's GPU)
       python3 calib/coloc/table.py --bracketed [--out UUID=TABLE.csv ...] RUN.json...
                  (bracketed runs, coloc.py --phases bracket: each MPS configuration's rate
                  corrected for drift by the solos just before and after it, see write_table;
                  a record whose GPM SM activity reaches GPU_BOUND_SM_ACTIVE keeps its measured
                  rate, see sm_saturated; with --second-thread TRAINMPS.json a record with host
                  time is judged by it instead, see gpu_bound)
       python3 calib/coloc/table.py --host-held [--out UUID=TABLE.csv ...] RUN.json...
                  (runs with coloc.py's host_cpu_s_reps: every MPS record's iteration time with
                  its clients' host enqueue CPU time replaced by the exclusive solos' mean where
                  the record is host-bound (the wait kept), so that a row shows the GPU side's sharing, not which processes drew
                  a slow host CPU; records without it are left out; see held_rates)
       python3 calib/coloc/table.py --host-held --second-thread TRAINMPS.json [--out ...] RUN.json...
                  (the same, and the training loops' lone clients (solo-mps, caps) held too: their
                  host is the main thread's enqueue CPU time h plus autograd's device thread,
                  taken as second_thread_ratio x h, the ratio per workload measured by
                  trainmps.py on its own call; see held_rates)
       python3 calib/coloc/table.py ROTATED.json...   (calib/coloc/rotcoloc.py's rotated rounds: one
                  record per configuration, its clients' rate the median round's, rate_reps one
                  value per round, so rel_sd is the rounds' spread and n counts the rounds)
       python3 calib/coloc/table.py --blocks RUN.json...   (the cap blocks side by side: per
       workload and block, exclusive solo, MPS uncapped, cap 50, cap 25, MPS uncapped, exclusive
       solo, each as its mean over the sub-windows +- their sd; then exclusive against MPS)
"""
import json
import math
import os
import statistics
import sys
from collections import defaultdict

from coloc import SERIAL_HOST_S
from trainmps import second_thread_ratio


def per_iteration_scale(record):
    """The factor that turns a solo record's NVML figures into the row's: 1 for a record of one
    window; for a rotated record (rotcoloc.py: one rate per round, the record's rate the median
    round's) the median round's rate over the mean of the rounds' rates. NVML samples every
    round alike, so its utilisation is work per iteration x the rounds' mean rate; scaled, it
    is that work at the row's rate (a utilisation above 1 is capped where it is written).
    Unscaled, a table whose rounds differ (a host running at half speed for a few rounds, table
    h200-coloc-i) pairs the median round's rate with another rate's GPU time: tfm_infer's fitted
    GPU work was -11 % on i and +8 % on h (NOTES-h200.md, "per-iteration GPM")."""
    client = record["clients"][0]
    reps = client.get("rate_reps") or []
    if "median_round" not in record or len(reps) < 2 or not sum(reps):
        return 1.0
    return client["rate_iter_per_s"] / (sum(reps) / len(reps))


def sm_time_per_iter(doc):
    """{(workload, k): SM-seconds one iteration takes} of a file's MPS records of k = 1 (a lone
    client, capless) and k = 2 identical clients with GPM: SM activity x the GPU's SMs / the
    clients' aggregate rate, the rate the mean of the record's sub-windows or rounds (NVML
    samples all of them alike, see per_iteration_scale); records of one (workload, k) averaged."""
    acc = defaultdict(list)
    for r in doc.get("runs") or []:
        if r.get("sharing") != "mps" or r["kind"] not in ("solo", "solo_after", "solo_end", "peers"):
            continue
        k = r["k"] if r["kind"] == "peers" else 1
        sm = ((r.get("nvml_util") or {}).get("gpm") or {}).get("sm_util_pct")
        if k > 2 or sm is None:
            continue
        agg = sum(sum(c["rate_reps"]) / len(c["rate_reps"]) if c.get("rate_reps")
                  else c["rate_iter_per_s"] for c in r["clients"])
        if agg > 0:
            acc[(r["clients"][0]["workload"], k)].append(sm / 100 * doc["env"]["sms"] / agg)
    return {key: sum(v) / len(v) for key, v in acc.items()}


def sm_growth(doc):
    """{workload: a} of one file: a = (S2 / S1 - 1) / ln 2 with S_k the SM-time an iteration at k
    identical MPS clients (sm_time_per_iter), the term 1 + a ln k of the MPS model
    (model/physics/share_mps.h) fitted on two clients. The SM-time an iteration grows beside
    peers (their working sets share the L2: the DRAM bytes an iteration grow faster still); on
    tables f-i, a fitted on k = 2 gives the mean growth at k = 3-8 within 0.02
    (NOTES-h200.md, "sm growth")."""
    s = sm_time_per_iter(doc)
    return {w: (s[(w, 2)] / s[(w, 1)] - 1) / math.log(2)
            for (w, k) in s if k == 1 and (w, 2) in s}


def machine(d):
    """The GPU a file was measured on: its env's NVML UUID ('' when the file has none)."""
    return d["env"].get("uuid", "")


def second_ratios(path):
    """{workload: second_thread_ratio} from a trainmps.py record, for the workloads whose threads
    other than the main one take more than 5 % of its CPU time (the training loops)."""
    with open(path) as f:
        d = json.load(f)
    out = {}
    for w, rec in d["workloads"].items():
        if rec.get("windows"):
            rho = second_thread_ratio(rec["windows"])[0]
            if rho > 0.05:
                out[w] = rho
    return out


def main(paths, outs=None, bracketed=False, held=False, second=None):
    """Writes one table per machine (GPU UUID) of the files that measured rates: to outs[uuid]
    (outs maps a UUID prefix to a path), or to stdout when no outs are given and one machine
    measured them all. Census-only files (no runs) feed every machine's census columns; the
    header says which file and machine each census column comes from."""
    docs = [(p, json.load(open(p))) for p in paths]
    groups = {}                   # uuid -> [(path, doc)] of the files with runs, in order given
    for p, d in docs:
        if d["runs"]:
            groups.setdefault(machine(d), []).append((p, d))
    if not outs:
        if len(groups) > 1:
            sys.exit("table.py: runs from %d machines (%s); give --out UUID=PATH for each"
                     % (len(groups), ", ".join(groups)))
        for u, files in groups.items():
            write_table(sys.stdout, u, files, docs, bracketed, held, second)
        return
    tables = {}                   # output path -> the machines (uuids) written to it
    for u, files in groups.items():
        path = [v for k, v in outs.items() if any(u.startswith(x) for x in k.split("+"))]
        if len(path) != 1:
            sys.exit(f"table.py: {len(path)} --out entries match machine {u} "
                     f"({', '.join(p for p, _ in files)}); expected one")
        tables.setdefault(path[0], []).append(u)
    for path, us in tables.items():
        with open(path, "w") as out:
            write_table(out, us[0] if len(us) == 1 else tuple(us),
                        [f for u in us for f in groups[u]], docs, bracketed, held, second)


def bracket_solos(d):
    """{(workload, pos): rate} of the uncapped MPS client's solos of a bracketed file
    (coloc.py --phases bracket)."""
    out = {}
    for r in d["runs"]:
        b = r.get("bracket")
        if b and r["sharing"] == "mps" and r["kind"] == "solo":
            out[(b["workload"], b["pos"])] = r["clients"][0]["rate_iter_per_s"]
    return out


def host_ref(files):
    """{workload: mean host enqueue CPU seconds per iteration} over the sub-windows of its
    exclusive solos (coloc.py's host_cpu_s_reps), for the workloads that have them."""
    acc = defaultdict(list)
    for _, d in files:
        for r in d["runs"]:
            if r["sharing"] != "mps" and r["kind"] in ("solo", "solo_after", "solo_end"):
                c = r["clients"][0]
                acc[c["workload"]] += [h for h in c.get("host_cpu_s_reps") or [] if h is not None]
    return {w: sum(v) / len(v) for w, v in acc.items() if v}


# --host-held: a sub-window counts as host-bound when its wait in the closing synchronisation is
# under this share of its host enqueue CPU time. On the 2026-11-29 run6/run7 records the inference
# loops wait 0.001-0.10 h (cnn_infer_b1, cnn_infer_b8, every configuration), host_loop 0.13-0.25 h
# and the training loops 0.50-1.37 h (cnn_train, tfm_train; 0.9-3.3 h at 4-8 clients): any share
# from 0.25 to 0.5 splits them alike
HELD_WAIT_FRAC = 0.35


def held_rates(clients, ref, rho=0.0):
    """(mean rate, sub-window rates) of the clients of one MPS record with each sub-window's host
    enqueue CPU time per iteration h replaced by the exclusive solos' ref. A sub-window whose wait
    in the closing synchronisation w = 1 / rate - h is under HELD_WAIT_FRAC of h is host-bound
    (its GPU work ends inside the enqueue): its iteration becomes ref + w. The others are kept as
    measured: GPU-bound ones (the iteration is the GPU's, whatever the host took) and, with rho 0,
    the training loops', whose h misses the backward pass (autograd runs it on its own device
    thread, so the main thread's CPU time does not count it, and their wait is ~h alone).
    rho > 0 (a training loop's lone client, --second-thread): the host is (1 + rho) h, the second
    thread's CPU time taken as rho times the main thread's (trainmps.py measured the loop's
    iteration as its process's CPU time within 0.4 %), so w = 1 / rate - (1 + rho) h and a
    host-bound sub-window's iteration becomes (1 + rho) ref + w. None where a sub-window lacks h."""
    per = []
    for c in clients:
        hs = c.get("host_cpu_s_reps") or []
        rr = c.get("rate_reps") or []
        if len(hs) != len(rr) or not rr or any(h is None or r <= 0 for h, r in zip(hs, rr)):
            return None
        per.append([1.0 / ((1.0 + rho) * ref + 1.0 / r - (1.0 + rho) * h)
                    if 1.0 / r - (1.0 + rho) * h < HELD_WAIT_FRAC * (1.0 + rho) * h else r
                    for r, h in zip(rr, hs)])
    sub = [sum(x) / len(x) for x in zip(*per)]
    return sum(sub) / len(sub), sub


def gpu_bound(clients, rho=0.0):
    """True when an MPS record's clients wait, on average over their sub-windows, at least
    HELD_WAIT_FRAC of their host time in the closing synchronisation: w = 1 / rate - (1 + rho) h,
    h the main thread's host enqueue CPU time per iteration and rho the loop's second-thread
    ratio (trainmps.py; 0 for loops without one). Its iteration is then the GPU's, which the
    host's draw (what the brackets measure: trainmps.py found a loop's iteration to be its
    process's CPU time) does not move. False where a sub-window lacks h."""
    fr = []
    for c in clients:
        hs = c.get("host_cpu_s_reps") or []
        rr = c.get("rate_reps") or []
        if len(hs) != len(rr) or not rr or any(h is None or h <= 0 or r <= 0 for h, r in zip(hs, rr)):
            return False
        fr += [(1.0 / r - (1.0 + rho) * h) / ((1.0 + rho) * h) for r, h in zip(rr, hs)]
    return sum(fr) / len(fr) >= HELD_WAIT_FRAC


# --bracketed: a configuration whose recorded GPM SM activity (nvml_util.gpm.sm_util_pct, the
# share of SM-time with a warp resident over the record's windows) reaches this share keeps its
# measured rate: the GPU, not the host, sets its iteration (the aggregate of k clients stops
# rising at SM activity 0.94-0.995, NOTES-h200.md 'mpsconc'). Taken from the one table with both
# observables, h200-coloc-e (run7): gpu_bound's host-time rule marks cnn_train mps6/mps8 (SM
# activity 0.971/0.979) and tfm_train mps8 (0.973) GPU-bound and leaves cnn_train mps4 (0.938)
# and tfm_train mps6 (0.875) host-following; any share from 0.94 to 0.97 splits them alike, and
# 0.95 is that range's middle. Used where a record has no host time (tables a-d)
GPU_BOUND_SM_ACTIVE = 0.95


def sm_saturated(r):
    """True when an MPS record's GPM SM activity is at least GPU_BOUND_SM_ACTIVE (False where the
    record has none)."""
    g = (r.get("nvml_util") or {}).get("gpm") or {}
    v = g.get("sm_util_pct")
    return isinstance(v, (int, float)) and v / 100 >= GPU_BOUND_SM_ACTIVE


def has_host(clients):
    """True when every client of a record carries its host enqueue CPU time per sub-window."""
    return all(c.get("host_cpu_s_reps") for c in clients)


def write_table(out, uuid, files, docs, bracketed=False, held=False, second=None):
    """The table of one machine: the rows of files (all measured on GPU uuid; a tuple of uuids:
    the GPUs of one host, each workload measured on one of them, run_x2.sh), the census
    columns from the census of that machine's files first, then from the other files in the
    order given. bracketed: the drift-corrected table of a bracketed run (--bracketed below);
    held: every MPS record with its clients' host time held at the exclusive solos' (--host-held);
    second: {workload: second_thread_ratio}, the training loops whose lone clients are held too;
    with bracketed, a record whose rate follows the GPU keeps its measured rate: by its host time
    (gpu_bound) where its clients carry it and a second (even empty) is given, else by its GPM SM
    activity (sm_saturated)."""
    by_gpu = bracketed and second is not None
    host = isinstance(uuid, tuple)
    uuids = uuid if host else (uuid,)
    second = second or {}
    refs = host_ref(files) if held else {}
    rates = defaultdict(list)     # key -> run means
    nmeas = defaultdict(int)      # key -> measurements: runs, or a rotated record's rounds
    subs = defaultdict(list)      # key -> sub-window rates
    util = defaultdict(list)
    gpm = defaultdict(lambda: defaultdict(list))
    census = {}
    census_src = defaultdict(set)  # census column -> files it was taken from
    envs = []
    ordered = [(p, d) for p, d in docs if machine(d) in uuids] + \
              [(p, d) for p, d in docs if machine(d) not in uuids]
    for p, d in ordered:
        for w, c in d.get("census", {}).items():
            for k, v in c.items():
                if k not in census.setdefault(w, {}):
                    census[w][k] = v
                    census_src[k].add(p)
    growth, growth_src = {}, {}   # workload -> a of sm_growth, and the file it came from
    for p, d in ordered:
        for w, a in sm_growth(d).items():
            if w not in growth:
                growth[w], growth_src[w] = a, (p, d)
    brk = {}                      # key -> [(bracket mean, drift)] of each bracketed record
    by_sm = False                 # some bracketed record was judged by its SM activity
    for p, d in files:
        envs.append((p, d["env"], d.get("window_s"), d.get("repeats"), machine(d)))
        solos = bracket_solos(d)
        for r in d["runs"]:
            names = [c["workload"] for c in r["clients"]]
            cl = r["clients"]
            reps = [c.get("rate_reps", []) for c in cl]
            b = r.get("bracket")
            if bracketed and r["sharing"] == "mps":
                if r["kind"] == "solo" or not b:
                    continue      # the brackets themselves and unbracketed records
                a, z = solos.get((b["workload"], b["pos"] - 1)), solos.get((b["workload"], b["pos"] + 1))
                if a is None or z is None:
                    continue
            if r["kind"] in ("solo", "solo_after", "solo_end") and r["sharing"] == "mps":
                keys = [(names[0], "solo-mps", "")]
                vals = [cl[0]["rate_iter_per_s"]]
                sub = [reps[0]]
            elif r["kind"] in ("solo", "solo_after", "solo_end"):
                keys = [(names[0], "solo", "")]
                vals = [cl[0]["rate_iter_per_s"]]
                sub = [reps[0]]
                nv = r["nvml_util"]
                if nv:
                    f = per_iteration_scale(r)
                    util[keys[0]].append(nv["gpu_pct"] / 100 * f)
                    for m, v in (nv.get("gpm") or {}).items():
                        if m != "error":
                            gpm[names[0]][m].append(v / 100 * f)
            elif r["kind"] == "peers":
                mode = "ts" if r["sharing"] == "timeslice" else "mps"
                keys = [(names[0], f"{mode}{r['k']}", "")]
                vals = [sum(c["rate_iter_per_s"] for c in cl) / r["k"]]
                sub = [[sum(x) / len(x) for x in zip(*reps)] if all(reps) else []]
            elif r["kind"] == "cap":
                keys = [(names[0], f"cap{r['mps_percent']}", "")]
                vals = [cl[0]["rate_iter_per_s"]]
                sub = [reps[0]]
            else:
                mode = "pair-ts" if r["sharing"] == "timeslice" else "pair-mps"
                keys = [(names[0], mode, names[1]), (names[1], mode, names[0])]
                vals = [c["rate_iter_per_s"] for c in cl]
                sub = reps
            if held and r["sharing"] == "mps":
                if names[0] not in refs or r["kind"] not in ("solo", "peers", "cap"):
                    continue
                lone = r["kind"] in ("solo", "cap")
                hr = held_rates(cl, refs[names[0]], second.get(names[0], 0.0) if lone else 0.0)
                if hr is None:
                    continue
                vals, sub = [hr[0]], [hr[1]]
            for k, v, s in zip(keys, vals, sub):
                if bracketed and r["sharing"] == "mps":
                    if by_gpu and has_host(cl):
                        keep = gpu_bound(cl, second.get(names[0], 0.0))
                    else:
                        keep = sm_saturated(r)
                        by_sm = True
                    brk.setdefault(k, []).append(((a + z) / 2, abs(a - z) / (a + z), len(s), keep))
                rates[k].append(v)
                nmeas[k] += r.get("n_rounds", 1)
                subs[k] += s
    if bracketed:
        # drift-corrected: each configuration's rates times the workload's exclusive solo over
        # the mean of its two bracketing solos; its noise adds the brackets' half-difference
        drift = {}
        for k, lst in brk.items():
            solo = rates.get((k[0], "solo", ""))
            if not solo:
                continue
            s_mean = sum(solo) / len(solo)
            f = [1.0 if keep else s_mean / m for m, _, _, keep in lst]
            rates[k] = [v * fi for v, fi in zip(rates[k], f)]
            sc, i = [], 0
            for fi, (_, _, n, _) in zip(f, lst):
                sc += [x * fi for x in subs[k][i:i + n]]
                i += n
            subs[k] = sc
            drift[k] = sum(dr for _, dr, _, _ in lst) / len(lst)
    gpus = sorted({e.get("gpu", "?") for _, e, _, _, _ in envs})
    out.write(f"# Co-location of PyTorch workloads on one {', '.join(gpus)}, measured by this project\n")
    scripts = sorted({d.get("script", "calib/coloc/coloc.py") for _, d in files})
    where = (f"on one host, {len(uuids)} GPUs measured at once (each file's GPU below)" if host
             else f"on one machine (GPU {uuid})")
    out.write(f"# with {' and '.join(scripts)} and averaged by calib/coloc/table.py, {where}, from:\n")
    for p, e, w, rp, u in envs:
        out.write(f"#   {p}: {e['date_utc']} {e['gpu']}" + (f" {u}" if host else "")
                  + f" driver {e['driver']} torch {e['torch']} "
                  f"CUDA {e['cuda']} torchvision {e['torchvision']} transformers {e['transformers']}"
                  f" windows {rp} x {w} s\n")
    for cols, keys in (("busy_frac, kernels", ("busy_s_per_iter", "kernels_per_iter")),
                       ("gpu_tail_frac", ("tail_frac",))):
        src = sorted(set().union(*(census_src[k] for k in keys)))
        if src:
            where = "; ".join(f"{p} (kernel census, " + (
                "this machine" if machine(d) in uuids else f"another machine, GPU {machine(d)}")
                + ")" for p, d in docs if p in src)
            out.write(f"# {cols} from {where}\n")
    gsrc = sorted({p for p, _ in growth_src.values()})
    if gsrc:
        where = "; ".join(f"{p} (MPS k = 1 and 2 records, " + (
            "this machine" if machine(d) in uuids else f"another machine, GPU {machine(d)}")
            + ")" for p, d in docs if p in gsrc)
        out.write(f"# mps_sm_growth from {where}\n")
    if bracketed:
        out.write("# BRACKETED (table.py --bracketed): every MPS configuration's rate_per_s is its measured rate\n"
                  "# times the workload's exclusive solo over the mean of the uncapped client's two solos\n"
                  "# measured just before and after it (drift removed); its rel_sd adds in quadrature the\n"
                  "# two solos' half-difference over their mean; the solos under MPS themselves are left out\n")
        if by_sm:
            out.write("# GPU-BOUND KEPT: a record without host time whose GPM SM activity reaches "
                      f"{GPU_BOUND_SM_ACTIVE:g} keeps\n"
                      "# its measured rate (the GPU sets its iteration; the brackets measure the host's draw)\n")
        if by_gpu:
            out.write("# GPU-BOUND KEPT (--second-thread): a record whose clients wait at least "
                      f"{HELD_WAIT_FRAC:g} of their host\n"
                      "# time (1 + second-thread ratio) h in the closing synchronisation keeps its measured rate\n")
    if held:
        out.write("# HOST HELD (table.py --host-held): every MPS record's rate_per_s (solo-mps, caps, k clients)\n"
                  "# is its clients' rate with each sub-window's host enqueue CPU time per iteration h\n"
                  "# (coloc.py host_cpu_s_reps) replaced by the mean of the workload's exclusive solos,\n"
                  "# ref, where a sub-window is host-bound (its wait w = 1 / rate - h in the closing\n"
                  f"# synchronisation under {HELD_WAIT_FRAC:g} h): iteration ref + w; the others as measured;\n"
                  "# host refs (ms): " + ", ".join(f"{w} {v * 1e3:.3f}" for w, v in sorted(refs.items())) + "\n")
        if second:
            out.write("# SECOND THREAD (--second-thread): the lone clients (solo-mps, caps) of " + ", ".join(
                f"{w} ({v:.3f})" for w, v in sorted(second.items())) + "\n"
                "# held with host (1 + ratio) h, the ratio autograd's thread's CPU time over the main\n"
                "# thread's as trainmps.py measured it; their k-client records as measured\n")
    out.write("# rate_per_s: iterations/s of one process; gpu_util: NVML utilisation (solo rows only);\n")
    out.write("# rel_sd: sd of the sub-window rates / mean (the measurement noise); busy_frac, kernels:\n")
    out.write("# torch.profiler kernel census; sm_active, dram_util: NVML GPM (solo rows only);\n")
    out.write("# serial_host_s: CPU s per iteration before the first launch (coloc.py SERIAL_HOST_S);\n")
    out.write("# gpu_tail_frac: GPU time left after the last launch / kernel-busy time (coloc.py tail_census)\n")
    out.write("# mps_sm_growth: a of 1 + a ln k, the SM-time an iteration at k MPS clients (sm_growth)\n")
    out.write("figure,workload,kind,with,rate_per_s,gpu_util,n,rel_sd,busy_frac,kernels,sm_active,"
              "dram_util,serial_host_s,gpu_tail_frac,mps_sm_growth\n")
    order = ["solo", "ts2", "ts4", "ts8", "solo-mps", "mps2", "mps3", "mps4", "mps6", "mps8", "cap5",
             "cap10", "cap15", "cap25", "cap50", "cap75", "pair-ts", "pair-mps"]
    for k in sorted(rates, key=lambda k: (order.index(k[1]), k[0], k[2])):
        w, kind, with_ = k
        mean = sum(rates[k]) / len(rates[k])
        label = f"{w}/{kind}" + (f":{with_}" if with_ else "")
        s = subs[k]
        rel_sd = f"{statistics.stdev(s) / (sum(s) / len(s)):.4f}" if len(s) >= 2 else ""
        if bracketed and k in drift and rel_sd:
            rel_sd = f"{(float(rel_sd) ** 2 + drift[k] ** 2) ** 0.5:.4f}"
        u = f"{min(1.0, sum(util[k]) / len(util[k])):.4f}" if util[k] else ""
        busy = kern = sm = dram = ser = tail = grow = ""
        if kind == "solo":
            c = census.get(w, {})
            if "busy_s_per_iter" in c:
                busy = f"{min(1.0, c['busy_s_per_iter'] * mean):.4f}"
                kern = f"{c['kernels_per_iter']:.1f}"
            g = gpm.get(w, {})
            if g.get("sm_util_pct"):
                sm = f"{min(1.0, sum(g['sm_util_pct']) / len(g['sm_util_pct'])):.4f}"
            if g.get("dram_bw_util_pct"):
                dram = f"{min(1.0, sum(g['dram_bw_util_pct']) / len(g['dram_bw_util_pct'])):.4f}"
            if w in SERIAL_HOST_S:
                ser = f"{SERIAL_HOST_S[w]:g}"
            if c.get("tail_frac") is not None:
                tail = f"{c['tail_frac']:.4f}"
            if w in growth:
                grow = f"{growth[w]:.4f}"
        out.write(f"{label},{w},{kind},{with_},{mean:.4f},{u},{nmeas[k]},{rel_sd},{busy},"
                  f"{kern},{sm},{dram},{ser},{tail},{grow}\n")


def mean_sd(xs):
    """'mean +- sd' of a list (sd empty below two values)."""
    m = sum(xs) / len(xs)
    sd = statistics.stdev(xs) if len(xs) >= 2 else 0.0
    return m, sd


def blocks(paths):
    """Prints the cap blocks of the files: one line per workload and block, then per workload
    the exclusive-solo and single-client-MPS means over every block position and file."""
    steps = ["excl", "mps", "cap50", "cap25", "mps", "excl"]
    seen = defaultdict(dict)          # (file, workload, block id) -> step -> record
    for p in paths:
        d = json.load(open(p))
        for r in d["runs"]:
            if "block" not in r:
                continue
            c = r["clients"][0]
            b = r["block"]
            seen[(p, c["workload"], b["id"])][b["step"]] = c
            if b["step"] == 5:        # the closing exclusive solo opens the next block
                seen[(p, c["workload"], b["id"] + 1)][0] = c
    out = sys.stdout
    out.write("# cap blocks: iterations/s, mean over the sub-windows +- their sd\n")
    out.write("workload         block  " + " ".join(f"{s:>14s}" for s in steps) + "\n")
    per = defaultdict(lambda: defaultdict(list))   # workload -> excl/mps -> block-position means
    for (p, w, bid), st in sorted(seen.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
        if not any(i in st for i in range(1, 5)):
            continue                  # only a closing solo: no block after it
        cells = []
        for i, name in enumerate(steps):
            c = st.get(i)
            if c is None:
                cells.append(f"{'-':>14s}")
                continue
            m, sd = mean_sd(c["rate_reps"])
            cells.append(f"{m:8.2f}+-{sd:4.1f}" if sd < 100 else f"{m:8.1f}+-{sd:4.0f}")
            if name in ("excl", "mps"):
                per[w][name].append(c["rate_iter_per_s"])
        lab = os.path.splitext(os.path.basename(p))[0].split("-")[-1]
        out.write(f"{w:16s} {lab:>5s}/{bid}  " + " ".join(cells) + "\n")
    out.write("# exclusive solo against one uncapped MPS client alone (means of the block positions)\n")
    out.write("workload         n_excl  excl_mean  excl_range   n_mps   mps_mean   mps_range  mps/excl\n")
    for w in sorted(per):
        e, m = per[w]["excl"], per[w]["mps"]
        if not e or not m:
            continue
        em, mm = sum(e) / len(e), sum(m) / len(m)
        out.write(f"{w:16s} {len(e):6d} {em:10.2f} {min(e):6.1f}-{max(e):<6.1f} {len(m):5d} "
                  f"{mm:10.2f} {min(m):6.1f}-{max(m):<6.1f} {mm / em - 1:+8.1%}\n")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--blocks"]:
        blocks(args[1:])
    else:
        outs = {}
        brk_mode = args[:1] == ["--bracketed"]
        held_mode = args[:1] == ["--host-held"]
        args = args[1:] if brk_mode or held_mode else args
        second = None
        if (held_mode or brk_mode) and args[:1] == ["--second-thread"] and len(args) > 1:
            second = second_ratios(args[1])
            args = args[2:]
        while args[:1] == ["--out"] and len(args) > 1 and "=" in args[1]:
            k, v = args[1].split("=", 1)
            outs[k] = v
            args = args[2:]
        main(args, outs, brk_mode, held_mode, second)
