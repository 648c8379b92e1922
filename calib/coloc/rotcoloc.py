#!/usr/bin/env python3
"""calib/coloc/rotcoloc.py - h200-coloc-f: table e's configurations in rotated rounds (issue 25).

Why. trainmps.py found every loop's iteration to be its process's CPU time within 0.34 %, and the
VM's host CPU speed to move 9-20 % between windows seconds to minutes apart. Table h200-coloc-e
measured each configuration once, minutes apart, so its rows carry that draw; brackets and
--host-held correct it after the fact. Here the protocol removes it by design: every
configuration of a workload is measured in each of --rounds rounds, the order of the
configurations rotated from round to round, so that each configuration samples the host's drift
as often and as spread as every other; a row is the median round and its noise the spread of the
rounds.

What. Per workload (coloc.py's loops, the same code: coloc.build_workload), the configurations of
table e's bracket phase: exclusive solo (no MPS); one uncapped MPS client alone (solo-mps); one
MPS client at CUDA_MPS_ACTIVE_THREAD_PERCENTAGE 75, 50, 25 (cap75/50/25); 2, 3, 4, 6, 8 identical
uncapped MPS clients (mps2..mps8). Warm processes, all started together and kept for the whole
workload: one exclusive (E), eight uncapped MPS clients (M1..M8), one per cap (C75, C50, C25);
twelve in all, idle on their stdin while the others run.

CPUs. Client slot j (0..7) owns two CPUs, {2 + 2j, 3 + 2j} mod the machine's CPU count (16 on the
H200 VM: slot 0 = CPUs 2,3 as trainmps.py used, slot 7 = 0,1); with --cpus LIST (the table's own
CPUs, e.g. one half of a two-GPU host), the entries (2 + 2j, 3 + 2j) mod len(LIST) of LIST; every thread of a process is pinned
to its slot's CPUs once it is ready (threads it starts later inherit them). E, M1 and the capped
clients take slot 0, M_j slot j - 1: a lone client always runs on CPUs 2,3 and k clients on slots
0..k-1, the same in every configuration and round. Two CPUs a client: a training loop's main
thread and autograd's device thread (trainmps.py).

Rounds. --rounds rounds; in round r the configurations run in their listed order rotated by
r * n_cfg // rounds, one window each: coloc.py's measurement (all the configuration's clients
start together; a lead of LEAD_S, a window of --window-s, TAIL_S more so nobody's last iteration
runs alone; NVML utilisation, SM clock, power and GPM over the window; per client the iterations'
host enqueue CPU time). After the rounds, E's kernel census and GPU tail (coloc.py tail_census;
last, since the profiler leaves CUPTI attached to its process).

Output (DIR/rotcoloc.json, rewritten after every workload) is coloc.py's schema 2, so table.py
reads it as it reads run6/run7: one record per configuration with "n_rounds"; each client's
rate_reps / host_cpu_s_reps hold one value per round (in round order), its rate_iter_per_s the
rate of the configuration's median round (the round whose mean over the clients is the median,
median_low for an even count), so table.py's row is that median and its rel_sd the rounds'
spread; every round's raw measurement under "rounds". The MPS control daemon (own pipe and log
directories, --mps-dir) is started once and told to quit on every exit path. Never changes MIG
mode, clocks, power limit or compute mode.

Two GPUs at once (run_x2.sh --rot, table h200-coloc-g): one invocation per GPU, each started with
CUDA_VISIBLE_DEVICES=N and CUDA_DEVICE_ORDER=PCI_BUS_ID, given --gpu N (the NVML index its
utilisation is read from), --cpus (its half of the host's CPUs) and its own --mps-dir, so that each
has its own MPS control daemon. The daemon inherits CUDA_VISIBLE_DEVICES=N; its clients count the
devices it sees, so they run with CUDA_VISIBLE_DEVICES=0 (coloc.py's bracket phase found a client
left with N > 0 to see no GPU); the exclusive process keeps N.

usage: python3 calib/coloc/rotcoloc.py --out DIR [--only W1,W2,W3] [--rounds 5] [--window-s 0.8]
           [--budget-s 400] [--mps-dir /tmp/rotcoloc-mps] [--gpu 0] [--cpus 0-15] [--fake]
(--fake: coloc.py's CPU sleep loops, no NVML and no daemon: the coordination without a GPU)
"""
import argparse
import atexit
import json
import os
import signal
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coloc  # noqa: E402
import hostcpu  # noqa: E402

LEAD_S = 0.3    # coloc.py's 0.5: the processes are warm and each window is one of many rounds
TAIL_S = 0.2
KS = coloc.BRACKET_KS            # 2, 3, 4, 6, 8
CAPS = coloc.BRACKET_CAPS        # 75, 50, 25
# label, record kind, sharing, number of clients, cap
CONFIGS = [("solo", "solo", "exclusive", 1, None), ("solo-mps", "solo", "mps", 1, None)] + \
    [(f"cap{p}", "cap", "mps", 1, p) for p in CAPS] + \
    [(f"mps{k}", "peers", "mps", k, None) for k in KS]


