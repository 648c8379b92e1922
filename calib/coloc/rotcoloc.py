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

Offset rounds and processes taking turns (run_x2.sh --rot --offset, table h200-coloc-h). Table g's
two invocations ran the same configuration at the same moment (2k busy clients on the host at
mpsk), and each lone configuration was one process for the whole workload (its own persistent
speed a bias of its row). --sync-file/--sync-peer make the two invocations start every window
together (Sync) and --first-offset shifts one GPU's rotation (5: half a round), so which
configurations meet is fixed and never the same one; --rotate-procs N gives the exclusive solo
and each cap N warm processes serving in turn (pool offsets, see serving) and lets the uncapped
clients M1..M8 take turns as solo-mps and in every mpsk, each moved onto its client slot's CPUs
before its window; every window records its processes (procs).

usage: python3 calib/coloc/rotcoloc.py --out DIR [--only W1,W2,W3] [--rounds 5] [--window-s 0.8]
           [--budget-s 400] [--mps-dir /tmp/rotcoloc-mps] [--gpu 0] [--cpus 0-15]
           [--first-offset 0] [--rotate-procs 1] [--sync-file F --sync-peer G] [--fake]
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


def lone_tag(base, q, nl):
    """The q-th of nl warm processes of a lone configuration: E, C50 when nl = 1 (tables f, g),
    E1, E2, C50a, C50b, ... otherwise."""
    if nl == 1:
        return base
    return f"{base}{q + 1}" if base == "E" else f"{base}{'abcdefgh'[q]}"


def serving(label, r, nl):
    """The warm processes that serve configuration label in round r, client slot by slot. With
    one process per lone configuration (nl = 1, tables f and g) always the same ones: E, M1..Mk,
    C<p>. With nl > 1 (--rotate-procs) they take turns, each pool with its own offset so that the
    lone configurations do not all change process in the same round: the exclusive solo E(r mod
    nl + 1), cap p (the q-th cap, q = 1..3) its ((r + q) mod nl)-th process, and the uncapped
    clients from M(r mod 8 + 1) on, so that solo-mps and every mpsk draw another M each round."""
    cfg = {c[0]: c for c in CONFIGS}[label]
    sharing, k, pct = cfg[2], cfg[3], cfg[4]
    if nl == 1:
        if sharing == "exclusive":
            return ["E"]
        return [f"C{pct}"] if pct is not None else [f"M{j + 1}" for j in range(k)]
    if sharing == "exclusive":
        return [lone_tag("E", r % nl, nl)]
    if pct is not None:
        q = CAPS.index(pct) + 1
        return [lone_tag(f"C{pct}", (r + q) % nl, nl)]
    m = max(KS)
    return [f"M{(r + j) % m + 1}" for j in range(k)]


class Sync:
    """Window-by-window lockstep with the invocation on the other GPU (run_x2.sh --offset): before
    window n each writes n into its own file and waits until the peer's file holds n or more, so
    both start window n together and --first-offset alone sets which configurations meet. A peer
    that has ended writes a number beyond every window. A wait longer than timeout_s ends the
    lockstep for the rest of the call (recorded in the JSON). No files: no waiting."""
    DONE = 10 ** 9

    def __init__(self, own, peer, doc, timeout_s=240.0):
        self.own, self.peer, self.doc, self.timeout_s = own, peer, doc, timeout_s
        self.on = bool(own and peer)
        doc["sync"] = {"own": own, "peer": peer, "waits_s": [], "timeouts": 0}
        if self.on:
            self.put(-1)

    def put(self, n):
        with open(self.own + ".tmp", "w") as f:
            f.write(str(n))
        os.replace(self.own + ".tmp", self.own)

    def peer_at(self):
        try:
            with open(self.peer) as f:
                return int(f.read().strip() or -1)
        except (OSError, ValueError):
            return -1

    def wait(self, n):
        if not self.on:
            return
        self.put(n)
        t = time.time()
        while self.peer_at() < n:
            if time.time() - t > self.timeout_s:
                self.doc["sync"]["timeouts"] += 1
                self.doc["sync"]["off_at_window"] = n
                self.on = False
                break
            time.sleep(0.002)
        w = time.time() - t
        if w > 0.5:
            self.doc["sync"]["waits_s"].append([n, round(w, 2)])

    def done(self):
        if self.own:
            self.put(self.DONE)


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
                        "iters": [c["iters"] for c in cs],
                        "procs": [m["procs"][i] for m in rounds]})
    rec = {"sharing": sharing, "kind": kind, "k": k, "config": label, "n_rounds": len(rounds),
           "median_round": rounds[mi]["round"], "clients": clients,
           "nvml_util": mean_util([m["nvml_util"] for m in rounds])}
    if pct is not None:
        rec["mps_percent"] = pct
    return rec


