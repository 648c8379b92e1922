#!/usr/bin/env python3
"""calib/ddp/ddp.py - real PyTorch DistributedDataParallel on one node: solo, DDP on 2 and 4 GPUs,
the same DDP jobs two and three at a time on the same two GPUs (time-sliced and under MPS), an
all-reduce sweep through torch.distributed, and a probe of what an NCCL all-reduce takes from a
kernel it overlaps. Random weights and data; nothing is downloaded.

How. The launcher spawns one process per (slot, GPU) and the processes run one fixed schedule
together (SPMD): every process walks the same list of configurations; a configuration names its
jobs, each job a list of ranks (one rank = one training process on one GPU); a process that is in
no job of a configuration waits at the closing barrier (gloo, on the CPU). Phase `excl` has 8
processes: slot 0 on GPUs 0-3, slots 1 and 2 on GPUs 0 and 1 (the co-runners of the sharing rows);
phase `mps` has 6 processes (slots 0-2 on GPUs 0 and 1), spawned after the MPS control daemon was
started with a private pipe directory, so every one of them is an MPS client; the daemon is quit
on every exit path. Jobs of two or more ranks wrap a fresh model in DDP over an NCCL group of
their ranks (bucket_cap_mb 25 unless a configuration says otherwise); single-rank jobs train the
same model without DDP (the solo rows). Every configuration builds fresh models and optimisers.

A job runs WARM steps, then N timed steps, each ending with torch.cuda.synchronize() (as a loop
that reads its loss), recording per step the host clock at its start, after forward, after
backward, after the optimiser step and after the synchronisation, and CUDA events at the same
points (forward, backward incl. DDP's wait for its all-reduces, optimiser step on the GPU). Jobs
that share GPUs keep stepping after their timed steps until every job of the configuration has
finished its own (a counter in a TCPStore; the ranks of a job agree through a one-element
all-reduce), so every timed step ran beside all co-runners. NVML (utilisation, SM clock, power) is
polled for every GPU every 50 ms by the launcher; the merge assigns the samples to the
configurations by time.

Phase `x2` (--phases x2, two GPUs; calib/ddp/NOTES.md 'A lower-noise table on 2 GPUs'): the
configurations of one node of two GPUs (solo on GPUs 0 and 1 at once, one 2-worker DDP job, 2 and
3 two-worker jobs time-sliced, 1-3 under MPS) in --rounds rotated rounds, so that every row samples
the VM host's CPU drift as every other does (calib/coloc/rotcoloc.py's protocol). Twelve processes
live for the whole phase, all in one gloo world: ranks 0-5 (slots 0-2 on GPUs 0 and 1) ordinary
contexts, ranks 6-11 MPS clients of a private daemon started before them (an ordinary context and
an MPS server share a GPU in the DEFAULT compute mode, as rotcoloc.py's exclusive and MPS
processes did). Every process is pinned to its own CPUs (hostcpu.set_affinity: with SMT a
physical core a slot; the launcher, its NVML thread and the MPS daemon on the rest). Rounds outer,
models inner; each process builds a model once per round and trains a deep copy of it in each
configuration (fresh DDP wrapper and optimiser); a configuration of k jobs times max(8, 2n/(k+1))
steps of each job (ROT_STEPS n, about 1 s alone), after ROT_WARM steps. A round starts only when
the previous round's duration still fits the budget.

Phase `x4` (--phases x4, four GPUs; calib/ddp/NOTES.md 'A lower-noise 4-GPU scaling table'): the
2 -> 4 GPU scaling rows in phase x2's protocol. Four processes (slot 0 on GPUs 0-3), each pinned to
its own CPUs, alive for the whole phase; per model three configurations: solo (one process on
each of the four GPUs at once), ddp2 (two 2-worker DDP jobs at once, GPUs 0-1 and 2-3, as the
earlier 4-GPU recordings ran them) and ddp4 (one 4-worker job), rotated by one position a round
(offset r + the model's index), ROT_STEPS timed steps each after ROT_WARM; no MPS daemon.

Usage: python3 calib/ddp/ddp.py --out DIR [--budget-s 560] [--phases excl,mps | x2 | x4]
           [--models resnet152,mobilenet,gpt2,widemlp,vit] [--quick] [--configs solo,ddp2,...]
           [--quiet-nccl] [--rounds N [--first-round K --total-rounds R]] [--fake]
(--fake: a small MLP on the CPU over gloo, no NVML and no MPS daemon: the coordination of a phase
without a GPU)
Output: DIR/ddp.json (merged; also DIR/ddp.json.gz), DIR/raw/ (per-process JSON lines, NCCL logs).
The GPU's MIG mode, clocks, power limit and compute mode are never touched; NVLink multicast stays
off (NCCL_NVLS_ENABLE=0 and friends are set for every process).
"""
import argparse
import atexit
import gzip
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from datetime import timedelta

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "coloc"))
import hostcpu  # noqa: E402  (calib/coloc: set_affinity, topology)

