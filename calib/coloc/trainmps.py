#!/usr/bin/env python3
"""calib/coloc/trainmps.py - what does a training loop pay as a lone MPS client? (issue 25)

Question. In h200-coloc-e (run7) cnn_train ran 32-37 it/s as a lone MPS client (capped or not)
against exclusive solos of 37.8 and 45.1 it/s, tfm_train 20-26 against 22.9 / 24.7, while the
inference and host loops matched (and cnn_infer_b1's MPS solos ran faster than its exclusive
ones). On tables a-d (other machines) the same training loops' MPS solos were not slower. Is
there a cost an MPS client pays per kernel launch, per allocation, on autograd's second thread or
on the GPU, or is it the host draw of windows minutes apart?

How. Per workload five worker processes are started together and kept warm, all pinned to the
same two CPUs while they run (--cpus: main thread and autograd's device thread; every thread of
the worker is pinned for its window and unpinned after), and each waits on its stdin:
E1, E2 exclusive contexts (no MPS pipe), M1, M2 lone MPS clients, C50 an MPS client capped at
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50. They then run one at a time, --rounds rounds of --window-s
windows each, the order rotated every round, so the exclusive and MPS windows alternate seconds
apart on the same CPUs (what drifts on the host hits both alike; E1 against E2 is the
process-to-process spread). Per window, each iteration is split into its phases (training:
zero_grad + forward + loss, backward, optimizer step, the closing synchronisation; inference:
forward, synchronisation), each with its wall time, the main thread's CPU time and the whole
process's CPU time (the rest is autograd's device thread and any other thread), the GPU timeline
between CUDA events recorded at the phase boundaries, per-thread CPU time from /proc/self/task,
getrusage switches, and torch.cuda.memory_stats deltas (device allocations, allocator calls).
Last, each worker runs --prof-iters iterations under torch.profiler (CPU and CUDA): kernels per
iteration, their summed and union busy time, and the count and mean duration of every CUDA
runtime call (cudaLaunchKernel, cudaMalloc, ...) by thread. Never changes MIG mode, clocks,
power limit or compute mode; the MPS control daemon it starts (own pipe and log directories) is
told to quit on every exit path.

usage: python3 calib/coloc/trainmps.py --out DIR [--only cnn_train,tfm_train,cnn_infer_b1]
           [--rounds 6] [--window-s 1.5] [--cpus 2,3] [--budget-s 480] [--fake]
       python3 calib/coloc/trainmps.py --summary RECORD.json
Writes DIR/trainmps.json (rewritten after every workload). --summary prints, per workload and
process, the mean rate over the rounds and its sd, each phase's wall, main-thread and process CPU
time, the closing wait, the second thread's CPU over the main thread's (second_thread_ratio, the
value table.py --host-held --second-thread reads), and the profiler census.
"""
import argparse
import atexit
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coloc  # noqa: E402

CONFIGS = [("E1", "exclusive", None), ("E2", "exclusive", None), ("M1", "mps", None),
           ("M2", "mps", None), ("C50", "mps", 50)]
RUNTIME_CALLS = ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx",
                 "cudaMemcpyAsync", "cudaMemsetAsync", "cudaMalloc", "cudaFree",
                 "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventRecord",
                 "cudaStreamWaitEvent", "cudaEventQuery", "cudaStreamIsCapturing",
                 "cudaGetDevice", "cudaSetDevice", "cudaPeekAtLastError", "cudaGetLastError",
                 "cudaFuncGetAttributes", "cudaOccupancyMaxActiveBlocksPerMultiprocessor")


# ---------------------------------------------------------------- worker side