class Worker(coloc.Worker):
    """coloc.py's worker, started through this script so that its lead and tail are ours."""

    def __init__(self, name, fake, env):
        super().__init__(name, fake, env, script=__file__)


def slot_cpus(j, cpus):
    """Client slot j's two CPUs among the table's CPUs (a list; all of the machine's by default)."""
    return {cpus[(2 + 2 * j) % len(cpus)], cpus[(3 + 2 * j) % len(cpus)]}


def cpu_list(text):
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11] (the order given; duplicates an error)."""
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        try:
            a, b = int(lo), int(hi or lo)
        except ValueError:
            sys.exit(f"rotcoloc.py: --cpus: expected a list like 0-15 or 0,2,4-7, got {text!r}")
        out += range(a, b + 1)
    if not out or len(set(out)) != len(out) or min(out) < 0:
        sys.exit(f"rotcoloc.py: --cpus: expected distinct CPU numbers, got {text!r}")
    return out


def mean_util(us):
    """The rounds' NVML figures of one configuration averaged (None where no round had any)."""
    us = [u for u in us if u]
    if not us:
        return None
    out = {k: statistics.mean(u[k] for u in us) for k in ("gpu_pct", "mem_pct")}
    for k in ("sm_clock_mhz", "power_w"):
        v = [u[k] for u in us if k in u]
        if v:
            out[k] = statistics.mean(v)
    v = [u["sm_clock_min_mhz"] for u in us if "sm_clock_min_mhz" in u]
    if v:
        out["sm_clock_min_mhz"] = min(v)
    gpm = {}
    for u in us:
        for m, x in (u.get("gpm") or {}).items():
            if m != "error":
                gpm.setdefault(m, []).append(x)
    out["gpm"] = {m: statistics.mean(x) for m, x in gpm.items()} or None
    out["n"] = sum(u.get("n", 0) for u in us)
    return out


def aggregate(label, kind, sharing, k, pct, rounds):
    """One coloc.py-schema record of a configuration from its rounds (in round order)."""
    per = [statistics.mean(c["rate_iter_per_s"] for c in m["clients"]) for m in rounds]
    med = statistics.median_low(per)
    mi = per.index(med)
    clients = []
    for i in range(k):
        cs = [m["clients"][i] for m in rounds]
        clients.append({"workload": cs[0]["workload"], "slot": i,
                        "rate_iter_per_s": cs[mi]["rate_iter_per_s"],
                        "rate_reps": [c["rate_iter_per_s"] for c in cs],
                        "host_cpu_s_reps": [c["host_cpu_s_reps"][0] for c in cs],
                        "iters": [c["iters"] for c in cs]})
    rec = {"sharing": sharing, "kind": kind, "k": k, "config": label, "n_rounds": len(rounds),
           "median_round": rounds[mi]["round"], "clients": clients,
           "nvml_util": mean_util([m["nvml_util"] for m in rounds])}
    if pct is not None:
        rec["mps_percent"] = pct
    return rec