WARM = 6
# name -> (description, per-GPU batch, timed steps, unit)
MODELS = {
    "resnet152": ("torchvision ResNet-152, 224x224, bf16 autocast, channels_last, SGD momentum",
                  64, 30),
    "mobilenet": ("torchvision MobileNetV3-small, 224x224, bf16 autocast, SGD momentum "
                  "(small, launch-bound)", 32, 80),
    "gpt2": ("transformers GPT2LMHeadModel (GPT-2 small, 124M) from config, seq 512, bf16 "
             "autocast, AdamW", 8, 40),
    "widemlp": ("5 Linear layers 8192 wide (4x 8192x8192 + 8192x1000, 277M parameters), bf16 "
                "autocast, AdamW (very large gradient, little compute)", 1024, 60),
    "vit": ("torchvision ViT-B/16, 224x224, bf16 autocast, AdamW", 64, 50),
}
ENV_FIXED = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
             "NVSHMEM_DISABLE_NVLS": "1", "TORCH_NCCL_ASYNC_ERROR_HANDLING": "1",
             "OMP_NUM_THREADS": "2", "PYTHONUNBUFFERED": "1"}
# (slot, gpu) of each rank, and the NCCL groups every rank creates, in this order
LAYOUT = {"excl": [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (2, 0), (2, 1)],
          "mps": [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)],
          "x2": [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1),
                 (3, 0), (3, 1), (4, 0), (4, 1), (5, 0), (5, 1)],
          "x4": [(0, 0), (0, 1), (0, 2), (0, 3)]}
GROUPS = {"excl": {"g01": [0, 1], "g23": [2, 3], "g0123": [0, 1, 2, 3], "s1": [4, 5],
                   "s2": [6, 7], "g012": [0, 1, 2]},
          "mps": {"g01": [0, 1], "s1": [2, 3], "s2": [4, 5]},
          "x2": {"g01": [0, 1], "s1": [2, 3], "s2": [4, 5], "m01": [6, 7], "ms1": [8, 9],
                 "ms2": [10, 11]},
          "x4": {"g01": [0, 1], "g23": [2, 3], "g0123": [0, 1, 2, 3]}}
# phase x2 (--rotate): ranks 6-11 are MPS clients, 0-5 ordinary contexts, all alive together
MPS_RANKS = {"x2": range(6, 12)}
# phase x2: timed steps of a configuration with one job (about 0.8-1 s alone on an H200); a
# configuration of k jobs times max(8, round(2 n / (k + 1))) steps of each (its jobs share the GPUs)
ROT_STEPS = {"resnet152": 12, "mobilenet": 30, "gpt2": 20, "widemlp": 80, "vit": 22}
ROT_WARM = 3
ROT_CONFIGS = [("solo", [[0], [1]], False), ("ddp2", [[0, 1]], False),
               ("ts2", [[0, 1], [2, 3]], True), ("ts3", [[0, 1], [2, 3], [4, 5]], True),
               ("mps1", [[6, 7]], True), ("mps2", [[6, 7], [8, 9]], True),
               ("mps3", [[6, 7], [8, 9], [10, 11]], True)]
# phase x4: the scaling rows, every configuration exclusive (one process a GPU)
ROT_CONFIGS_X4 = [("solo", [[0], [1], [2], [3]], False), ("ddp2", [[0, 1], [2, 3]], False),
                  ("ddp4", [[0, 1, 2, 3]], False)]
ROTATED = ("x2", "x4")
AR_SIZES = [2 ** k for k in range(10, 31)]


