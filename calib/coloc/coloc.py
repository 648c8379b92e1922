#!/usr/bin/env python3
"""calib/coloc/coloc.py - co-location table of real PyTorch workloads on one GPU.

Measures, for each workload below (random weights and data, nothing downloaded):
  solo throughput with NVML GPU utilisation; k identical processes time-sliced (k = 2, 4, 8);
  k identical MPS clients (k = 2, 4, 8); one MPS client alone capped at 25 % and 50 %
  (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE); heterogeneous pairs under time-slicing and under MPS.

How. Worker processes load their workload once, warm up, then wait on their stdin for
"go T_START T_END": they spin until T_START, iterate (every iteration ends with a device
synchronisation, as a loop that reads its loss does) until T_END + tail, and report the
completion times of the iterations that end in [T_START + LEAD, T_END]. All processes of one
configuration share the same window, so each is measured while all the others run. The window
(after the lead) is REPEATS contiguous sub-windows of WINDOW_S seconds each (schema 2); each
sub-window gives one throughput (n - 1) / (last - first) over its completions, and the record
keeps all of them (rate_reps) beside their mean, so the table carries the spread; beside them,
host_cpu_s_reps: per sub-window the mean host CPU time (the worker thread's) of an iteration up to
its closing synchronisation, i.e. the host's enqueue part without the wait (None with --fake), so
that a row's host part can be held against its solo's (issue 25: the launch-bound loops' rates
follow it, docs/validation.md "Host CPUs under many clients and caps"). Each workload's
solo run is measured at the start of its phase and again at the end of the whole invocation
(solo_end): the difference is the drift over the run. NVML utilisation is polled every 50 ms
inside the window by the coordinator, and NVML GPM (Hopper: SM activity, SM occupancy, DRAM
bandwidth utilisation) is read over the whole window where the driver supports it. Before its solo
run, each workload is profiled alone (torch.profiler over PROF_ITERS iterations): CUDA kernels per
iteration, the union of their busy intervals per iteration and the mean kernel duration; with
phase census also its GPU tail (tail_census: the GPU time left when the host has issued the
iteration's last launch, i.e. the wait in the closing synchronisation). The MPS daemon uses a private pipe directory and is
stopped on every exit path (atexit and signals). The GPU's mode, clocks, power limit and MIG
layout are never touched.

Cap blocks (--phases capblock, run4). For the workloads of the invocation, in this order and
--blocks times over: every workload alone without MPS (exclusive solo, the daemon not running);
then, with the daemon started, per workload one uncapped MPS client alone, the same at
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE 50, then 25, then the uncapped client again; then the daemon is
stopped and every workload runs alone without MPS again (this closing exclusive solo also opens
the next block). Each record carries "block": {"id", "step"} (step 0..5 in that order, the
closing exclusive solo of block b being step 5 of b). A block thus brackets each workload's caps
with its exclusive and its single-client MPS baselines, minutes apart at most. The MPS workers
of a workload (uncapped, 50, 25) are separate processes, spawned together and kept idle while
another is measured; the exclusive workers are spawned anew after the daemon has quit, and the
GPU's compute processes are listed (NVML) before each exclusive window ("gpu_procs").

Usage:  python3 calib/coloc/coloc.py --out DIR [--budget-s 540] [--fake] [--only W1,W2]
            [--phases census,ts,pairs-ts,caps,capsweep,mps,pairs-mps,capblock,bracket]
            [--repeats 3] [--window-s 3] [--blocks 1] [--gpu 0] [--mps-dir /tmp/coloc-mps]
        (--fake: CPU sleep workloads and no NVML, to test the coordination without a GPU)
Phases: census = only the kernel census and the GPU tail (tail_census) of each workload alone;
ts = solo + k time-sliced peers; pairs-ts / pairs-mps = the PAIRS; caps = one client
alone at each of CAPS; capsweep = the stream alone at SWEEP_CAPS (its bandwidth against the SM
cap); mps = k MPS clients (and one uncapped MPS client alone); capblock = the cap blocks above
(before the other MPS phases); bracket = Run.bracket (caps 75/50/25 % and 2/3/4/6/8 clients, each
between two solos of the same MPS client; exclusive solos before and after; census first).
Two GPUs at once (run_x2.sh): one invocation per GPU, each with CUDA_VISIBLE_DEVICES=N, --gpu N
and its own --mps-dir, so that each has its own MPS control daemon.
Output: DIR/coloc.json (rewritten after every measurement, so a cut-off run keeps what it had).
"""
import argparse
import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

LEAD_S = 0.5   # not counted: lets the co-runners reach their steady schedule
TAIL_S = 0.3   # keep running after the window so nobody's last iteration runs alone
WINDOW_S = 3.0  # one sub-window (--window-s)
REPEATS = 3     # contiguous sub-windows per configuration (--repeats)
PROF_ITERS = 5  # iterations under torch.profiler for the kernel census
# CPU time per iteration spent before the first kernel launch, by workload (the others launch
# straight away): the previous iteration ended with a synchronisation, so this time cannot overlap
# the workload's own GPU work (calib/coloc/table.py writes it as the column serial_host_s)
SERIAL_HOST_S = {"host_loop": 0.004}

# name -> (description, batch, unit). The code of each is in build_workload().
WORKLOADS = {
    "cnn_train": ("ResNet-50 training, bf16 autocast, SGD, channels_last", 32, "sample"),
    "tfm_train": ("BERT-base (transformers BertForSequenceClassification) training, seq 128, "
                  "bf16 autocast, AdamW", 16, "sample"),
    "cnn_infer_b1": ("ResNet-50 inference, batch 1, bf16 autocast (launch-bound)", 1, "sample"),
    "cnn_infer_b8": ("ResNet-50 inference, batch 8, bf16 autocast", 8, "sample"),
    "cnn_infer_b128": ("ResNet-50 inference, batch 128, bf16 autocast", 128, "sample"),
    "tfm_infer": ("GPT-2 small (transformers GPT2LMHeadModel) forward, seq 512, bf16", 4,
                  "sample"),
    "host_loop": ("4-layer MLP (2048 wide) training step after 4 ms of CPU work per "
                  "iteration (host-bound)", 64, "sample"),
    "stream": ("memory-bound: 8 x (y = a x + y) over 256 MiB fp32 tensors", 1, "iteration"),
}