def phased(name, fake):
    """Returns (phases, step_parts): step_parts is a list of callables, one per phase, the last
    one the closing synchronisation."""
    if fake:
        return ["fwd", "bwd", "opt", "sync"], [lambda: time.sleep(0.003), lambda: time.sleep(0.002),
                                             lambda: time.sleep(0.001), lambda: time.sleep(0.001)]
    import torch
    torch.set_num_threads(1)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    dev = torch.device("cuda")
    torch.manual_seed(1234)
    batch = coloc.WORKLOADS[name][1]
    bf16 = dict(device_type="cuda", dtype=torch.bfloat16)
    st = {}
    sync = torch.cuda.synchronize
    if name in ("cnn_train", "tfm_train"):
        if name == "cnn_train":
            import torchvision
            model = torchvision.models.resnet50(weights=None).to(dev).to(
                memory_format=torch.channels_last)
            x = torch.randn(batch, 3, 224, 224, device=dev).to(memory_format=torch.channels_last)
            y = torch.randint(0, 1000, (batch,), device=dev)
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            lossf = torch.nn.CrossEntropyLoss()

            def fwd():
                opt.zero_grad(set_to_none=True)
                with torch.autocast(**bf16):
                    st["loss"] = lossf(model(x), y)
        else:
            import transformers
            cfg = transformers.BertConfig()
            model = transformers.BertForSequenceClassification(cfg).to(dev)
            ids = torch.randint(0, cfg.vocab_size, (batch, 128), device=dev)
            labels = torch.randint(0, 2, (batch,), device=dev)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-5)

            def fwd():
                opt.zero_grad(set_to_none=True)
                with torch.autocast(**bf16):
                    st["loss"] = model(input_ids=ids, labels=labels).loss

        def bwd():
            st["loss"].backward()

        def ostep():
            opt.step()
        return ["fwd", "bwd", "opt", "sync"], [fwd, bwd, ostep, sync]
    if name.startswith("cnn_infer"):
        import torchvision
        model = torchvision.models.resnet50(weights=None).to(dev).to(
            memory_format=torch.channels_last).eval()
        x = torch.randn(batch, 3, 224, 224, device=dev).to(memory_format=torch.channels_last)

        def fwd():
            with torch.no_grad(), torch.autocast(**bf16):
                model(x)
        return ["fwd", "sync"], [fwd, sync]
    raise SystemExit(f"trainmps.py: no phased form of workload {name}")