def schedule(phase, models, configs=None, rounds=1, first=0, total=None):
    """The configurations of a phase, in order: each {name, kind, model?, jobs: [[ranks]],
    shared, bucket_mb?, nosync?} (phase x2 also round, steps, warm)."""
    cf = []
    if phase in ROTATED:
        # rounds outside, models inside; each model's configurations rotated by a different
        # offset in every round (r n / total, plus the model's index), so that every
        # configuration runs early, late, after a fresh build and after every other one; a
        # second recording continues the rotation (rounds first .. first + rounds - 1 of total);
        # phase x4's three configurations move by one position a round (r + the model's index)
        use = [c for c in (ROT_CONFIGS if phase == "x2" else ROT_CONFIGS_X4)
               if not configs or c[0] in configs]
        n = len(use)
        total = total or first + rounds
        for r in range(first, first + rounds):
            for mi, m in enumerate(models):
                off = ((r if phase == "x4" else r * n // total) + mi) % n if n else 0
                for name, jobs, shared in use[off:] + use[:off]:
                    k = len(jobs) if shared else 1
                    cf.append({"name": name, "model": m, "jobs": jobs, "shared": shared,
                               "round": r, "warm": ROT_WARM,
                               "steps": max(8, round(2 * ROT_STEPS[m] / (k + 1)))})
        configs = None
    elif phase == "excl":
        cf.append({"name": "allreduce-2", "kind": "allreduce", "jobs": [[0, 1]]})
        cf.append({"name": "allreduce-4", "kind": "allreduce", "jobs": [[0, 1, 2, 3]]})
        cf.append({"name": "overlap", "kind": "overlap", "jobs": [[0, 1]]})
        for m in models:
            cf.append({"name": "solo", "model": m, "jobs": [[0], [1], [2], [3]]})
            cf.append({"name": "ddp2", "model": m, "jobs": [[0, 1], [2, 3]]})
            cf.append({"name": "ddp4", "model": m, "jobs": [[0, 1, 2, 3]]})
            cf.append({"name": "ddp3", "model": m, "jobs": [[0, 1, 2]]})
            cf.append({"name": "ts2", "model": m, "jobs": [[0, 1], [4, 5]], "shared": True})
            cf.append({"name": "ts3", "model": m, "jobs": [[0, 1], [4, 5], [6, 7]],
                       "shared": True})
        for m in models:   # extras, while time is left
            cf.append({"name": "ddp2-nosync", "model": m, "jobs": [[0, 1], [2, 3]],
                       "nosync": True})
        for m in ("gpt2", "vit", "resnet152"):
            if m in models:
                for b in (5, 100):
                    cf.append({"name": f"ddp2-b{b}", "model": m, "jobs": [[0, 1], [2, 3]],
                               "bucket_mb": b})
        for m in models:
            cf.append({"name": "solo-end", "model": m, "jobs": [[0], [1], [2], [3]]})
    else:
        for m in models:
            cf.append({"name": "mps1", "model": m, "jobs": [[0, 1]], "shared": True})
            cf.append({"name": "mps2", "model": m, "jobs": [[0, 1], [2, 3]], "shared": True})
            cf.append({"name": "mps3", "model": m, "jobs": [[0, 1], [2, 3], [4, 5]],
                       "shared": True})
    if configs:
        cf = [c for c in cf if c["name"] in configs]
    for i, c in enumerate(cf):
        c["index"] = i
        c.setdefault("kind", "train")
        c.setdefault("shared", False)
    return cf


# ---------------------------------------------------------------- worker side

def build(name, dev, fake=False):
    """(module, loss_fn(module) -> loss, optimiser class and kwargs, batch). fake: a small MLP on
    the CPU for every name (--fake, the coordination without a GPU)."""
    import torch
    batch = MODELS[name][1]
    if fake:
        torch.manual_seed(5)
        model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(),
                                    torch.nn.Linear(256, 10))
        x = torch.randn(64, 256)
        y = torch.randint(0, 10, (64,))
        lossf = torch.nn.CrossEntropyLoss()

        def floss(m):
            time.sleep(0.004)   # a host-bound step of a few ms
            return lossf(m(x), y)
        return model, floss, (torch.optim.SGD, {"lr": 0.01}), 64
    if name in ("resnet152", "mobilenet", "vit"):
        import torchvision
        ctor = {"resnet152": torchvision.models.resnet152,
                "mobilenet": torchvision.models.mobilenet_v3_small,
                "vit": torchvision.models.vit_b_16}[name]
        with torch.device(dev):
            model = ctor(weights=None)
        x = torch.randn(batch, 3, 224, 224, device=dev)
        if name != "vit":
            model = model.to(memory_format=torch.channels_last)
            x = x.to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (batch,), device=dev)
        lossf = torch.nn.CrossEntropyLoss()

        def loss(m):
            return lossf(m(x), y)
        opt = (torch.optim.AdamW, {"lr": 1e-4}) if name == "vit" else \
            (torch.optim.SGD, {"lr": 0.01, "momentum": 0.9})
        return model, loss, opt, batch
    if name == "gpt2":
        import transformers
        cfg = transformers.GPT2Config()
        with torch.device(dev):
            model = transformers.GPT2LMHeadModel(cfg)
        ids = torch.randint(0, cfg.vocab_size, (batch, 512), device=dev)

        def loss(m):
            return m(input_ids=ids, labels=ids).loss
        return model, loss, (torch.optim.AdamW, {"lr": 1e-4}), batch
    if name == "widemlp":
        layers = []
        with torch.device(dev):
            for _ in range(4):
                layers += [torch.nn.Linear(8192, 8192), torch.nn.GELU()]
            layers.append(torch.nn.Linear(8192, 1000))
            model = torch.nn.Sequential(*layers)
        x = torch.randn(batch, 8192, device=dev)
        y = torch.randint(0, 1000, (batch,), device=dev)
        lossf = torch.nn.CrossEntropyLoss()

        def loss(m):
            return lossf(m(x), y)
        return model, loss, (torch.optim.AdamW, {"lr": 1e-4}), batch
    raise SystemExit(f"unknown model {name}")