PAIRS = [("cnn_train", "tfm_train"), ("cnn_train", "host_loop"), ("tfm_train", "cnn_infer_b1"),
         ("cnn_infer_b128", "stream"), ("tfm_infer", "host_loop"), ("cnn_train", "stream"),
         # every other workload beside the memory stream: its sensitivity to a saturating grid
         ("cnn_infer_b1", "stream"), ("tfm_train", "stream"), ("tfm_infer", "stream"),
         ("host_loop", "stream")]
KS = [2, 4, 8]
CAPS = [25, 50]
SWEEP_CAPS = [5, 10, 15]
BRACKET_CAPS = [75, 50, 25]      # --phases bracket: thread caps, each between two solos
BRACKET_KS = [2, 3, 4, 6, 8]     # --phases bracket: identical MPS clients, each between two solos
GPU = {"index": 0, "mps_dir": "/tmp/coloc-mps"}   # --gpu (NVML index), --mps-dir


# ---------------------------------------------------------------- worker side

def build_workload(name, fake):
    """Returns step(): one iteration, ending with a device synchronisation."""
    if fake:
        dur = {"host_loop": 0.006}.get(name, 0.004)
        return lambda: time.sleep(dur)
    import torch
    torch.set_num_threads(1)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    dev = torch.device("cuda")
    torch.manual_seed(1234)
    batch = WORKLOADS[name][1]
    bf16 = dict(device_type="cuda", dtype=torch.bfloat16)
    if name.startswith("cnn"):
        import torchvision
        model = torchvision.models.resnet50(weights=None).to(dev).to(memory_format=torch.channels_last)
        x = torch.randn(batch, 3, 224, 224, device=dev).to(memory_format=torch.channels_last)
        if name == "cnn_train":
            y = torch.randint(0, 1000, (batch,), device=dev)
            opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            lossf = torch.nn.CrossEntropyLoss()

            def step():
                opt.zero_grad(set_to_none=True)
                with torch.autocast(**bf16):
                    loss = lossf(model(x), y)
                loss.backward()
                opt.step()
                torch.cuda.synchronize()
            return step
        model.eval()

        def step():
            with torch.no_grad(), torch.autocast(**bf16):
                model(x)
            torch.cuda.synchronize()
        return step
    if name == "tfm_train":
        import transformers
        cfg = transformers.BertConfig()
        model = transformers.BertForSequenceClassification(cfg).to(dev)
        ids = torch.randint(0, cfg.vocab_size, (batch, 128), device=dev)
        labels = torch.randint(0, 2, (batch,), device=dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast(**bf16):
                out = model(input_ids=ids, labels=labels)
            out.loss.backward()
            opt.step()
            torch.cuda.synchronize()
        return step
    if name == "tfm_infer":
        import transformers
        cfg = transformers.GPT2Config()
        model = transformers.GPT2LMHeadModel(cfg).to(dev).eval()
        ids = torch.randint(0, cfg.vocab_size, (batch, 512), device=dev)

        def step():
            with torch.no_grad(), torch.autocast(**bf16):
                model(input_ids=ids)
            torch.cuda.synchronize()
        return step
    if name == "host_loop":
        import numpy as np
        layers = []
        for _ in range(4):
            layers += [torch.nn.Linear(2048, 2048), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers).to(dev)
        x = torch.randn(batch, 2048, device=dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        host = np.random.default_rng(1).standard_normal((256, 256))

        def step():
            t_end = time.perf_counter() + SERIAL_HOST_S["host_loop"]
            while time.perf_counter() < t_end:   # CPU work: data preparation stand-in
                host.sum()
            opt.zero_grad(set_to_none=True)
            model(x).square().mean().backward()
            opt.step()
            torch.cuda.synchronize()
        return step
    if name == "stream":
        n = 64 * 1024 * 1024
        xs = torch.randn(n, device=dev)
        ys = torch.randn(n, device=dev)

        def step():
            for _ in range(8):
                ys.add_(xs, alpha=0.5)
            torch.cuda.synchronize()
        return step
    raise SystemExit(f"unknown workload {name}")


def union_length(iv):
    """The length covered by the sorted intervals iv ((start, end) pairs): overlaps counted once."""
    busy, cur0, cur1 = 0.0, None, None
    for a, b in iv:
        if cur1 is None or a > cur1:
            if cur1 is not None:
                busy += cur1 - cur0
            cur0, cur1 = a, b
        else:
            cur1 = max(cur1, b)
    if cur1 is not None:
        busy += cur1 - cur0
    return busy


def kernel_census(step, fake):
    """Kernels per iteration, their busy time (union of intervals) and mean duration, from
    torch.profiler over PROF_ITERS iterations of this process alone."""
    if fake:
        return {"kernels_per_iter": 10.0, "busy_s_per_iter": 0.001, "kernel_s_per_iter": 0.001,
                "mean_kernel_s": 1e-4, "iters": PROF_ITERS}
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(PROF_ITERS):
                step()
        iv = []
        for e in prof.events():
            dt = str(getattr(e, "device_type", "")).lower()
            if "cuda" not in dt:
                continue
            nm = e.name.lower()
            if nm.startswith("memcpy") or nm.startswith("memset"):
                continue
            t0 = e.time_range.start
            t1 = e.time_range.end
            if t1 > t0:
                iv.append((t0, t1))
        iv.sort()
        busy = union_length(iv)
        tot = sum(b - a for a, b in iv)
        durs = sorted(b - a for a, b in iv)
        q = (lambda f: durs[min(len(durs) - 1, int(f * len(durs)))] * 1e-6) if durs else (lambda f: 0)
        return {"kernels_per_iter": len(iv) / PROF_ITERS, "busy_s_per_iter": busy * 1e-6 / PROF_ITERS,
                "kernel_s_per_iter": tot * 1e-6 / PROF_ITERS,
                "mean_kernel_s": tot * 1e-6 / len(iv) if iv else 0,
                "median_kernel_s": q(0.5), "p90_kernel_s": q(0.9), "max_kernel_s": q(1.0),
                "iters": PROF_ITERS}
    except Exception as e:  # noqa: BLE001
        return {"error": repr(e)[-500:]}


TAIL_MIN_ITERS = 30  # iterations timed for the tail (and at least TAIL_MIN_S seconds of them)
TAIL_MIN_S = 1.0


def host_wait_split(step, iters, min_s=0.0):
    """Times `iters` iterations (and at least min_s seconds of them) of step() alone, each split
    at the call of its closing torch.cuda.synchronize(): the host's enqueue time (Python,
    dispatch, every launch) and the wait in that synchronisation. Returns (enqueue, iteration)
    lists of seconds."""
    import torch
    real_sync = torch.cuda.synchronize
    mark = {}

    def sync(*a, **k):
        mark["enq"] = time.perf_counter()
        real_sync(*a, **k)
    torch.cuda.synchronize = sync
    try:
        host, it = [], []
        t_stop = time.perf_counter() + min_s
        while len(it) < iters or time.perf_counter() < t_stop:
            a = time.perf_counter()
            step()
            b = time.perf_counter()
            host.append(mark["enq"] - a)
            it.append(b - a)
        return host, it
    finally:
        torch.cuda.synchronize = real_sync


def trace_tail(step):
    """From one torch.profiler trace (CPU runtime calls and CUDA activity on kineto's common
    clock) of PROF_ITERS iterations: per iteration, the GPU time after the end of the last
    launch call before the closing cudaDeviceSynchronize (last GPU activity's end minus that
    launch's end) and the duration of the GPU activity that ends last; means per iteration."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(PROF_ITERS):
            step()
    gpu, launch, dsync, other_sync = [], [], [], 0
    for e in prof.events():
        t0, t1, nm = e.time_range.start, e.time_range.end, e.name
        if "cuda" in str(getattr(e, "device_type", "")).lower():
            gpu.append((t1, t1 - t0))
        elif nm.startswith("cu") and ("Launch" in nm or "Memcpy" in nm or "Memset" in nm):
            launch.append(t1)
        elif nm.startswith("cudaDeviceSynchronize"):
            dsync.append((t0, t1))
        elif nm.startswith("cu") and "Synchronize" in nm:
            other_sync += 1
    dsync.sort()
    tails, lasts, prev = [], [], float("-inf")
    for s0, s1 in dsync:
        la = [t for t in launch if prev < t <= s0]
        gp = [g for g in gpu if prev < g[0] <= s1]
        if la and gp:
            end, dur = max(gp)
            tails.append(max(0.0, end - max(la)) * 1e-6)
            lasts.append(dur * 1e-6)
        prev = s1
    if not tails:
        return {"trace_error": f"no iteration found ({len(dsync)} device syncs, {len(launch)} "
                               f"launch calls, {len(gpu)} GPU activities)"}
    return {"trace_tail_s_per_iter": sum(tails) / len(tails),
            "trace_last_gpu_s": sum(lasts) / len(lasts), "trace_iters": len(tails),
            "other_syncs_per_iter": other_sync / PROF_ITERS}


def tail_census(step, fake, busy_s):
    """The iteration's GPU tail: the GPU time still to run when the host has issued the
    iteration's last launch, i.e. the wait in the closing synchronisation (host_wait_split,
    no profiler) less the latency of a synchronisation on an idle GPU; mean per iteration, and
    as a fraction of the census' GPU busy time per iteration (tail_frac). Beside it, the same
    tail read from a profiler trace (trace_tail)."""
    if fake:
        return {"tail_s_per_iter": 0.0005, "tail_frac": min(1.0, 0.0005 / busy_s),
                "sync_idle_s": 1e-5, "tail_iters": TAIL_MIN_ITERS}
    import statistics
    import torch
    torch.cuda.synchronize()
    idle = []
    for _ in range(50):
        a = time.perf_counter()
        torch.cuda.synchronize()
        idle.append(time.perf_counter() - a)
    sync_idle = statistics.median(idle)
    host, it = host_wait_split(step, TAIL_MIN_ITERS, TAIL_MIN_S)
    wait = [b - a for a, b in zip(host, it)]
    tail = max(0.0, sum(wait) / len(wait) - sync_idle)
    out = {"tail_s_per_iter": tail, "tail_s_median": max(0.0, statistics.median(wait) - sync_idle),
           "tail_frac": min(1.0, tail / busy_s) if busy_s > 0 else None,
           "sync_idle_s": sync_idle, "host_enqueue_s_per_iter": sum(host) / len(host),
           "iter_s_per_iter": sum(it) / len(it), "tail_iters": len(it)}
    try:
        out.update(trace_tail(step))
    except Exception as e:  # noqa: BLE001
        out["trace_error"] = repr(e)[-500:]
    return out


# the host thread's CPU time (time.thread_time) when the iteration's closing
# torch.cuda.synchronize() is called: minus the time at the iteration's start, the host's enqueue
# CPU time (Python, dispatch, every launch), apart from the wait in the synchronisation
ENQ = {"cpu": None}


def mark_enqueue():
    """Wraps torch.cuda.synchronize so that every call records ENQ['cpu'] first."""
    import torch
    real_sync = torch.cuda.synchronize

    def sync(*a, **k):
        ENQ["cpu"] = time.thread_time()
        real_sync(*a, **k)
    torch.cuda.synchronize = sync


def worker_main(name, fake):
    step = build_workload(name, fake)
    if not fake:
        mark_enqueue()
    t0 = time.time()
    while time.time() - t0 < 1.2:   # warm-up: cudnn autotuning, allocator, clocks
        step()
    mem = 0
    if not fake:
        import torch
        mem = torch.cuda.max_memory_allocated()
    print(json.dumps({"ready": True, "pid": os.getpid(), "max_mem_bytes": mem}), flush=True)
    for line in sys.stdin:
        parts = line.split()
        if not parts or parts[0] == "quit":
            break
        if parts[0] == "prof":
            cen = kernel_census(step, fake)
            if len(parts) > 1 and parts[1] == "tail" and "busy_s_per_iter" in cen:
                cen.update(tail_census(step, fake, cen["busy_s_per_iter"]))
            print(json.dumps({"census": cen}), flush=True)
            continue
        t_start, t_end = float(parts[1]), float(parts[2])
        while time.time() < t_start:
            pass
        done, host = [], []
        while True:
            c0 = time.thread_time()
            step()
            now = time.time()
            if now > t_end + TAIL_S:
                break
            if t_start + LEAD_S <= now <= t_end:
                done.append(now)
                host.append(ENQ["cpu"] - c0 if ENQ["cpu"] is not None else None)
        print(json.dumps({"done": done, "host_cpu_s": host}), flush=True)


# ---------------------------------------------------------------- coordinator side

class Worker:
    def __init__(self, name, fake, env, script=__file__):
        """A worker process running `script --worker name` (this file, or a script that imports
        it and adds its own lead and tail)."""
        cmd = [sys.executable, os.path.abspath(script), "--worker", name] + (["--fake"] if fake else [])
        self.name = name
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env)
        self.info = None

    def wait_ready(self, timeout):
        line = read_line(self.p, timeout)
        if line is None:
            raise RuntimeError(f"{self.name}: no ready line; stderr: {self.stderr_tail()}")
        self.info = json.loads(line)

    def stderr_tail(self):
        try:
            self.p.kill()
            return self.p.stderr.read()[-2000:]
        except Exception as e:  # noqa: BLE001
            return str(e)

    def go(self, t_start, t_end):
        self.p.stdin.write(f"go {t_start} {t_end}\n")
        self.p.stdin.flush()

    def result(self, timeout):
        """(completion times, host enqueue CPU seconds of each, None in --fake)."""
        line = read_line(self.p, timeout)
        if line is None:
            raise RuntimeError(f"{self.name}: no result; stderr: {self.stderr_tail()}")
        r = json.loads(line)
        return r["done"], r.get("host_cpu_s") or [None] * len(r["done"])

    def census(self, timeout, tail=False):
        self.p.stdin.write("prof tail\n" if tail else "prof\n")
        self.p.stdin.flush()
        line = read_line(self.p, timeout)
        if line is None:
            raise RuntimeError(f"{self.name}: no census; stderr: {self.stderr_tail()}")
        return json.loads(line)["census"]

    def stop(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.flush()
        except Exception:  # noqa: BLE001
            pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()


def read_line(p, timeout):
    end = time.time() + timeout
    while time.time() < end:
        r, _, _ = select.select([p.stdout], [], [], max(0.0, end - time.time()))
        if r:
            line = p.stdout.readline()
            return line if line else None
    return None


def rate(done, window):
    if len(done) >= 3:
        return (len(done) - 1) / (done[-1] - done[0])
    return len(done) / window


def sub_rates(done, t0, window, reps):
    """Throughput in each of `reps` contiguous sub-windows [t0 + i w, t0 + (i + 1) w)."""
    out = []
    for i in range(reps):
        a, b = t0 + i * window, t0 + (i + 1) * window
        out.append(rate([t for t in done if a <= t < b], window))
    return out


def sub_means(done, vals, t0, window, reps):
    """Mean of vals (one per completion in done) in each sub-window, None where there is none."""
    out = []
    for i in range(reps):
        a, b = t0 + i * window, t0 + (i + 1) * window
        v = [x for t, x in zip(done, vals) if a <= t < b and x is not None]
        out.append(sum(v) / len(v) if v else None)
    return out


class Util:
    """Polls NVML GPU utilisation (percent) in a thread between start() and stop()."""

    GPM = {"sm_util_pct": "NVML_GPM_METRIC_SM_UTIL", "sm_occupancy_pct": "NVML_GPM_METRIC_SM_OCCUPANCY",
           "dram_bw_util_pct": "NVML_GPM_METRIC_DRAM_BW_UTIL",
           "any_tensor_util_pct": "NVML_GPM_METRIC_ANY_TENSOR_UTIL"}

    def __init__(self, fake):
        self.h = None
        self.gpm_error = "fake" if fake else None
        if not fake:
            import pynvml
            pynvml.nvmlInit()
            self.nv = pynvml
            self.h = pynvml.nvmlDeviceGetHandleByIndex(GPU["index"])
            try:
                sup = pynvml.nvmlGpmQueryDeviceSupport(self.h)
                if not sup.isSupportedDevice:
                    self.gpm_error = "nvmlGpmQueryDeviceSupport: not supported"
            except Exception as e:  # noqa: BLE001
                self.gpm_error = repr(e)[-300:]

    def compute_procs(self):
        """PIDs of the compute processes on the GPU (NVML), or None without NVML."""
        if self.h is None:
            return None
        try:
            return sorted(p.pid for p in self.nv.nvmlDeviceGetComputeRunningProcesses(self.h))
        except Exception as e:  # noqa: BLE001
            return repr(e)[-200:]

    def gpm_sample(self):
        if self.gpm_error:
            return None
        try:
            smp = self.nv.nvmlGpmSampleAlloc()
            self.nv.nvmlGpmSampleGet(self.h, smp)
            return smp
        except Exception as e:  # noqa: BLE001
            self.gpm_error = repr(e)[-300:]
            return None

    def gpm_metrics(self, s1, s2):
        """GPM metrics between two samples (percent), or {'error': ...}."""
        if s1 is None or s2 is None:
            return {"error": self.gpm_error}
        nv = self.nv
        try:
            names = list(self.GPM)
            mg = nv.c_nvmlGpmMetricsGet_t()
            mg.version = nv.NVML_GPM_METRICS_GET_VERSION
            mg.numMetrics = len(names)
            mg.sample1 = s1
            mg.sample2 = s2
            for i, n in enumerate(names):
                mg.metrics[i].metricId = getattr(nv, self.GPM[n])
            nv.nvmlGpmMetricsGet(mg)
            out = {n: mg.metrics[i].value for i, n in enumerate(names)
                   if mg.metrics[i].nvmlReturn == 0}
            return out or {"error": "no metric returned"}
        except Exception as e:  # noqa: BLE001
            return {"error": repr(e)[-300:]}
        finally:
            for smp in (s1, s2):
                try:
                    nv.nvmlGpmSampleFree(smp)
                except Exception:  # noqa: BLE001
                    pass

    def start(self, t0, t1):
        self.samples = []
        self.t0, self.t1 = t0, t1
        self.th = threading.Thread(target=self._run)
        self.th.start()

    def _run(self):
        g0 = None
        while time.time() < self.t1:
            if self.h is not None and time.time() >= self.t0:
                if g0 is None:
                    g0 = self.gpm_sample()
                u = self.nv.nvmlDeviceGetUtilizationRates(self.h)
                self.samples.append([u.gpu, u.memory] + self.clock_power())
            time.sleep(0.05)
        self.gpm = self.gpm_metrics(g0, self.gpm_sample()) if self.h is not None else None

    def stop(self):
        self.th.join()
        if not self.samples:
            return None
        n = len(self.samples)
        out = {"gpu_pct": sum(s[0] for s in self.samples) / n,
               "mem_pct": sum(s[1] for s in self.samples) / n, "n": n, "gpm": self.gpm}
        # SM clock (MHz) and board power (W) over the window, where NVML gave them: the mean and
        # the lowest clock (a capped client may run at another clock than an uncapped one)
        clk = [s[2] for s in self.samples if s[2] is not None]
        pw = [s[3] for s in self.samples if s[3] is not None]
        if clk:
            out["sm_clock_mhz"] = sum(clk) / len(clk)
            out["sm_clock_min_mhz"] = min(clk)
        if pw:
            out["power_w"] = sum(pw) / len(pw)
        return out

    def clock_power(self):
        """[SM clock MHz, board power W] now (NVML), None where NVML does not answer."""
        out = []
        for f in (lambda: self.nv.nvmlDeviceGetClockInfo(self.h, self.nv.NVML_CLOCK_SM),
                  lambda: self.nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0):
            try:
                out.append(f())
            except Exception:  # noqa: BLE001
                out.append(None)
        return out


def measure(workers, util, reps):
    w = WINDOW_S
    t_start = time.time() + 0.3
    t_end = t_start + LEAD_S + w * reps
    for wk in workers:
        wk.go(t_start, t_end)
    util.start(t_start + LEAD_S, t_end)
    out = []
    for wk in workers:
        done, host = wk.result(timeout=w * reps + 120)
        rr = sub_rates(done, t_start + LEAD_S, w, reps)
        out.append({"workload": wk.name, "iters": len(done), "rate_iter_per_s": sum(rr) / len(rr),
                    "rate_reps": rr,
                    "host_cpu_s_reps": sub_means(done, host, t_start + LEAD_S, w, reps)})
    u = util.stop()
    return {"window_s": w, "repeats": reps, "clients": out, "nvml_util": u}


def env_info(fake):
    info = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "fake": fake}
    if fake:
        return info
    import pynvml
    import torch
    import torchvision
    import transformers
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(GPU["index"])
    p = torch.cuda.get_device_properties(0)
    info.update({
        "nvml_index": GPU["index"], "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "torch_uuid": str(getattr(p, "uuid", "")),
        "cpu_affinity": sorted(os.sched_getaffinity(0)),
        "gpu": pynvml.nvmlDeviceGetName(h), "driver": pynvml.nvmlSystemGetDriverVersion(),
        "uuid": pynvml.nvmlDeviceGetUUID(h), "sms": p.multi_processor_count,
        "mem_bytes": p.total_memory, "torch": torch.__version__, "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(), "torchvision": torchvision.__version__,
        "transformers": transformers.__version__, "python": sys.version.split()[0],
        "compute_mode": pynvml.nvmlDeviceGetComputeMode(h),
        "power_limit_w": pynvml.nvmlDeviceGetPowerManagementLimit(h) / 1000.0,
        "clocks_max_mhz": {"sm": pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM),
                           "mem": pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)},
    })
    try:
        info["mig_mode"] = pynvml.nvmlDeviceGetMigMode(h)[0]
    except pynvml.NVMLError:
        info["mig_mode"] = None
    return info


class Run:
    DOC = "coloc.json"  # the file under --out that save() keeps up to date

    def __init__(self, args):
        self.args = args
        self.t0 = time.time()
        self.doc = {"schema": "slicesim-coloc", "schema_version": 2, "window_s": WINDOW_S, "repeats": args.repeats,
                    "census": {},
                    "script": "calib/coloc/coloc.py", "lead_s": LEAD_S, "tail_s": TAIL_S,
                    "workloads": {n: {"what": d, "batch": b, "unit": u}
                                  for n, (d, b, u) in WORKLOADS.items()},
                    "env": env_info(args.fake), "runs": [], "skipped": [], "errors": []}
        self.util = Util(args.fake)
        self.live = []
        self.save()

    def left(self):
        return self.args.budget_s - (time.time() - self.t0)

    def save(self):
        self.doc["elapsed_s"] = time.time() - self.t0
        tmp = os.path.join(self.args.out, self.DOC + ".tmp")
        with open(tmp, "w") as f:
            json.dump(self.doc, f, indent=1)
        os.replace(tmp, os.path.join(self.args.out, self.DOC))

    def spawn(self, names, env):
        ws = [Worker(n, self.args.fake, env) for n in names]
        self.live += ws
        for w in ws:
            w.wait_ready(timeout=180)
        return ws

    def kill(self, ws):
        for w in ws:
            w.stop()
            if w in self.live:
                self.live.remove(w)

    def record(self, sharing, kind, workers, extra=None, reps=None):
        names = [w.name for w in workers]
        reps = reps or self.args.repeats
        if self.left() < WINDOW_S * reps + 5:
            self.doc["skipped"].append({"sharing": sharing, "kind": kind, "workloads": names,
                                        "why": "time budget"})
            self.save()
            return
        try:
            m = measure(workers, self.util, reps)
        except RuntimeError as e:
            self.doc["errors"].append({"sharing": sharing, "kind": kind, "workloads": names,
                                       "error": str(e)[-1500:]})
            self.save()
            return
        m.update({"sharing": sharing, "kind": kind, "k": len(workers),
                  "t_s": time.time() - self.t0,
                  "max_mem_bytes": [w.info.get("max_mem_bytes") for w in workers]})
        if extra:
            m.update(extra)
        self.doc["runs"].append(m)
        self.save()
        rates = ", ".join(f"{c['workload']} {c['rate_iter_per_s']:.2f}/s" for c in m["clients"])
        rr = m["clients"][0]["rate_reps"]
        spread = (max(rr) - min(rr)) / max(1e-12, sum(rr) / len(rr)) * 100
        u = m["nvml_util"]["gpu_pct"] if m["nvml_util"] else -1
        clk = m["nvml_util"].get("sm_clock_mhz", -1) if m["nvml_util"] else -1
        print(f"[{time.time() - self.t0:6.1f}s] {sharing:9s} {kind:10s} k={len(workers)} "
              f"util={u:5.1f}% sm={clk:6.0f}MHz range0={spread:4.1f}% {rates}", flush=True)

    def try_spawn(self, names, env, what):
        try:
            return self.spawn(names, env)
        except RuntimeError as e:
            self.doc["errors"].append({"what": what, "workloads": names, "error": str(e)[-1500:]})
            self.kill([w for w in self.live if w.name in names])
            self.save()
            return None

    def need(self, n_meas, spawn=True):
        """Seconds a block of n_meas measurements (and a spawn) needs."""
        return (30 if spawn else 0) + n_meas * (WINDOW_S * self.args.repeats + 1.5)

    def peers(self, sharing, env, keep):
        """Per workload: its kernel census (time-slice phase), solo, then k identical peers.
        One process of each workload stays in `keep` for the pairs and the solo_end run."""
        solo_sharing = "exclusive" if sharing == "timeslice" else "mps"
        for name in WORKLOADS:
            if self.left() < self.need(1 + len(KS)):
                self.doc["skipped"].append({"sharing": sharing, "workloads": [name],
                                            "why": "time budget"})
                continue
            ws = self.try_spawn([name] * max(KS), env, sharing + " peers")
            if ws is None:
                continue
            if sharing == "timeslice":
                try:
                    self.doc["census"][name] = ws[0].census(timeout=120)
                    print(f"census {name}: {self.doc['census'][name]}", flush=True)
                except RuntimeError as e:
                    self.doc["errors"].append({"what": "census", "workloads": [name],
                                               "error": str(e)[-1500:]})
            self.record(solo_sharing, "solo", ws[:1])
            if sharing == "mps" and "server_list" not in self.doc["mps_daemon"]:
                self.doc["mps_daemon"]["server_list"] = mps_server_list(env)
            for k in KS:
                self.record(sharing, "peers", ws[:k])
            if name in keep:
                self.kill([keep[name]])
            keep[name] = ws[0]
            self.kill(ws[1:])

    def census(self, env):
        """Kernel census and GPU tail (tail_census) of every workload alone: one process of
        each is started (all at once, as for the pairs), then each is profiled in turn while
        the others wait idle on their stdin. No throughput is recorded."""
        ws = self.try_spawn(list(WORKLOADS), env, "census")
        for w in ws or []:
            try:
                self.doc["census"][w.name] = w.census(timeout=120, tail=True)
                print(f"census {w.name}: {self.doc['census'][w.name]}", flush=True)
            except RuntimeError as e:
                self.doc["errors"].append({"what": "census", "workloads": [w.name],
                                           "error": str(e)[-1500:]})
            self.save()
        self.kill(ws or [])

    def pairs(self, sharing, env, keep):
        want = [n for n in WORKLOADS if n not in keep and any(n in pr for pr in PAIRS)]
        if want and self.left() > self.need(1):
            ws = self.try_spawn(want, env, sharing + " pairs")
            for w in ws or []:
                keep[w.name] = w
        for a, b in PAIRS:
            if a in keep and b in keep:
                self.record(sharing, "pair", [keep[a], keep[b]])

    def solo_end(self, sharing, keep):
        """The solo run again at the end: its difference from the first is the drift."""
        for name, w in keep.items():
            self.record("exclusive" if sharing == "timeslice" else "mps", "solo_end", [w])

    def caps(self, env, pcts, only=None):
        for pct in pcts:
            names = [n for n in WORKLOADS if only is None or n in only]
            if self.left() < self.need(len(names)):
                self.doc["skipped"].append({"sharing": "mps", "kind": "cap", "pct": pct,
                                            "why": "time budget"})
                continue
            e = dict(env, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(pct))
            ws = self.try_spawn(names, e, f"cap {pct}")
            for w in ws or []:
                self.record("mps", "cap", [w], {"mps_percent": pct})
            self.kill(ws or [])

    def exclusive_solos(self, env, block, step):
        """Every workload alone without MPS (the daemon is not running): one block step."""
        ws = self.try_spawn(list(WORKLOADS), env, "capblock exclusive")
        for w in ws or []:
            self.record("exclusive", "solo", [w], {"block": {"id": block, "step": step},
                                                   "gpu_procs": self.util.compute_procs()})
        self.kill(ws or [])

    def capblocks(self, env, mps_env, blocks):
        """The cap blocks (module docstring): exclusive solo; under MPS uncapped, cap 50, cap 25,
        uncapped; exclusive solo; --blocks times, the closing exclusive solo opening the next."""
        names = list(WORKLOADS)
        self.exclusive_solos(env, 0, 0)
        for b in range(blocks):
            # the MPS part and the closing exclusive part must both fit
            if self.left() < self.need(5 * len(names)) + 30:
                self.doc["skipped"].append({"kind": "capblock", "block": b, "why": "time budget"})
                break
            if not start_mps(mps_env, self.doc, self.args.fake):
                break
            if "server_list" not in self.doc["mps_daemon"]:
                self.doc["mps_daemon"]["server_list"] = None
            steps = [("solo", None), ("cap", 50), ("cap", 25), ("solo", None)]
            procs = {}
            for pct in (None, 50, 25):
                e = mps_env if pct is None else dict(mps_env, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(pct))
                ws = self.try_spawn(names, e, f"capblock mps {pct or 'uncapped'}")
                for w in ws or []:
                    procs[(w.name, pct)] = w
            for name in names:
                for i, (kind, pct) in enumerate(steps):
                    w = procs.get((name, pct))
                    if w is None:
                        continue
                    extra = {"block": {"id": b, "step": i + 1}}
                    if pct is not None:
                        extra["mps_percent"] = pct
                    self.record("mps", kind, [w], extra)
                    if self.doc["mps_daemon"].get("server_list") is None and not self.args.fake:
                        self.doc["mps_daemon"]["server_list"] = mps_server_list(mps_env)
            self.kill(list(procs.values()))
            stop_mps()
            self.exclusive_solos(env, b, 5)

    def bracket(self, env, mps_env):
        """Bracketed table (--phases bracket): every workload alone without MPS (its exclusive
        solo, then its kernel census and GPU tail; the 2026-11-28 runs took the census first); with the daemon started, per
        workload one uncapped client alone (solo-mps), then each configuration (one client at
        each of BRACKET_CAPS, then BRACKET_KS identical uncapped clients) followed by the
        uncapped client alone again, so that every configuration sits between two solos
        measured seconds before and after it; the daemon stopped, every workload alone without
        MPS again. Each record carries "bracket": {"workload", "pos"} (pos counts the
        workload's MPS measurements from 0, solos at even positions). The MPS processes of a
        workload (max(BRACKET_KS) uncapped + one per cap) are spawned together, idle on their
        stdin while another is measured, and quit before the next workload's are spawned."""
        names = list(WORKLOADS)
        n_cfg = len(BRACKET_CAPS) + len(BRACKET_KS)
        ws = self.try_spawn(names, env, "bracket exclusive")
        for w in ws or []:
            # the solo before the census: torch.profiler leaves CUPTI attached in its process
            # after it exits (pytorch/pytorch issue 144455), which slowed the first solos of the
            # 2026-11-28 run (census first) by up to 38 %
            self.record("exclusive", "solo", [w], {"bracket": {"workload": w.name, "pos": "first"},
                                                   "gpu_procs": self.util.compute_procs()})
        for w in ws or []:
            try:
                self.doc["census"][w.name] = w.census(timeout=120, tail=True)
            except RuntimeError as e:
                self.doc["errors"].append({"what": "census", "workloads": [w.name],
                                           "error": str(e)[-1500:]})
        self.kill(ws or [])
        reserve = self.need(len(names)) + 20       # the closing exclusive solos
        # an MPS client's CUDA_VISIBLE_DEVICES counts the devices its server sees: the daemon
        # started with CUDA_VISIBLE_DEVICES=N sees one GPU, which its clients call 0 (a client
        # left with N > 0 found 'No CUDA GPUs are available' on the 2026-11-28 H200 run)
        cenv = dict(mps_env, CUDA_VISIBLE_DEVICES="0") if mps_env.get("CUDA_VISIBLE_DEVICES") else mps_env
        if start_mps(mps_env, self.doc, self.args.fake):
            for name in names:
                if self.left() < self.need(2 * n_cfg + 1) + reserve:
                    self.doc["skipped"].append({"kind": "bracket", "workloads": [name],
                                                "why": "time budget"})
                    continue
                # all of the workload's MPS processes start at once (a spawn is the slow part)
                envs = [cenv] * max(BRACKET_KS) + \
                    [dict(cenv, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(p)) for p in BRACKET_CAPS]
                every = [Worker(name, self.args.fake, e) for e in envs]
                self.live += every
                try:
                    for w in every:
                        w.wait_ready(timeout=240)
                except RuntimeError as e:
                    self.doc["errors"].append({"what": "bracket mps spawn", "workloads": [name],
                                               "error": str(e)[-1500:]})
                    self.kill(every)
                    self.save()
                    continue
                ws = every[:max(BRACKET_KS)]
                cw = dict(zip(BRACKET_CAPS, every[max(BRACKET_KS):]))
                self.doc.setdefault("spawn_s", []).append({"workload": name, "mps": True,
                                                           "n": len(every), "t_s": time.time() - self.t0})
                pos = 0
                self.record("mps", "solo", ws[:1], {"bracket": {"workload": name, "pos": pos}})
                if "server_list" not in self.doc["mps_daemon"] and not self.args.fake:
                    self.doc["mps_daemon"]["server_list"] = mps_server_list(mps_env)
                cfgs = [("cap", pct) for pct in BRACKET_CAPS if pct in cw] + \
                       [("peers", k) for k in BRACKET_KS]
                for kind, v in cfgs:
                    if self.left() < 2 * self.need(1, spawn=False) + reserve:
                        self.doc["skipped"].append({"kind": kind, "v": v, "workloads": [name],
                                                    "why": "time budget"})
                        break
                    pos += 1
                    if kind == "cap":
                        self.record("mps", "cap", [cw[v]], {"mps_percent": v,
                                                            "bracket": {"workload": name, "pos": pos}})
                    else:
                        self.record("mps", "peers", ws[:v], {"bracket": {"workload": name, "pos": pos}})
                    pos += 1
                    self.record("mps", "solo", ws[:1], {"bracket": {"workload": name, "pos": pos}})
                self.kill(ws + list(cw.values()))
            stop_mps()
        ws = self.try_spawn(names, env, "bracket exclusive end")
        for w in ws or []:
            self.record("exclusive", "solo", [w], {"bracket": {"workload": w.name, "pos": "last"},
                                                   "gpu_procs": self.util.compute_procs()})
        self.kill(ws or [])


MPS = {"started": False}


def mps_server_list(env):
    """PIDs of the MPS servers: non-empty when the clients really went through MPS."""
    if "CUDA_MPS_PIPE_DIRECTORY" not in env:
        return None
    r = subprocess.run(["nvidia-cuda-mps-control"], input="get_server_list\n", text=True,
                       capture_output=True, env=env, timeout=30)
    return r.stdout.strip()


def mps_env_of(env):
    """The environment of the MPS clients: a private pipe and log directory."""
    return dict(env, CUDA_MPS_PIPE_DIRECTORY=GPU["mps_dir"] + "-pipe",
                CUDA_MPS_LOG_DIRECTORY=GPU["mps_dir"] + "-log")


def start_mps(mps_env, doc, fake):
    """Starts the MPS control daemon (not with --fake); records the attempt in doc['mps_daemon']
    (the first one) and doc['mps_starts']. True when clients can be spawned."""
    if fake:
        doc.setdefault("mps_daemon", {"started": False, "reason": "--fake"})
        return True
    os.makedirs(mps_env["CUDA_MPS_PIPE_DIRECTORY"], exist_ok=True)
    os.makedirs(mps_env["CUDA_MPS_LOG_DIRECTORY"], exist_ok=True)
    r = subprocess.run(["nvidia-cuda-mps-control", "-d"], env=mps_env,
                       capture_output=True, text=True)
    MPS.update(started=r.returncode == 0, env=mps_env)
    st = {"started": MPS["started"], "rc": r.returncode, "stderr": r.stderr[-500:]}
    doc.setdefault("mps_daemon", st)
    doc.setdefault("mps_starts", []).append(dict(st, t_utc=time.strftime("%H:%M:%S", time.gmtime())))
    return MPS["started"]


def mps_log_tails(mps_env, doc):
    """The ends of the daemon's logs into doc['mps_daemon'], where a daemon was started."""
    if not doc.get("mps_starts"):
        return
    for f in ("control.log", "server.log"):
        try:
            with open(os.path.join(mps_env["CUDA_MPS_LOG_DIRECTORY"], f)) as fh:
                doc["mps_daemon"][f + "_tail"] = fh.read()[-1500:]
        except OSError:
            pass


def stop_mps():
    """Quits the MPS control daemon (and its server) if this script started it, and waits
    until the daemon's pipe is gone (at most 15 s)."""
    if MPS["started"]:
        subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", text=True,
                       env=MPS["env"], timeout=30)
        MPS["started"] = False
        ctl = os.path.join(MPS["env"]["CUDA_MPS_PIPE_DIRECTORY"], "control")
        end = time.time() + 15
        while os.path.exists(ctl) and time.time() < end:
            time.sleep(0.2)


def main():
    global WINDOW_S
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--budget-s", type=float, default=540)
    ap.add_argument("--fake", action="store_true")
    ap.add_argument("--worker")
    ap.add_argument("--only", default="", help="comma-separated workloads")
    ap.add_argument("--phases", default="ts,pairs-ts,caps,capsweep,mps,pairs-mps",
                    help="comma-separated: census, ts, pairs-ts, caps, capsweep, mps, pairs-mps, "
                    "capblock")
    ap.add_argument("--blocks", type=int, default=1, help="capblock: blocks per workload")
    ap.add_argument("--repeats", type=int, default=REPEATS)
    ap.add_argument("--window-s", type=float, default=WINDOW_S)
    ap.add_argument("--gpu", type=int, default=0,
                    help="NVML index of the GPU the workers see (set CUDA_VISIBLE_DEVICES to it "
                    "and CUDA_DEVICE_ORDER=PCI_BUS_ID, so that both count alike)")
    ap.add_argument("--mps-dir", default="/tmp/coloc-mps",
                    help="prefix of this invocation's MPS pipe (-pipe) and log (-log) directories")
    args = ap.parse_args()
    WINDOW_S = args.window_s
    GPU.update(index=args.gpu, mps_dir=args.mps_dir)
    if args.worker:
        worker_main(args.worker, args.fake)
        return
    if args.only:
        keep = set(args.only.split(","))
        for n in list(WORKLOADS):
            if n not in keep:
                del WORKLOADS[n]
    os.makedirs(args.out, exist_ok=True)
    atexit.register(stop_mps)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, lambda *_: sys.exit(130))
    run = Run(args)
    env = dict(os.environ)
    phases = set(args.phases.split(","))
    mps_phases = {"caps", "capsweep", "mps", "pairs-mps"} & phases
    run.doc["phases"] = sorted(phases)
    try:
        if "bracket" in phases:
            run.doc["bracket"] = {"caps": BRACKET_CAPS, "ks": BRACKET_KS}
            run.bracket(env, mps_env_of(env))
        if "capblock" in phases:
            run.doc["blocks"] = args.blocks
            run.capblocks(env, mps_env_of(env), args.blocks)
        keep = {}
        if "census" in phases:
            run.census(env)
        if "ts" in phases:
            run.peers("timeslice", env, keep)
        if "pairs-ts" in phases:
            run.pairs("timeslice", env, keep)
        run.solo_end("timeslice", keep)
        run.kill(list(keep.values()))
        if args.fake or not mps_phases:
            mps_env = env
            run.doc.setdefault("mps_daemon", {"started": False, "reason": "--fake or not asked"})
        else:
            mps_env = mps_env_of(env)
            start_mps(mps_env, run.doc, False)
        if MPS["started"] or (args.fake and mps_phases):
            if "caps" in phases:
                run.caps(mps_env, CAPS)
            if "capsweep" in phases and "stream" in WORKLOADS:
                run.caps(mps_env, SWEEP_CAPS, only={"stream"})
            keep = {}
            order = [ph for ph in args.phases.split(",") if ph in ("mps", "pairs-mps")]
            for ph in order:   # in the order given: pairs first when they matter more
                if ph == "mps":
                    run.peers("mps", mps_env, keep)
                else:
                    run.pairs("mps", mps_env, keep)
            run.solo_end("mps", keep)
            run.kill(list(keep.values()))
    finally:
        run.kill(list(run.live))
        stop_mps()
        mps_log_tails(mps_env_of(env), run.doc)
        run.save()
    print(f"done: {len(run.doc['runs'])} runs, {len(run.doc['errors'])} errors, "
          f"{len(run.doc['skipped'])} skipped, {time.time() - run.t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