def run_workload(name, args, util, envs, doc, t0):
    excl_env, mps_env = envs
    spec = [("E", excl_env, 0)] + [(f"M{j + 1}", mps_env, j) for j in range(max(KS))] + \
        [(f"C{p}", dict(mps_env, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(p)), 0) for p in CAPS]
    ws = {tag: Worker(name, args.fake, e) for tag, e, _ in spec}
    rec = {"spawn_t_s": time.time() - t0, "pins": {}, "rounds": [], "errors": []}
    doc["workloads_run"][name] = rec
    try:
        for w in ws.values():
            w.wait_ready(timeout=240)
        rec["ready_t_s"] = time.time() - t0
        for tag, _, j in spec:
            cpus = slot_cpus(j, args.cpus) & os.sched_getaffinity(0) or os.sched_getaffinity(0)
            rec["pins"][tag] = {"cpus": sorted(cpus), "threads": hostcpu.set_affinity(ws[tag].p.pid, cpus)}
        if not args.fake and "server_list" not in doc.get("mps_daemon", {}):
            doc["mps_daemon"]["server_list"] = coloc.mps_server_list(mps_env)
        procs = {"solo": ["E"], "solo-mps": ["M1"]}
        procs.update({f"cap{p}": [f"C{p}"] for p in CAPS})
        procs.update({f"mps{k}": [f"M{j + 1}" for j in range(k)] for k in KS})
        n = len(CONFIGS)
        for r in range(args.rounds):
            off = r * n // args.rounds
            for i in range(n):
                label = CONFIGS[(i + off) % n][0]
                m = coloc.measure([ws[t] for t in procs[label]], util, 1)
                m.update(config=label, round=r, t_s=time.time() - t0)
                rec["rounds"].append(m)
                print(f"[{m['t_s']:6.1f}s] {name} r{r} {label:8s} "
                      + " ".join(f"{c['rate_iter_per_s']:.1f}" for c in m["clients"]), flush=True)
        for label, kind, sharing, k, pct in CONFIGS:
            rs = [m for m in rec["rounds"] if m["config"] == label]
            doc["runs"].append(aggregate(label, kind, sharing, k, pct, rs))
        doc["census"][name] = ws["E"].census(timeout=120, tail=True)
    except RuntimeError as e:
        rec["errors"].append(str(e)[-1500:])
    finally:
        for w in ws.values():
            w.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--only", default="cnn_infer_b1,cnn_infer_b8,host_loop")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--window-s", type=float, default=0.8)
    ap.add_argument("--budget-s", type=float, default=400)
    ap.add_argument("--mps-dir", default="/tmp/rotcoloc-mps")
    ap.add_argument("--gpu", type=int, default=0,
                    help="NVML index of the GPU (start with CUDA_VISIBLE_DEVICES=N and "
                    "CUDA_DEVICE_ORDER=PCI_BUS_ID so that both count alike)")
    ap.add_argument("--cpus", default="",
                    help="this table's CPUs, e.g. 0-15 (default: every CPU of the machine)")
    ap.add_argument("--fake", action="store_true")
    ap.add_argument("--worker")
    args = ap.parse_args()
    coloc.LEAD_S, coloc.TAIL_S = LEAD_S, TAIL_S
    coloc.WINDOW_S = args.window_s
    coloc.GPU.update(index=args.gpu, mps_dir=args.mps_dir)
    args.cpus = cpu_list(args.cpus) if args.cpus else list(range(os.cpu_count()))
    if args.worker:
        coloc.worker_main(args.worker, args.fake)
        return
    t0 = time.time()
    os.makedirs(args.out, exist_ok=True)
    atexit.register(coloc.stop_mps)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, lambda *_: sys.exit(130))
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("CUDA_MPS_PIPE_DIRECTORY", None)
    env.pop("CUDA_MPS_LOG_DIRECTORY", None)
    excl_env = dict(env, CUDA_MPS_PIPE_DIRECTORY=args.mps_dir + "-nodaemon")
    mps_env = coloc.mps_env_of(env)     # the daemon's: it sees CUDA_VISIBLE_DEVICES=N
    cenv = dict(mps_env, CUDA_VISIBLE_DEVICES="0") if mps_env.get("CUDA_VISIBLE_DEVICES") else mps_env
    names = [n for n in args.only.split(",") if n]
    for n in names:
        if n not in coloc.WORKLOADS:
            sys.exit(f"rotcoloc.py: --only: unknown workload {n!r}")
    doc = {"schema": "slicesim-coloc", "schema_version": 2, "script": "calib/coloc/rotcoloc.py",
           "argv": sys.argv[1:], "protocol": "rotated", "window_s": args.window_s,
           "repeats": args.rounds, "rounds": args.rounds, "lead_s": LEAD_S, "tail_s": TAIL_S,
           "configs": [c[0] for c in CONFIGS],
           "gpu": args.gpu, "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
           "cpus": args.cpus, "affinity": sorted(os.sched_getaffinity(0)),
           "slots": {j: sorted(slot_cpus(j, args.cpus)) for j in range(max(KS))},
           "workloads": {n: {"what": d, "batch": b, "unit": u}
                         for n, (d, b, u) in coloc.WORKLOADS.items() if n in names},
           "env": coloc.env_info(args.fake), "census": {}, "runs": [], "workloads_run": {},
           "skipped": [], "errors": []}
    path = os.path.join(args.out, "rotcoloc.json")

    def save():
        doc["elapsed_s"] = time.time() - t0
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(path + ".tmp", path)
    util = coloc.Util(args.fake)
    try:
        if not coloc.start_mps(mps_env, doc, args.fake):
            doc["errors"].append("MPS daemon did not start")
            return
        per = LEAD_S + TAIL_S + args.window_s + 0.45
        for name in names:
            need = 45 + args.rounds * len(CONFIGS) * per
            left = args.budget_s - (time.time() - t0)
            if left < need:
                doc["skipped"].append({"workload": name, "why": f"{left:.0f} s left, {need:.0f} needed"})
                continue
            run_workload(name, args, util, (excl_env, cenv), doc, t0)
            save()
    finally:
        coloc.stop_mps()
        coloc.mps_log_tails(mps_env, doc)
        save()
    print(f"done: {len(doc['runs'])} records, {len(doc['skipped'])} skipped, "
          f"{time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