def train_job(cfg, job, rank, gpu, groups, gname, store, njobs, quick, base=None, fake=False):
    """One job's rank: warm-up and timed steps of cfg's model (a deep copy of base when given:
    phase x2 builds each model once per round and process), DDP when the job has two ranks."""
    import contextlib
    import copy
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    dev = torch.device("cpu") if fake else torch.device("cuda", gpu)
    name = cfg["model"]
    n_timed = cfg.get("steps") or MODELS[name][2]
    n_timed = min(8, n_timed) if quick else n_timed
    warm = 3 if quick else cfg.get("warm", WARM)
    if base is not None:
        model, lossfn, (optc, optkw), batch = (copy.deepcopy(base[0]),) + base[1:]
    else:
        model, lossfn, (optc, optkw), batch = build(name, dev, fake)
    n_params = sum(p.numel() for p in model.parameters())
    n_tensors = sum(1 for p in model.parameters())
    grad_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    g = groups[gname] if len(job) > 1 else None
    net = model
    if g is not None:
        net = DDP(model, device_ids=None if fake else [gpu], process_group=g,
                  bucket_cap_mb=cfg.get("bucket_mb", 25))
    opt = optc(net.parameters(), **optkw)
    bf16 = dict(device_type="cpu" if fake else "cuda", dtype=torch.bfloat16)
    nosync = cfg.get("nosync", False)
    ev = [[None if fake else torch.cuda.Event(enable_timing=True) for _ in range(4)]
          for _ in range(n_timed)]
    host = []

    def sync():
        if not fake:
            torch.cuda.synchronize(dev)

    def step(e=None):
        h = [time.perf_counter()]
        ctx = net.no_sync() if nosync and g is not None else contextlib.nullcontext()
        with ctx:
            if e and e[0]:
                e[0].record()
            opt.zero_grad(set_to_none=True)
            with torch.autocast(**bf16):
                loss = lossfn(net)
            if e and e[1]:
                e[1].record()
            h.append(time.perf_counter())
            loss.backward()
            if e and e[2]:
                e[2].record()
            h.append(time.perf_counter())
            opt.step()
            if e and e[3]:
                e[3].record()
            h.append(time.perf_counter())
        sync()
        h.append(time.perf_counter())
        return h

    sync()
    if not fake:
        torch.cuda.reset_peak_memory_stats(dev)
    t_w = time.time()
    for _ in range(warm):
        step()
    t0 = time.time()
    for i in range(n_timed):
        host.append(step(ev[i]))
    t1 = time.time()
    gpu_ms = [[0.0 if fake else ev[i][k].elapsed_time(ev[i][k + 1]) for k in range(3)]
              for i in range(n_timed)]
    trail = 0
    if cfg["shared"] and njobs > 1:
        key = f"done/{cfg['phase']}/{cfg['index']}"
        if job.index(rank) == 0:
            store.add(key, 1)
        while True:
            flag = 1 if store.add(key, 0) >= njobs else 0
            if g is not None:
                t = torch.tensor([flag], device=dev)
                dist.all_reduce(t, op=dist.ReduceOp.MAX, group=g)
                flag = int(t.item())
            if flag:
                break
            step()
            trail += 1
    buckets = None
    if g is not None:
        try:
            data = net._get_ddp_logging_data()
            buckets = {k: v for k, v in data.items()
                       if any(w in k for w in ("bucket", "rebuilt", "comm_hook", "unused"))}
        except Exception:  # noqa: BLE001
            buckets = None
    return {"model": name, "batch": batch, "params": n_params, "param_tensors": n_tensors,
            "grad_bytes": grad_bytes, "warm": warm, "warm_start": t_w, "t_start": t0,
            "t_end": t1, "host": host, "gpu_ms": gpu_ms, "trail_steps": trail,
            "max_mem_bytes": 0 if fake else torch.cuda.max_memory_allocated(dev),
            "max_reserved_bytes": 0 if fake else torch.cuda.max_memory_reserved(dev),
            "ddp_buckets": buckets}


