#!/usr/bin/env python3
"""calib/coloc/hostcpu.py - is it the host CPUs that hold many MPS clients back? (issue 25)

Question. The small-kernel loops of calib/coloc (cnn_infer_b1, cnn_infer_b8) run at 0.6-0.9 of
their bracketing solos with 6-8 MPS clients, and cnn_infer_b8 at 0.8 under caps 50/25 %, where
the model (and the launch ceiling of launchceil.py, ~1.0 M kernels/s shared) sees no GPU limit.
Three explanations are told apart here by splitting each iteration at its closing
torch.cuda.synchronize() (coloc.host_wait_split's split):
  - the host's enqueue time (Python, dispatch, every launch) grows because the clients'
    processes wait for a CPU (enqueue wall time above its thread CPU time, involuntary context
    switches), or because the same work takes more CPU time beside other processes (SMT siblings,
    shared caches: enqueue CPU time per iteration above the lone client's);
  - or the wait in the synchronisation grows (the GPU side: kernels queued behind others').
Each is measured with the clients unpinned (as coloc.py ran), pinned one per physical core
("spread"), and pinned two per physical core on SMT siblings ("packed"; two per CPU where the
machine has no SMT), so the same k = 8 clients run with and without shared cores.

How. Under one private MPS control daemon, per workload of --only: K uncapped MPS clients and one
client per cap of --caps are spawned together (hostcpu.py --worker, coloc.build_workload's loop)
and wait on their stdin. Configurations, each between two runs of one uncapped client alone
(unpinned): k = 8 unpinned, 8 spread, 8 packed, 4 unpinned, each cap alone, and the lone client
pinned to one core. Affinity is set from here on every thread of a worker (/proc/PID/task) before
a window and reset after. Each configuration is --repeats windows of --window-s seconds after a
0.5 s lead, from a common wall-clock start. Per client and window: iterations/s, mean enqueue
wall and thread-CPU time, mean synchronisation wall and CPU time (a spinning wait costs CPU),
getrusage deltas (user, system, voluntary and involuntary switches) over the window, and the CPUs
it ran on (/proc/PID/stat, sampled every 100 ms); per configuration the machine's CPU busy share
(/proc/stat), the MPS server's CPU time (its /proc stat, read only), how many clients shared a
physical core in the samples, and NVML utilisation (coloc.Util). The environment records the CPU
topology (lscpu, /sys/devices/system/cpu). Never changes MIG mode, clocks, power limit or compute
mode; stops the daemon it starts on every exit path (coloc.stop_mps, atexit and finally).

Second call (--phases burn,nomps,beside): 'burn' runs n = 1, 2, 4, 8, 12, 16 (--burn-ns)
CPU-only processes (no GPU) of a fixed work, an interpreter loop (burn-py) and 100 tiny PyTorch CPU operations
(burn-torch), and records each one's rate: how the same work's CPU time moves with the number of
busy CPUs of the machine (frequency, shared caches, the hypervisor). 'nomps' runs k clients of a
workload without MPS (time-sliced contexts) between two lone ones: is the host's growth MPS's?
'beside' runs, under MPS, one client beside 7 burn-py, 7 burn-torch and 15 burn-py processes and
k clients, each between two lone clients: does the host part of a client grow beside busy CPUs
that launch nothing? The record's machine_cpu_steal_frac is /proc/stat's steal share.

usage: python3 calib/coloc/hostcpu.py --out DIR [--only cnn_infer_b1,cnn_infer_b8,host_loop]
           [--phases peers|burn,nomps,beside] [--k 8] [--caps 50,25] [--repeats 3]
           [--window-s 1] [--budget-s 500] [--burn-ns 1,2,4,8,12,16] [--fake]
Writes DIR/hostcpu.json (rewritten after every configuration).
"""
import argparse
import atexit
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coloc  # noqa: E402

LEAD_S = 0.5
TAIL_S = 0.3


# ---------------------------------------------------------------- worker side