def run_workload(name, wi, args, util, envs, doc, t0, sync):
    excl_env, mps_env = envs
    nl = args.rotate_procs
    spec = [(lone_tag("E", q, nl), excl_env, 0) for q in range(nl)] + \
        [(f"M{j + 1}", mps_env, j) for j in range(max(KS))] + \
        [(lone_tag(f"C{p}", q, nl), dict(mps_env, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(p)), 0)
         for p in CAPS for q in range(nl)]
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
        slot_of = {tag: j for tag, _, j in spec}
        n = len(CONFIGS)
        for r in range(args.rounds):
            off = r * n // args.rounds + args.first_offset
            for i in range(n):
                label = CONFIGS[(i + off) % n][0]
                tags = serving(label, r, nl)
                for j, tag in enumerate(tags):    # client j of a configuration on slot j
                    if slot_of[tag] != j:
                        cpus = slot_cpus(j, args.cpus) & os.sched_getaffinity(0) or os.sched_getaffinity(0)
                        hostcpu.set_affinity(ws[tag].p.pid, cpus)
                        slot_of[tag] = j
                        rec["repins"] = rec.get("repins", 0) + 1
                sync.wait((wi * args.rounds + r) * n + i)
                m = coloc.measure([ws[t] for t in tags], util, 1)
                m.update(config=label, round=r, t_s=time.time() - t0, procs=tags)
                rec["rounds"].append(m)
                print(f"[{m['t_s']:6.1f}s] {name} r{r} {label:8s} "
                      + " ".join(f"{c['rate_iter_per_s']:.1f}" for c in m["clients"]), flush=True)
        for label, kind, sharing, k, pct in CONFIGS:
            rs = [m for m in rec["rounds"] if m["config"] == label]
            doc["runs"].append(aggregate(label, kind, sharing, k, pct, rs))
        doc["census"][name] = ws[lone_tag("E", 0, nl)].census(timeout=120, tail=True)
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
    ap.add_argument("--first-offset", type=int, default=0,
                    help="positions added to every round's rotation (run_x2.sh --offset gives "
                    "GPU 1 half a round, 5, so the GPUs never run the same configuration at once)")
    ap.add_argument("--rotate-procs", type=int, default=1,
                    help="warm processes per lone configuration (exclusive solo, each cap) taking "
                    "turns round by round, and the uncapped clients M1..M8 taking turns; 1: one "
                    "fixed process each (tables f, g)")
    ap.add_argument("--sync-file", default="", help="this invocation's window counter (run_x2.sh)")
    ap.add_argument("--sync-peer", default="", help="the other GPU's window counter")
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
    if not 1 <= args.rotate_procs <= 8:
        sys.exit("rotcoloc.py: --rotate-procs: expected 1 to 8")
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
           "configs": [c[0] for c in CONFIGS], "first_offset": args.first_offset,
           "rotate_procs": args.rotate_procs,
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
    sync = Sync(args.sync_file, args.sync_peer, doc)
    try:
        if not coloc.start_mps(mps_env, doc, args.fake):
            doc["errors"].append("MPS daemon did not start")
            return
        per = LEAD_S + TAIL_S + args.window_s + 0.45
        for wi, name in enumerate(names):
            need = 45 + args.rounds * len(CONFIGS) * per
            left = args.budget_s - (time.time() - t0)
            if left < need:
                doc["skipped"].append({"workload": name, "why": f"{left:.0f} s left, {need:.0f} needed"})
                continue
            run_workload(name, wi, args, util, (excl_env, cenv), doc, t0, sync)
            save()
    finally:
        sync.done()
        coloc.stop_mps()
        coloc.mps_log_tails(mps_env, doc)
        save()
    print(f"done: {len(doc['runs'])} records, {len(doc['skipped'])} skipped, "
          f"{time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