def thread_ticks():
    """{tid: (comm, utime + stime ticks)} of this process's threads."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                s = f.read()
            comm = s[s.index("(") + 1:s.rindex(")")]
            fl = s[s.rindex(")") + 2:].split()
            out[tid] = (comm, int(fl[11]) + int(fl[12]))
        except (OSError, ValueError, IndexError):
            pass
    return out


def mem_stats(fake):
    if fake:
        return {}
    import torch
    s = torch.cuda.memory_stats()
    keys = ("num_alloc_retries", "num_device_alloc", "num_device_free", "num_sync_all_streams",
            "allocation.all.allocated", "allocation.all.freed", "segment.all.allocated")
    return {k: s.get(k, 0) for k in keys}


def run_window(phases, parts, seconds, fake):
    import statistics
    ev = None
    if not fake:
        import torch
        ev = [torch.cuda.Event(enable_timing=True) for _ in phases]
    for _ in range(3):          # the window's first iterations: not counted
        for p in parts:
            p()
    n = len(phases)
    wall = [[] for _ in range(n)]
    cpu = [[] for _ in range(n)]
    pcpu = [[] for _ in range(n)]
    gpu = [[] for _ in range(n - 1)]
    ru0 = resource.getrusage(resource.RUSAGE_SELF)
    tt0 = thread_ticks()
    ms0 = mem_stats(fake)
    t_end = time.perf_counter() + seconds
    t0 = time.perf_counter()
    iters = 0
    while True:
        a, ac, ap = time.perf_counter(), time.thread_time(), time.process_time()
        for i, p in enumerate(parts):
            if ev is not None:
                ev[i].record()
            p()
            b, bc, bp = time.perf_counter(), time.thread_time(), time.process_time()
            wall[i].append(b - a)
            cpu[i].append(bc - ac)
            pcpu[i].append(bp - ap)
            a, ac, ap = b, bc, bp
        if ev is not None:
            # ev[i] opens phase i on the GPU's timeline (the last one: the closing sync)
            for i in range(n - 1):
                gpu[i].append(ev[i].elapsed_time(ev[i + 1]) * 1e-3)
        iters += 1
        if a >= t_end:
            break
    t1 = time.perf_counter()
    ru1 = resource.getrusage(resource.RUSAGE_SELF)
    tt1 = thread_ticks()
    ms1 = mem_stats(fake)
    hz = os.sysconf("SC_CLK_TCK")
    threads = {}
    for tid, (comm, t) in tt1.items():
        d = t - tt0.get(tid, (comm, 0))[1]
        if d:
            threads[f"{comm}:{tid}"] = round(d / hz / iters, 6)
    med = lambda v: statistics.median(v) if v else 0.0   # noqa: E731
    mean = lambda v: sum(v) / len(v) if v else 0.0      # noqa: E731
    return {
        "iters": iters, "seconds": t1 - t0, "rate_iter_per_s": iters / (t1 - t0),
        "phases": phases,
        "wall_s_mean": [mean(v) for v in wall], "wall_s_median": [med(v) for v in wall],
        "main_cpu_s_mean": [mean(v) for v in cpu], "proc_cpu_s_mean": [mean(v) for v in pcpu],
        "gpu_span_s_mean": [mean(v) for v in gpu],
        "thread_cpu_s_per_iter": threads,
        "rusage_per_iter": {"utime": (ru1.ru_utime - ru0.ru_utime) / iters,
                            "stime": (ru1.ru_stime - ru0.ru_stime) / iters,
                            "nvcsw": (ru1.ru_nvcsw - ru0.ru_nvcsw) / iters,
                            "nivcsw": (ru1.ru_nivcsw - ru0.ru_nivcsw) / iters},
        "mem_stats_delta_per_iter": {k: (ms1[k] - ms0[k]) / iters for k in ms1},
        "cpu_last": coloc_cpu(),
    }


def coloc_cpu():
    try:
        with open("/proc/self/stat") as f:
            s = f.read()
        return int(s[s.rindex(")") + 2:].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def profile(parts, iters, fake):
    if fake:
        return {"kernels_per_iter": 0, "fake": True}
    import torch
    from torch.profiler import ProfilerActivity, profile as tprofile
    try:
        with tprofile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(iters):
                for p in parts:
                    p()
        torch.cuda.synchronize()
        iv, calls = [], {}
        for e in prof.events():
            dt = str(getattr(e, "device_type", "")).lower()
            d = e.time_range.end - e.time_range.start
            if "cuda" in dt:
                nm = e.name.lower()
                if not (nm.startswith("memcpy") or nm.startswith("memset")) and d > 0:
                    iv.append((e.time_range.start, e.time_range.end))
                continue
            if e.name in RUNTIME_CALLS or e.name.startswith("cuda") or e.name.startswith("cu"):
                c = calls.setdefault(e.name, {"n": 0, "us": 0.0, "threads": {}})
                c["n"] += 1
                c["us"] += d
                th = str(getattr(e, "thread", ""))
                c["threads"][th] = c["threads"].get(th, 0) + 1
        iv.sort()
        busy = coloc.union_length(iv)
        return {"iters": iters, "kernels_per_iter": len(iv) / iters,
                "kernel_s_per_iter": sum(b - a for a, b in iv) * 1e-6 / iters,
                "busy_s_per_iter": busy * 1e-6 / iters,
                "runtime_calls_per_iter": {k: {"n": v["n"] / iters, "mean_us": v["us"] / v["n"],
                                               "threads": v["threads"]}
                                           for k, v in sorted(calls.items())}}
    except Exception as e:  # noqa: BLE001
        return {"error": repr(e)[-500:]}


def pin_all(cpus):
    """Every thread of this process (main, autograd's device thread, CUDA's) onto cpus."""
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass


def worker_main(name, fake, cpus, prof_iters):
    every = os.sched_getaffinity(0)
    phases, parts = phased(name, fake)
    t0 = time.time()
    while time.time() - t0 < 2.0:     # warm-up: cudnn.benchmark, the allocator's pool
        for p in parts:
            p()
    info = {"ready": True, "pid": os.getpid()}
    if not fake:
        import torch
        info["sms"] = torch.cuda.get_device_properties(0).multi_processor_count
    print(json.dumps(info), flush=True)
    for line in sys.stdin:
        w = line.split()
        if not w or w[0] == "quit":
            break
        if w[0] == "run":
            if cpus:                  # only while this worker runs: the others wait unpinned
                pin_all(cpus)
            res = run_window(phases, parts, float(w[1]), fake)
            if cpus:
                pin_all(every)
            print(json.dumps(res), flush=True)
        elif w[0] == "prof":
            print(json.dumps(profile(parts, prof_iters, fake)), flush=True)


# ---------------------------------------------------------------- driver side

def second_thread_ratio(windows):
    """Mean over windows of (process CPU - main-thread CPU) / main-thread CPU per iteration: the
    CPU time of the threads other than the main one (autograd's device thread) per unit of the
    main thread's, and its sd over the windows."""
    import statistics
    rs = []
    for w in windows:
        main = sum(w["main_cpu_s_mean"])
        if main > 0:
            rs.append((sum(w["proc_cpu_s_mean"]) - main) / main)
    return (statistics.mean(rs), statistics.stdev(rs) if len(rs) > 1 else 0.0) if rs else (0.0, 0.0)


def summary(path):
    import statistics as st
    with open(path) as f:
        d = json.load(f)
    print(f"# {path}: {d['env'].get('gpu')} {d['env'].get('uuid')} driver {d['env'].get('driver')}, "
          f"{d['rounds']} rounds x {d['window_s']} s, CPUs {d['cpus']}")
    for name, rec in d["workloads"].items():
        by = {}
        for w in rec["windows"]:
            by.setdefault(w["tag"], []).append(w)
        if not by:
            continue
        ph = next(iter(by.values()))[0]["phases"]
        e = [w["rate_iter_per_s"] for t in ("E1", "E2") for w in by.get(t, [])]
        m = [w["rate_iter_per_s"] for t in ("M1", "M2") for w in by.get(t, [])]
        allw = rec["windows"]
        it = [1.0 / w["rate_iter_per_s"] for w in allw]
        pc = [sum(w["proc_cpu_s_mean"]) for w in allw]
        rho, rho_sd = second_thread_ratio(allw)
        print(f"{name}: MPS / exclusive {st.mean(m) / st.mean(e):.3f}; iteration / process CPU "
              f"{st.mean(i / c for i, c in zip(it, pc)):.4f} (sd {st.stdev(i / c for i, c in zip(it, pc)):.4f}),"
              f" iteration sd {st.stdev(it) / st.mean(it):.3f}; second_thread_ratio {rho:.3f} (sd {rho_sd:.3f})")
        for tag, ws in by.items():
            r = [w["rate_iter_per_s"] for w in ws]
            cols = []
            for i, p in enumerate(ph):
                cols.append(f"{p} {st.mean(w['wall_s_mean'][i] for w in ws) * 1e3:.2f}/"
                            f"{st.mean(w['main_cpu_s_mean'][i] for w in ws) * 1e3:.2f}/"
                            f"{st.mean(w['proc_cpu_s_mean'][i] for w in ws) * 1e3:.2f}")
            pr = rec["profile"].get(tag, {})
            rc = pr.get("runtime_calls_per_iter", {})
            lk = rc.get("cudaLaunchKernel", {})
            sd = st.stdev(r) / st.mean(r) if len(r) > 1 else 0.0
            print(f"  {tag:3s} {st.mean(r):6.1f} it/s (sd {sd:.2f})  "
                  f"ms wall/main CPU/process CPU: {'  '.join(cols)}  | kernels {pr.get('kernels_per_iter', 0):.0f}"
                  f" GPU {pr.get('kernel_s_per_iter', 0) * 1e3:.2f} ms busy {pr.get('busy_s_per_iter', 0) * 1e3:.2f} ms"
                  f" cudaLaunchKernel {lk.get('n', 0):.0f} x {lk.get('mean_us', 0):.2f} us")


class Worker:
    def __init__(self, tag, name, env, args):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", name,
               "--cpus", args.cpus, "--prof-iters", str(args.prof_iters)]
        if args.fake:
            cmd.append("--fake")
        self.tag, self.name = tag, name
        self.p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.ready = None

    def wait_ready(self, timeout):
        line = coloc.read_line(self.p, timeout)
        self.ready = json.loads(line) if line else None
        return self.ready is not None

    def ask(self, cmd, timeout):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        line = coloc.read_line(self.p, timeout)
        return json.loads(line) if line else {"error": "no answer"}

    def stop(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
            self.p.wait(timeout=20)
        except Exception:  # noqa: BLE001
            self.p.kill()
            self.p.wait()

    def stderr_tail(self):
        try:
            return self.p.stderr.read()[-1500:]
        except Exception:  # noqa: BLE001
            return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--only", default="cnn_train,tfm_train,cnn_infer_b1")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--window-s", type=float, default=1.5)
    ap.add_argument("--cpus", default="2,3")
    ap.add_argument("--prof-iters", type=int, default=5)
    ap.add_argument("--budget-s", type=float, default=480)
    ap.add_argument("--mps-dir", default="/tmp/trainmps-mps")
    ap.add_argument("--fake", action="store_true")
    ap.add_argument("--worker")
    ap.add_argument("--summary")
    args = ap.parse_args()
    if args.summary:
        summary(args.summary)
        return
    if args.worker:
        cpus = {int(c) for c in args.cpus.split(",") if c} if args.cpus else None
        if cpus:
            cpus &= os.sched_getaffinity(0)
        worker_main(args.worker, args.fake, cpus or None, args.prof_iters)
        return
    t_start = time.time()
    coloc.GPU["mps_dir"] = args.mps_dir
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    env.pop("CUDA_MPS_PIPE_DIRECTORY", None)
    env.pop("CUDA_MPS_LOG_DIRECTORY", None)
    excl_env = dict(env, CUDA_MPS_PIPE_DIRECTORY=args.mps_dir + "-nodaemon")
    mps_env = coloc.mps_env_of(env)
    doc = {"schema": "slicesim-trainmps", "schema_version": 1, "script": "calib/coloc/trainmps.py",
           "argv": sys.argv[1:], "t_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "configs": [c[0] for c in CONFIGS], "rounds": args.rounds, "window_s": args.window_s,
           "cpus": args.cpus, "env": coloc.env_info(args.fake), "workloads": {}, "errors": []}
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "trainmps.json")

    def save():
        doc["elapsed_s"] = time.time() - t_start
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(path + ".tmp", path)
    atexit.register(coloc.stop_mps)
    try:
        if not coloc.start_mps(mps_env, doc, args.fake):
            doc["errors"].append("MPS daemon did not start")
            save()
            return
        for name in args.only.split(","):
            left = args.budget_s - (time.time() - t_start)
            need = 40 + args.rounds * len(CONFIGS) * (args.window_s + 1.0)
            if left < need:
                doc["errors"].append(f"{name}: skipped, {left:.0f} s left of the budget")
                continue
            ws = []
            for tag, sharing, cap in CONFIGS:
                e = excl_env if sharing == "exclusive" else dict(mps_env)
                if cap is not None:
                    e["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] = str(cap)
                ws.append(Worker(tag, name, e, args))
            ok = [w.wait_ready(120) for w in ws]
            rec = {"ready": {w.tag: w.ready for w in ws}, "windows": [], "profile": {}}
            doc["workloads"][name] = rec
            if not all(ok):
                rec["stderr"] = {w.tag: w.stderr_tail() for w in ws if not w.ready}
                for w in ws:
                    w.stop()
                save()
                continue
            rec["mps_servers"] = None if args.fake else coloc.mps_server_list(mps_env)
            for r in range(args.rounds):
                for j in range(len(ws)):
                    w = ws[(j + r) % len(ws)]
                    res = w.ask(f"run {args.window_s}", 60 + 4 * args.window_s)
                    res.update(tag=w.tag, round=r, t_s=time.time() - t_start)
                    rec["windows"].append(res)
                    print(name, w.tag, r, round(res.get("rate_iter_per_s", 0), 2), flush=True)
            for w in ws:
                rec["profile"][w.tag] = w.ask("prof", 120)
            for w in ws:
                w.stop()
            save()
    finally:
        coloc.mps_log_tails(mps_env, doc)
        coloc.stop_mps()
        save()


if __name__ == "__main__":
    main()