def allreduce_job(cfg, job, gpu, groups, gname, quick):
    import torch
    import torch.distributed as dist
    dev = torch.device("cuda", gpu)
    g = groups[gname]
    out = []
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for size in (AR_SIZES[::4] if quick else AR_SIZES):
        buf = torch.ones(size // 4, device=dev)
        dist.all_reduce(buf, group=g)
        torch.cuda.synchronize(dev)
        correct = bool((buf == float(len(job))).all().item())
        iters = 50 if size <= 2 ** 20 else 20 if size <= 2 ** 26 else 5
        for _ in range(3):
            dist.all_reduce(buf, group=g)
        ms = []
        for _ in range(7):
            e0.record()
            for _ in range(iters):
                dist.all_reduce(buf, group=g)
            e1.record()
            torch.cuda.synchronize(dev)
            ms.append(e0.elapsed_time(e1) / iters)
        out.append({"bytes": size, "iters": iters, "ms": ms, "correct": correct})
        del buf
    return {"sweep": out}


def overlap_job(cfg, job, gpu, groups, gname, quick):
    """What an all-reduce on its own stream takes from a kernel beside it, and back: a bf16
    matmul loop (compute-bound) and a 1 GiB copy loop (memory-bound), each alone, the all-reduce
    loop (256 MiB) alone, and each kernel loop beside the all-reduce loop."""
    import torch
    import torch.distributed as dist
    dev = torch.device("cuda", gpu)
    g = groups[gname]
    torch.manual_seed(7)
    a = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    c = torch.empty_like(a)
    src = torch.randn(2 ** 28, device=dev)
    dst = torch.empty_like(src)
    buf = torch.ones(2 ** 26, device=dev)
    side = torch.cuda.Stream(device=dev)
    n_ar = 20 if quick else 100

    def timed(fn, stream=None):
        s = stream or torch.cuda.current_stream(dev)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(s):
            e0.record(s)
            fn()
            e1.record(s)
        return e0, e1

    def mm(k):
        def f():
            for _ in range(k):
                torch.mm(a, b, out=c)
        return f

    def cp(k):
        def f():
            for _ in range(k):
                dst.copy_(src)
        return f

    def ar():
        for _ in range(n_ar):
            dist.all_reduce(buf, group=g)

    res = {"n_ar": n_ar, "ar_bytes": buf.numel() * 4, "mm_flop": 2 * 8192 ** 3,
           "copy_bytes": 2 * src.numel() * 4}
    for _ in range(2):   # warm-up
        mm(5)()
        cp(5)()
        dist.all_reduce(buf, group=g)
    torch.cuda.synchronize(dev)
    e = timed(mm(20))
    torch.cuda.synchronize(dev)
    mm_one = e[0].elapsed_time(e[1]) / 20
    e = timed(cp(10))
    torch.cuda.synchronize(dev)
    cp_one = e[0].elapsed_time(e[1]) / 10
    dist.barrier(group=g, device_ids=[gpu])
    e = timed(ar, side)
    torch.cuda.synchronize(dev)
    ar_alone = e[0].elapsed_time(e[1])
    res.update(mm_ms=mm_one, copy_ms=cp_one, ar_alone_ms=ar_alone)
    for kname, kf, one in (("mm", mm, mm_one), ("copy", cp, cp_one)):
        k = max(5, int(round(ar_alone / one)))
        dist.barrier(group=g, device_ids=[gpu])
        ea = timed(ar, side)
        ek = timed(kf(k))
        torch.cuda.synchronize(dev)
        res[kname + "_beside"] = {"k": k, "kernel_ms": ek[0].elapsed_time(ek[1]),
                                  "kernel_alone_ms": k * one,
                                  "ar_ms": ea[0].elapsed_time(ea[1]), "ar_alone_ms": ar_alone}
    return res


def pin_self(args):
    """Phases x2 and x4: every thread of this process onto its slot's CPUs (hostcpu.set_affinity); the
    threads it starts later (autograd's, NCCL's) inherit them. Returns the CPUs or None."""
    if not args.cpus:
        return None
    cpus = {int(c) for c in args.cpus.split(",")}
    hostcpu.set_affinity(os.getpid(), cpus)
    return sorted(os.sched_getaffinity(0))


def worker_main(args):
    pinned = pin_self(args)
    import torch
    import torch.distributed as dist
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    phase = args.phase
    slot, gpu = LAYOUT[phase][rank]
    if not args.fake:
        torch.cuda.set_device(gpu)
        torch.backends.cudnn.benchmark = False
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(1234 + rank)
    raw = open(os.path.join(args.out, "raw", f"{phase}-r{rank}.jsonl"), "a")

    def emit(rec):
        raw.write(json.dumps(rec) + "\n")
        raw.flush()

    dist.init_process_group("gloo", rank=rank, world_size=world,
                            timeout=timedelta(seconds=240))
    store = dist.TCPStore("127.0.0.1", int(os.environ["MASTER_PORT"]) + 1, world, rank == 0,
                          timeout=timedelta(seconds=240))
    groups = {}
    for gname, ranks in GROUPS[phase].items():
        groups[gname] = dist.new_group(ranks, backend="gloo" if args.fake else "nccl",
                                       timeout=timedelta(seconds=60))
    pinned = pin_self(args) or pinned   # again: threads started by the groups
    emit({"rank": rank, "slot": slot, "gpu": gpu, "pid": os.getpid(), "start": time.time(),
          "mps_client": "CUDA_MPS_PIPE_DIRECTORY" in os.environ, "cpus": pinned})
    models = args.models.split(",")
    est = {}   # rank 0: seconds per config by model (from its solo)
    rot = {"stop": False, "round": -1, "t_round": None, "round_s": None}   # rank 0, x2 / x4
    base, base_key = None, None   # phases x2, x4: this process's model of the current round
    for cfg in schedule(phase, models, args.configs.split(",") if args.configs else None,
                        args.rounds, args.first_round, args.total_rounds):
        cfg["phase"] = phase
        obj = [None]
        if rank == 0 and phase in ROTATED:
            # whole rounds: a round starts only when the last one's duration still fits
            now = time.time()
            if cfg["round"] != rot["round"]:
                if rot["t_round"] is not None:
                    rot["round_s"] = now - rot["t_round"]
                rot["round"], rot["t_round"] = cfg["round"], now
                if rot["round_s"] is not None and now + rot["round_s"] > args.deadline:
                    rot["stop"] = True
            rot["stop"] = rot["stop"] or now > args.deadline
            obj[0] = "skip" if rot["stop"] else "go"
        elif rank == 0:
            m = cfg.get("model")
            guess = 15.0 if m is None or m not in est else est[m] * (
                len(cfg["jobs"]) if cfg["shared"] else 1.3) + 4
            obj[0] = "go" if time.time() + guess < args.deadline else "skip"
        dist.broadcast_object_list(obj, src=0)
        if obj[0] != "go":
            if rank == 0:
                emit({"config": cfg, "skipped": "phase deadline"})
            continue
        if phase in ROTATED and base_key != (cfg["round"], cfg["model"]):
            base = None
            import gc
            gc.collect()
            if not args.fake:
                torch.cuda.empty_cache()
            dev = torch.device("cpu") if args.fake else torch.device("cuda", gpu)
            base = build(cfg["model"], dev, args.fake)
            base_key = (cfg["round"], cfg["model"])
        if pinned:
            pin_self(args)
        dist.barrier()
        job = next((j for j in cfg["jobs"] if rank in j), None)
        if job is not None:
            gname = None
            if len(job) > 1:
                gname = next(n for n, r in GROUPS[phase].items() if r == job)
            rec = {"config": cfg, "rank": rank, "slot": slot, "gpu": gpu, "job": job,
                   "t_begin": time.time()}
            try:
                if cfg["kind"] == "allreduce":
                    rec.update(allreduce_job(cfg, job, gpu, groups, gname, args.quick))
                elif cfg["kind"] == "overlap":
                    rec.update(overlap_job(cfg, job, gpu, groups, gname, args.quick))
                else:
                    rec.update(train_job(cfg, job, rank, gpu, groups, gname, store,
                                         len(cfg["jobs"]), args.quick, base, args.fake))
            except Exception:  # noqa: BLE001
                rec["error"] = traceback.format_exc()[-3000:]
            rec["t_finish"] = time.time()
            emit(rec)
            if rank == 0 and cfg["kind"] == "train" and cfg["name"] == "solo" \
                    and "host" in rec:
                est[cfg["model"]] = rec["t_finish"] - rec["t_begin"]
        import gc
        gc.collect()
        if not args.fake:
            torch.cuda.empty_cache()
        dist.barrier()
    emit({"rank": rank, "end": time.time()})
    raw.close()
    dist.destroy_process_group()


# ---------------------------------------------------------------- launcher side

MPS = {"started": False, "env": None}


def stop_mps():
    if MPS["started"]:
        try:
            subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", text=True,
                           env=MPS["env"], timeout=30)
        except Exception:  # noqa: BLE001
            pass
        MPS["started"] = False
        ctl = os.path.join(MPS["env"]["CUDA_MPS_PIPE_DIRECTORY"], "control")
        end = time.time() + 15
        while os.path.exists(ctl) and time.time() < end:
            time.sleep(0.2)