def proc_cpu(pid="self"):
    """The CPU a process (its main thread) last ran on: field 39 of /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        return int(s[s.rindex(")") + 2:].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def burner(kind):
    """A fixed amount of CPU work, no GPU: 'burn-py' an interpreter loop (~1 ms), 'burn-torch'
    100 tiny PyTorch operations on CPU tensors (the dispatcher's path without a device)."""
    if kind == "burn-py":
        def step():
            acc = 0
            for i in range(20000):
                acc += i * i
            return acc
        return step
    import torch
    torch.set_num_threads(1)
    a, b = torch.ones(8), torch.ones(8)

    def step():
        for _ in range(100):
            torch.add(a, b)
    return step


def worker_main(name, fake):
    cpu_only = name.startswith("burn-")
    step = burner(name) if cpu_only else coloc.build_workload(name, fake)
    fake = fake or cpu_only
    mark = {"enq": 0.0, "enq_cpu": 0.0}
    if not fake:
        import torch
        real_sync = torch.cuda.synchronize

        def sync(*a, **k):
            mark["enq"] = time.perf_counter()
            mark["enq_cpu"] = time.thread_time()
            real_sync(*a, **k)
        torch.cuda.synchronize = sync
    t0 = time.time()
    while time.time() - t0 < 1.2:
        step()
    print(json.dumps({"ready": True, "pid": os.getpid()}), flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts or parts[0] == "quit":
            break
        t_start, t_end = float(parts[1]), float(parts[2])
        while time.time() < t_start - 0.02:
            time.sleep(0.005)
        while time.time() < t_start:
            pass
        it = []   # [end (epoch s), enqueue wall, enqueue cpu, sync wall, sync cpu]
        ru = {}
        while True:
            a, ac = time.perf_counter(), time.thread_time()
            if fake:
                mark["enq"], mark["enq_cpu"] = a, ac
            step()
            b, bc = time.perf_counter(), time.thread_time()
            now = time.time()
            if fake:
                mark["enq"], mark["enq_cpu"] = b, bc
            if now >= t_start + LEAD_S and "a" not in ru:
                ru["a"] = resource.getrusage(resource.RUSAGE_SELF)
            if now > t_end and "b" not in ru:
                ru["b"] = resource.getrusage(resource.RUSAGE_SELF)
            if now > t_end + TAIL_S:
                break
            if t_start + LEAD_S <= now <= t_end:
                it.append([round(now, 6), round((mark["enq"] - a) * 1e6, 1),
                           round((mark["enq_cpu"] - ac) * 1e6, 1), round((b - mark["enq"]) * 1e6, 1),
                           round((bc - mark["enq_cpu"]) * 1e6, 1)])
        r = {}
        if "a" in ru and "b" in ru:
            for f in ("ru_utime", "ru_stime", "ru_nvcsw", "ru_nivcsw", "ru_minflt"):
                r[f] = getattr(ru["b"], f) - getattr(ru["a"], f)
        print(json.dumps({"it": it, "rusage": r}), flush=True)


# ---------------------------------------------------------------- coordinator side

class Worker(coloc.Worker):
    def __init__(self, name, fake, env):  # pylint: disable=super-init-not-called
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", name] + \
            (["--fake"] if fake else [])
        self.name = name
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env)
        self.info = None

    def result(self, timeout):
        line = coloc.read_line(self.p, timeout)
        if line is None:
            raise RuntimeError(f"{self.name}: no result; stderr: {self.stderr_tail()}")
        return json.loads(line)


def topology():
    """cpu -> (package, core) from /sys, for the CPUs this process may use."""
    out = {}
    for c in sorted(os.sched_getaffinity(0)):
        base = f"/sys/devices/system/cpu/cpu{c}/topology/"
        try:
            with open(base + "physical_package_id") as f:
                pkg = int(f.read())
            with open(base + "core_id") as f:
                core = int(f.read())
        except OSError:
            pkg, core = 0, c
        out[c] = (pkg, core)
    return out


def layouts(topo, k):
    """CPU sets per client: 'spread' (one physical core each, its first thread; wraps onto the
    second threads when there are fewer cores than clients) and 'packed' (both threads of k/2
    cores; without SMT two clients per CPU on k/2 CPUs)."""
    cores = {}
    for c, pc in sorted(topo.items()):
        cores.setdefault(pc, []).append(c)
    threads = list(cores.values())
    firsts = [t[0] for t in threads] + [x for t in threads for x in t[1:]]
    spread = [[firsts[i % len(firsts)]] for i in range(k)]
    smt = any(len(t) > 1 for t in threads)
    packed = []
    if smt:
        pairs = [t for t in threads if len(t) > 1]
        for i in range(k):
            t = pairs[(i // 2) % len(pairs)]
            packed.append([t[i % 2]])
    else:
        for i in range(k):
            packed.append([firsts[(i // 2) % len(firsts)]])
    return {"spread": spread, "packed": packed, "smt": smt, "cores": len(threads)}


def set_affinity(pid, cpus):
    """Every thread of pid onto cpus (a set); returns how many threads were set."""
    n = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for t in tids:
        try:
            os.sched_setaffinity(int(t), cpus)
            n += 1
        except OSError:
            pass
    return n


def cpu_times():
    """(busy, total, steal) jiffies over every CPU from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v), (v[7] if len(v) > 7 else 0)


def mps_server_pids():
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/comm") as f:
                    if f.read().strip().startswith("nvidia-cuda-mps"):
                        out.append(int(d))
            except OSError:
                pass
    return out


def proc_ticks(pid):
    """utime + stime of a process (clock ticks), or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
        v = s[s.rindex(")") + 2:].split()
        return int(v[11]) + int(v[12])
    except (OSError, ValueError, IndexError):
        return None


class CpuSampler:
    """Samples, every 100 ms inside [t0, t1], the CPU each worker's main thread last ran on."""

    def __init__(self, pids, t0, t1):
        self.pids, self.t0, self.t1, self.samples = pids, t0, t1, []
        self.th = threading.Thread(target=self._run)
        self.th.start()

    def _run(self):
        while time.time() < self.t1:
            if time.time() >= self.t0:
                self.samples.append([proc_cpu(p) for p in self.pids])
            time.sleep(0.1)

    def stop(self, topo):
        self.th.join()
        shared = []
        for s in self.samples:
            cores = [topo.get(c) for c in s if c is not None]
            shared.append(sum(1 for i, x in enumerate(cores) if cores.count(x) > 1 and
                              x is not None) if cores else 0)
        per = [sorted({s[i] for s in self.samples if s[i] is not None})
               for i in range(len(self.pids))]
        return {"n": len(self.samples), "cpus_seen": per,
                "clients_sharing_a_core_mean": (sum(shared) / len(shared)) if shared else None}


def summarise(res, t0, window, reps):
    """Per sub-window: rate and the means of the iteration's parts (microseconds)."""
    it = res["it"]
    out = []
    for i in range(reps):
        a, b = t0 + i * window, t0 + (i + 1) * window
        sub = [x for x in it if a <= x[0] < b]
        n = len(sub)
        rate = (n - 1) / (sub[-1][0] - sub[0][0]) if n >= 3 else n / window
        m = (lambda j: sum(x[j] for x in sub) / n) if n else (lambda j: None)
        out.append({"n": n, "rate": rate, "enq_wall_us": m(1), "enq_cpu_us": m(2),
                    "sync_wall_us": m(3), "sync_cpu_us": m(4)})
    return out


class Run(coloc.Run):
    """coloc.Run's time budget, document and workers (left, save, kill), with this script's
    document and measurements."""
    DOC = "hostcpu.json"

    def __init__(self, args):  # pylint: disable=super-init-not-called
        self.args, self.t0 = args, time.time()
        self.topo = topology()
        lsc = subprocess.run("lscpu; nproc; cat /proc/loadavg", shell=True, capture_output=True,
                             text=True).stdout
        self.doc = {"schema": "slicesim-hostcpu", "schema_version": 1,
                    "script": "calib/coloc/hostcpu.py", "argv": sys.argv[1:],
                    "lead_s": LEAD_S, "window_s": args.window_s, "repeats": args.repeats,
                    "env": coloc.env_info(args.fake), "lscpu": lsc,
                    "topology": {str(c): list(v) for c, v in self.topo.items()},
                    "layouts": layouts(self.topo, args.k), "runs": [], "skipped": [],
                    "errors": []}
        self.util = coloc.Util(args.fake)
        self.live = []
        self.save()

    def measure(self, name, cfg, workers, pins, extra):
        w, reps = self.args.window_s, self.args.repeats
        if self.left() < w * reps + 8:
            self.doc["skipped"].append({"workload": name, "cfg": cfg, "why": "time budget"})
            self.save()
            return
        allcpu = set(self.topo)
        pids = [wk.info["pid"] for wk in workers]
        nthr = [set_affinity(p, set(c) if c else allcpu) for p, c in zip(pids, pins)]
        t_start = time.time() + 0.3
        t_end = t_start + LEAD_S + w * reps
        for wk in workers:
            wk.go(t_start, t_end)
        self.util.start(t_start + LEAD_S, t_end)
        samp = CpuSampler(pids, t_start + LEAD_S, t_end)
        srv = mps_server_pids()
        time.sleep(max(0.0, t_start + LEAD_S - time.time()))
        c0, s0 = cpu_times(), [proc_ticks(p) for p in srv]
        time.sleep(max(0.0, t_end - time.time()))
        c1, s1 = cpu_times(), [proc_ticks(p) for p in srv]
        clients, err = [], None
        for wk, pin in zip(workers, pins):
            try:
                r = wk.result(timeout=w * reps + 120)
            except RuntimeError as e:
                err = str(e)[-1500:]
                break
            subs = summarise(r, t_start + LEAD_S, w, reps)
            clients.append({"workload": wk.name, "pin": pin, "subs": subs, "rusage": r["rusage"],
                            "rate_iter_per_s": sum(s["rate"] for s in subs) / reps})
        u = self.util.stop()
        cs = samp.stop(self.topo)
        for p in pids:
            set_affinity(p, allcpu)
        if err:
            self.doc["errors"].append({"workload": name, "cfg": cfg, "error": err})
            self.save()
            return
        hz = os.sysconf("SC_CLK_TCK")
        span = (c1[1] - c0[1]) or 1
        rec = {"workload": name, "cfg": cfg, "k": len(workers), "t_s": time.time() - self.t0,
               "threads_pinned": nthr, "clients": clients, "nvml_util": u, "cpu_samples": cs,
               "machine_cpu_busy_frac": (c1[0] - c0[0]) / span,
               "machine_cpu_steal_frac": (c1[2] - c0[2]) / span,
               "mps_server_cpu_s": [(b - a) / hz if a is not None and b is not None else None
                                    for a, b in zip(s0, s1)],
               "window_wall_s": w * reps}
        rec.update(extra)
        self.doc["runs"].append(rec)
        self.save()
        r0 = clients[0]["subs"]
        mean = lambda k: sum(s[k] for s in r0 if s[k] is not None) / max(1, len(r0))  # noqa: E731
        print(f"[{time.time() - self.t0:6.1f}s] {name:13s} {cfg:12s} k={len(workers)} "
              f"rate0={clients[0]['rate_iter_per_s']:.1f}/s "
              f"mean={sum(c['rate_iter_per_s'] for c in clients) / len(clients):.1f}/s "
              f"enq={mean('enq_wall_us'):.0f}/{mean('enq_cpu_us'):.0f}us "
              f"sync={mean('sync_wall_us'):.0f}us busy={rec['machine_cpu_busy_frac']:.2f} "
              f"shared={cs['clients_sharing_a_core_mean']}", flush=True)

    def workload(self, name, env):
        k, caps = self.args.k, self.args.caps
        if self.left() < 100:
            self.doc["skipped"].append({"workload": name, "why": "time budget"})
            return
        envs = [env] * k + [dict(env, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(p)) for p in caps]
        ws = [Worker(name, self.args.fake, e) for e in envs]
        self.live += ws
        t = time.time()
        try:
            for wk in ws:
                wk.wait_ready(timeout=240)
        except RuntimeError as e:
            self.doc["errors"].append({"workload": name, "what": "spawn", "error": str(e)[-1500:]})
            self.kill(ws)
            self.save()
            return
        self.doc.setdefault("spawn_s", []).append({"workload": name, "n": len(ws),
                                                   "s": time.time() - t})
        lay = self.doc["layouts"]
        peers, capw = ws[:k], dict(zip(caps, ws[k:]))
        half = max(2, k // 2)
        cfgs = [("peers-unpinned", peers, [None] * k),
                ("peers-spread", peers, lay["spread"]),
                ("peers-packed", peers, lay["packed"]),
                (f"peers{half}-unpinned", peers[:half], [None] * half)]
        cfgs += [(f"cap{p}", [capw[p]], [None]) for p in caps]
        cfgs += [("solo-pinned", peers[:1], [lay["spread"][0]])]
        pos = 0
        self.measure(name, "solo", peers[:1], [None], {"pos": pos})
        for cfg, wks, pins in cfgs:
            pos += 1
            self.measure(name, cfg, wks, pins, {"pos": pos})
            pos += 1
            self.measure(name, "solo", peers[:1], [None], {"pos": pos})
        self.kill(ws)

    def spawn(self, names, env, what):
        ws = [Worker(n, self.args.fake, env) for n in names]
        self.live += ws
        t = time.time()
        try:
            for wk in ws:
                wk.wait_ready(timeout=240)
        except RuntimeError as e:
            self.doc["errors"].append({"what": what, "error": str(e)[-1500:]})
            self.kill(ws)
            self.save()
            return None
        self.doc.setdefault("spawn_s", []).append({"what": what, "n": len(ws),
                                                   "s": time.time() - t})
        return ws

    def burn(self):
        """CPU-only processes (no GPU): a fixed work's rate per process with n = 1..16 of them
        busy at once, for each burner kind; n = 1 again at the end."""
        ncpu = len(self.topo)
        ns = [n for n in self.args.burn_ns if n <= ncpu]
        ns += [1] if ns and ns[-1] != 1 else []
        for kind in ("burn-py", "burn-torch"):
            ws = self.spawn([kind] * max(ns), dict(os.environ), kind)
            if ws is None:
                continue
            for i, n in enumerate(ns):
                self.measure(kind, f"burn{n}", ws[:n], [None] * n, {"pos": i})
            self.kill(ws)

    def nomps(self, name):
        """k clients of one workload without MPS (time-sliced contexts), between two lone ones."""
        k = self.args.k
        ws = self.spawn([name] * k, dict(os.environ), name + " exclusive")
        if ws is None:
            return
        self.measure(name, "excl-solo", ws[:1], [None], {"pos": 0})
        self.measure(name, f"excl-peers{k}", ws, [None] * k, {"pos": 1})
        self.measure(name, "excl-solo", ws[:1], [None], {"pos": 2})
        self.kill(ws)

    def beside(self, name, env, burners):
        """Under MPS: one client beside CPU-only burners (7 interpreter loops, 7 PyTorch CPU
        loops, 15 interpreter loops), and k clients, each between two lone clients."""
        k = self.args.k
        ws = self.spawn([name] * k, env, name + " mps")
        if ws is None:
            return
        py = [b for b in burners if b.name == "burn-py"]
        tc = [b for b in burners if b.name == "burn-torch"]
        cfgs = [(f"beside{k - 1}py", ws[:1] + py[:k - 1]),
                (f"beside{k - 1}torch", ws[:1] + tc[:k - 1]),
                (f"beside{2 * k - 1}py", ws[:1] + py[:2 * k - 1]), (f"peers{k}-unpinned", ws)]
        pos = 0
        self.measure(name, "solo", ws[:1], [None], {"pos": pos})
        for cfg, wks in cfgs:
            pos += 1
            self.measure(name, cfg, wks, [None] * len(wks), {"pos": pos})
            pos += 1
            self.measure(name, "solo", ws[:1], [None], {"pos": pos})
        self.kill(ws)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--budget-s", type=float, default=500)
    ap.add_argument("--fake", action="store_true")
    ap.add_argument("--worker")
    ap.add_argument("--only", default="cnn_infer_b1,cnn_infer_b8,host_loop")
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--caps", default="50,25")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--window-s", type=float, default=1.0)
    ap.add_argument("--mps-dir", default="/tmp/hostcpu-mps")
    ap.add_argument("--burn-ns", default="1,2,4,8,12,16",
                    help="burn: the counts of busy CPU-only processes, in this order (n = 1 "
                    "again at the end)")
    ap.add_argument("--phases", default="peers",
                    help="comma-separated, run in this order: burn (CPU-only processes, no GPU), "
                    "nomps (k clients without MPS), peers (the MPS layouts and caps), beside (an "
                    "MPS client beside CPU-only burners)")
    args = ap.parse_args()
    if args.worker:
        worker_main(args.worker, args.fake)
        return
    args.caps = [int(x) for x in args.caps.split(",") if x]
    args.burn_ns = [int(x) for x in args.burn_ns.split(",") if x]
    coloc.GPU.update(index=0, mps_dir=args.mps_dir)
    os.makedirs(args.out, exist_ok=True)
    atexit.register(coloc.stop_mps)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, lambda *_: sys.exit(130))
    run = Run(args)
    mps_env = coloc.mps_env_of(dict(os.environ))
    phases = args.phases.split(",")
    names = args.only.split(",")
    run.doc["phases"] = phases
    try:
        if "burn" in phases:
            run.burn()
        if "nomps" in phases:
            for name in names:
                run.nomps(name)
        if ({"peers", "beside"} & set(phases)) and coloc.start_mps(mps_env, run.doc, args.fake):
            if "peers" in phases:
                for name in names:
                    run.workload(name, mps_env)
            if "beside" in phases:
                k = args.k
                burners = run.spawn(["burn-py"] * (2 * k - 1) + ["burn-torch"] * (k - 1),
                                    dict(os.environ), "burners")
                for name in names:
                    if burners and run.left() > 60:
                        run.beside(name, mps_env, burners)
                run.kill(burners or [])
    finally:
        run.kill(list(run.live))
        coloc.stop_mps()
        coloc.mps_log_tails(mps_env, run.doc)
        run.save()
    print(f"done: {len(run.doc['runs'])} runs, {len(run.doc['errors'])} errors, "
          f"{len(run.doc['skipped'])} skipped, {time.time() - run.t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