class Sampler:
    """NVML utilisation, SM clock and power of every GPU every 50 ms, in a thread."""

    def __init__(self):
        import pynvml
        pynvml.nvmlInit()
        self.nv = pynvml
        self.h = [pynvml.nvmlDeviceGetHandleByIndex(i)
                  for i in range(pynvml.nvmlDeviceGetCount())]
        self.samples = []
        self.stop_flag = False
        self.th = threading.Thread(target=self.run, daemon=True)
        self.th.start()

    def run(self):
        nv = self.nv
        while not self.stop_flag:
            t = time.time()
            row = [round(t, 3)]
            for h in self.h:
                try:
                    u = nv.nvmlDeviceGetUtilizationRates(h)
                    row += [u.gpu, u.memory, nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                            round(nv.nvmlDeviceGetPowerUsage(h) / 1000.0, 1)]
                except Exception:  # noqa: BLE001
                    row += [None, None, None, None]
            self.samples.append(row)
            time.sleep(max(0.0, 0.05 - (time.time() - t)))

    def stop(self):
        self.stop_flag = True
        self.th.join(timeout=2)
        return {"period_s": 0.05, "columns": ["t", "per GPU: util_gpu_pct, util_mem_pct, "
                                              "sm_clock_mhz, power_w"],
                "rows": self.samples}


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True,
                              timeout=60).stdout
    except Exception as e:  # noqa: BLE001
        return repr(e)


def env_info():
    info = {"date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "git": sh("git log -1 --oneline").strip(),
            "nvidia_smi_topo": sh("nvidia-smi topo -m"),
            "nvidia_smi": sh("nvidia-smi --query-gpu=index,name,uuid,driver_version,pci.bus_id,"
                             "clocks.max.sm,clocks.max.mem,power.limit,compute_mode,"
                             "mig.mode.current,persistence_mode,memory.total --format=csv"),
            "nvlink_status": sh("nvidia-smi nvlink -s -i 0")[-3000:],
            "cpu": sh("lscpu | head -20"), "env_fixed": ENV_FIXED}
    code = ("import json,torch,torchvision,transformers;print(json.dumps({'torch':"
            "torch.__version__,'cuda':torch.version.cuda,'cudnn':torch.backends.cudnn.version(),"
            "'nccl':'.'.join(map(str,torch.cuda.nccl.version())),'torchvision':"
            "torchvision.__version__,'transformers':transformers.__version__,'gpus':"
            "torch.cuda.device_count(),'sms':torch.cuda.get_device_properties(0)."
            "multi_processor_count}))")
    try:
        info["versions"] = json.loads(sh(f"{sys.executable} -c \"{code}\"").strip()
                                      .splitlines()[-1])
    except Exception as e:  # noqa: BLE001
        info["versions"] = {"error": repr(e)}
    return info


def cpu_slots(n):
    """Phases x2 and x4: CPUs for n worker slots and the rest (the launcher, its NVML thread, the MPS
    daemon). With SMT, one physical core (both its threads) a slot from the second core on;
    without, two CPUs a slot from CPU 2 on (rotcoloc.py's slots). Wraps where too few."""
    topo = hostcpu.topology()
    cores = {}
    for c, pc in sorted(topo.items()):
        cores.setdefault(pc, []).append(c)
    threads = sorted(cores.values())
    if len(threads) > n and all(len(t) > 1 for t in threads):
        slots = [sorted(threads[1 + j]) for j in range(n)]
    else:
        cpus = sorted(topo)
        slots = [sorted({cpus[(2 + 2 * j) % len(cpus)], cpus[(3 + 2 * j) % len(cpus)]})
                 for j in range(n)]
    rest = sorted(set(topo) - {c for sl in slots for c in sl}) or sorted(topo)
    return slots, rest


def run_phase(args, phase, deadline, env, port, rank_env=None, slots=None):
    world = len(LAYOUT[phase])
    procs = []
    for r in range(world):
        e = dict(rank_env(r) if rank_env else env, RANK=str(r), WORLD_SIZE=str(world),
                 MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), LOCAL_RANK=str(r))
        if not args.quiet_nccl:   # INIT,TUNING also logs every collective (a line each)
            e.update(NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT,TUNING",
                     NCCL_DEBUG_FILE=os.path.join(args.out, "raw", f"nccl-{phase}-r{r}.log"))
        log = open(os.path.join(args.out, "raw", f"{phase}-r{r}.log"), "w")
        procs.append(subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker", "--phase", phase,
             "--out", args.out, "--models", args.models, "--deadline", str(deadline),
             "--configs", args.configs, "--rounds", str(args.rounds),
             "--first-round", str(args.first_round), "--total-rounds", str(args.total_rounds)]
            + (["--cpus", ",".join(map(str, slots[r]))] if slots else [])
            + (["--quick"] if args.quick else []) + (["--fake"] if args.fake else []),
            env=e, stdout=log, stderr=log,
            start_new_session=True))
    hard = deadline + 45
    while time.time() < hard and any(p.poll() is None for p in procs):
        time.sleep(0.5)
    status = []
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            status.append("killed at the hard deadline")
        else:
            status.append(p.returncode)
    return status


def merge(args, doc):
    raw = os.path.join(args.out, "raw")
    recs = []
    for f in sorted(os.listdir(raw)):
        if f.endswith(".jsonl"):
            with open(os.path.join(raw, f)) as fh:
                for line in fh:
                    try:
                        recs.append(json.loads(line))
                    except json.JSONDecodeError:
                        pass
    doc["records"] = recs
    logs = {}
    for f in sorted(os.listdir(raw)):
        if f.endswith(".log"):
            with open(os.path.join(raw, f), errors="replace") as fh:
                txt = fh.read()
            if f.startswith("nccl-"):
                keep = [ln for ln in txt.splitlines() if any(
                    k in ln for k in ("version", "channels", "Channel 00/", "Init COMPLETE",
                                      "nRanks", "Using network", "NVLS", "threadThresholds",
                                      "Algo", "Proto", "Ring", "Tree", "P2P/", "Connected"))]
                logs[f] = "\n".join(keep[:150])
            else:
                logs[f] = txt[-4000:]
    doc["logs"] = logs


def summary(doc):
    """A short table on stdout: step time (median ms) per model and configuration."""
    import statistics
    rows = {}
    for r in doc["records"]:
        c = r.get("config")
        if not c or "host" not in r:
            continue
        st = [h[-1] - h[0] for h in r["host"]]
        rows.setdefault((c["model"], c["name"]), []).append(statistics.median(st) * 1e3)
    models = sorted({k[0] for k in rows})
    names = ["solo", "ddp2", "ddp4", "ts2", "ts3", "mps1", "mps2", "mps3", "ddp2-nosync",
             "ddp2-b5", "ddp2-b100", "solo-end"]
    print("median step ms (mean over ranks)   " + " ".join(f"{n:>9}" for n in names))
    for m in models:
        cells = []
        for n in names:
            v = rows.get((m, n))
            cells.append(f"{sum(v) / len(v):9.2f}" if v else f"{'-':>9}")
        print(f"{m:34} " + " ".join(cells))
    for r in doc["records"]:
        c = r.get("config") or {}
        if c.get("kind") == "allreduce" and r.get("rank") == 0 and "sweep" in r:
            print(c["name"], " ".join(f"{s['bytes']}:{sorted(s['ms'])[3]:.4f}ms"
                                      for s in r["sweep"][::3]))
        if c.get("kind") == "overlap" and "mm_beside" in r:
            print("overlap rank", r["rank"], json.dumps({k: r[k] for k in r if k in (
                "mm_ms", "copy_ms", "ar_alone_ms", "mm_beside", "copy_beside")}))
        if "error" in r:
            print("ERROR", c.get("name"), c.get("model"), r["rank"], r["error"][-600:])


def mps_server_list(menv):
    """The MPS control daemon's server list (its answer, or the error that stopped the query)."""
    try:
        return subprocess.run(["nvidia-cuda-mps-control"], input="get_server_list\n", text=True,
                              capture_output=True, env=menv, timeout=20).stdout
    except Exception as e:  # noqa: BLE001
        return repr(e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-s", type=float, default=560)
    ap.add_argument("--phases", default="excl,mps")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--excl-frac", type=float, default=0.58,
                    help="share of the budget for the exclusive phase")
    ap.add_argument("--configs", default="", help="comma-separated configuration names "
                    "(solo, ddp2, ddp3, ddp4, ts2, ts3, ddp2-nosync, ddp2-b5, ddp2-b100, "
                    "solo-end, allreduce-2, allreduce-4, overlap, mps1-3); default all")
    ap.add_argument("--quiet-nccl", action="store_true",
                    help="no NCCL_DEBUG log (it writes a line per collective)")
    ap.add_argument("--rounds", type=int, default=1,
                    help="phases x2, x4: rounds of the rotated configurations (the budget may cut "
                    "the last ones)")
    ap.add_argument("--first-round", type=int, default=0,
                    help="phases x2, x4: the first round's index (a second recording continues the "
                    "rotation of the first)")
    ap.add_argument("--total-rounds", type=int, default=0,
                    help="phases x2, x4: the rounds of all recordings together, for the rotation "
                    "(default first-round + rounds)")
    ap.add_argument("--fake", action="store_true",
                    help="a small MLP on the CPU, gloo groups, no NVML, no MPS daemon: the "
                    "coordination without a GPU")
    ap.add_argument("--cpus", help=argparse.SUPPRESS)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--phase")
    ap.add_argument("--deadline", type=float)
    args = ap.parse_args()
    if args.worker:
        worker_main(args)
        return
    t0 = time.time()
    os.makedirs(os.path.join(args.out, "raw"), exist_ok=True)
    env = dict(os.environ, **ENV_FIXED)
    os.environ.update(ENV_FIXED)
    atexit.register(stop_mps)
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, lambda *_: sys.exit(130))
    doc = {"schema": "slicesim-ddp", "schema_version": 1, "models": {
        m: {"description": MODELS[m][0], "batch": MODELS[m][1], "timed_steps": MODELS[m][2]}
        for m in args.models.split(",")}, "warm_steps": WARM, "layout": LAYOUT,
        "groups": GROUPS, "phases": {}}
    doc["env"] = env_info()
    print(doc["env"]["git"], json.dumps(doc["env"]["versions"]), flush=True)
    print(doc["env"]["nvidia_smi_topo"], flush=True)
    phases = args.phases.split(",")
    rot_phase = next((p for p in ROTATED if p in phases), None)
    if rot_phase:
        slots, rest = cpu_slots(len(LAYOUT[rot_phase]))
        hostcpu.set_affinity(os.getpid(), set(rest))
        doc["cpu_slots"] = {"workers": slots, "launcher_and_mps_daemon": rest,
                            "lscpu_e": sh("lscpu -e")}
    sampler = None if args.fake else Sampler()
    end = t0 + args.budget_s
    try:
        if "x2" in phases:
            menv = dict(env, CUDA_MPS_PIPE_DIRECTORY="/tmp/ddp-mps-pipe",
                        CUDA_MPS_LOG_DIRECTORY="/tmp/ddp-mps-log")
            ph = {"rounds_asked": args.rounds, "mps_ranks": list(MPS_RANKS["x2"])}
            if not args.fake:
                os.makedirs(menv["CUDA_MPS_PIPE_DIRECTORY"], exist_ok=True)
                os.makedirs(menv["CUDA_MPS_LOG_DIRECTORY"], exist_ok=True)
                r = subprocess.run(["nvidia-cuda-mps-control", "-d"], env=menv,
                                   capture_output=True, text=True)
                MPS.update(started=r.returncode == 0, env=menv)
                ph.update(daemon_rc=r.returncode, daemon_stderr=r.stderr[-500:])
            if args.fake or MPS["started"]:
                ts = time.time()
                plain = {k: v for k, v in env.items() if not k.startswith("CUDA_MPS_")}
                st = run_phase(args, "x2", end - 25, env, 29700,
                               lambda rk: menv if rk in MPS_RANKS["x2"] and not args.fake
                               else plain, slots)
                ph.update(start=ts, end=time.time(), deadline=end - 25, exit=st)
                if not args.fake:
                    ph["server_list"] = mps_server_list(menv)
            stop_mps()
            ph["mps_control_left"] = os.path.exists(
                os.path.join(menv["CUDA_MPS_PIPE_DIRECTORY"], "control"))
            doc["phases"]["x2"] = ph
            print("x2 done", ph.get("exit"), round(time.time() - t0), "s", flush=True)
        if "x4" in phases:
            ts = time.time()
            st = run_phase(args, "x4", end - 25, env, 29800, None, slots)
            doc["phases"]["x4"] = {"rounds_asked": args.rounds, "start": ts, "end": time.time(),
                                   "deadline": end - 25, "exit": st}
            print("x4 done", st, round(time.time() - t0), "s", flush=True)
        if "excl" in phases:
            dl = t0 + args.budget_s * (args.excl_frac if "mps" in phases else 1.0) - 20
            ts = time.time()
            st = run_phase(args, "excl", dl, env, 29500)
            doc["phases"]["excl"] = {"start": ts, "end": time.time(), "deadline": dl,
                                     "exit": st}
            print("excl done", st, round(time.time() - t0), "s", flush=True)
        if "mps" in phases:
            menv = dict(env, CUDA_MPS_PIPE_DIRECTORY="/tmp/ddp-mps-pipe",
                        CUDA_MPS_LOG_DIRECTORY="/tmp/ddp-mps-log")
            os.makedirs(menv["CUDA_MPS_PIPE_DIRECTORY"], exist_ok=True)
            os.makedirs(menv["CUDA_MPS_LOG_DIRECTORY"], exist_ok=True)
            r = subprocess.run(["nvidia-cuda-mps-control", "-d"], env=menv,
                               capture_output=True, text=True)
            MPS.update(started=r.returncode == 0, env=menv)
            ph = {"daemon_rc": r.returncode, "daemon_stderr": r.stderr[-500:]}
            if MPS["started"]:
                ts = time.time()
                st = run_phase(args, "mps", end - 25, menv, 29600)
                ph.update(start=ts, end=time.time(), deadline=end - 25, exit=st)
                ph["server_list"] = mps_server_list(menv)
            stop_mps()
            for f in ("control.log", "server.log"):
                try:
                    with open(os.path.join(menv["CUDA_MPS_LOG_DIRECTORY"], f)) as fh:
                        ph[f + "_tail"] = fh.read()[-2000:]
                except OSError:
                    pass
            doc["phases"]["mps"] = ph
            print("mps done", ph.get("exit"), round(time.time() - t0), "s", flush=True)
    finally:
        stop_mps()
        doc["nvml"] = sampler.stop() if sampler else {"period_s": 0.05, "rows": []}
        merge(args, doc)
        doc["elapsed_s"] = time.time() - t0
        with open(os.path.join(args.out, "ddp.json"), "w") as fh:
            json.dump(doc, fh)
        with gzip.open(os.path.join(args.out, "ddp.json.gz"), "wt") as fh:
            json.dump(doc, fh)
    summary(doc)


if __name__ == "__main__":
    main()
