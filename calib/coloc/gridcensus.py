#!/usr/bin/env python3
"""gridcensus.py - the grid of every kernel of calib/coloc's workloads, alone on one GPU.

Why (calib/coloc/NOTES-h200.md 'mpsknee'): the MPS model shrinks a client's kernels continuously
with the SMs it gets (time ~ 1 / s), while a kernel of B blocks, r of which fit on an SM at once,
runs in ceil(B / (r s)) waves on s SMs. Where most of a loop's kernel time is in kernels of one
partial wave (B < r x SMs), squeezing them loses up to a wave's worth of SMs; where it is in
kernels of many waves, the continuous rule holds. The kernel census of coloc.py records kernel
counts and times but no grids; torch.profiler's chrome trace carries each kernel's grid, block,
registers per thread and shared memory (kineto's "kernel" events), read here.

Per workload: warm-up iterations, then PROF_ITERS iterations under torch.profiler (CUDA activity
only), the trace exported and parsed. For each kernel: blocks B = grid x*y*z, threads per block,
the blocks resident per SM r from the H100/H200 limits (2048 threads, 65 536 registers, 228 KiB
of shared memory, 32 blocks per SM; registers allocated per warp in units of 256) and its waves
B / (r x SMs). Kernel-time-weighted summaries: the share of kernel time in kernels of at most one
wave, of 1-2 waves and of more; the time-weighted mean of min(B, SMs) (the SMs a one-wave kernel
spreads over, comparable to the census' P = a / b x SMs); and the 40 kernels with most time.

  python3 calib/coloc/gridcensus.py --out OUT.json [--only w1,w2] [--iters N]
  python3 calib/coloc/gridcensus.py --summary OUT.json        # print the summaries again
"""
import argparse
import json
import math
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import coloc  # noqa: E402  (build_workload, WORKLOADS)

SM_THREADS = 2048
SM_REGS = 65536
SM_SMEM = 228 * 1024
SM_BLOCKS = 32
REG_UNIT = 256  # registers are allocated per warp in units of 256


def resident_blocks(threads, regs, smem):
    """Blocks of one kernel an SM holds at once (Hopper limits; 0 when unknown)."""
    if threads <= 0:
        return 0
    warps = math.ceil(threads / 32)
    r = min(SM_BLOCKS, SM_THREADS // (warps * 32))
    if regs > 0:
        per_warp = math.ceil(regs * 32 / REG_UNIT) * REG_UNIT
        r = min(r, SM_REGS // (per_warp * warps))
    if smem > 0:
        r = min(r, SM_SMEM // smem)
    return max(r, 0)


def kernels_of_trace(path):
    """(name, dur_us, blocks, threads, regs, smem) of every kernel event of a chrome trace."""
    with open(path) as f:
        tr = json.load(f)
    out = []
    for e in tr.get("traceEvents", []):
        if e.get("cat") != "kernel":
            continue
        a = e.get("args", {})
        g = a.get("grid", [0, 0, 0])
        b = a.get("block", [0, 0, 0])
        out.append((e.get("name", "?"), float(e.get("dur", 0)),
                    int(g[0]) * int(g[1]) * int(g[2]), int(b[0]) * int(b[1]) * int(b[2]),
                    int(a.get("registers per thread", 0)), int(a.get("shared memory", 0))))
    return out


def summarise(kernels, sms, iters):
    tot = sum(k[1] for k in kernels) or 1.0
    one = two = many = unknown = spread = 0.0
    rows = {}
    for name, dur, blocks, threads, regs, smem in kernels:
        r = resident_blocks(threads, regs, smem)
        if r <= 0 or blocks <= 0:
            unknown += dur
            continue
        waves = blocks / (r * sms)
        if waves <= 1:
            one += dur
        elif waves <= 2:
            two += dur
        else:
            many += dur
        spread += dur * min(blocks, sms)
        key = (name[:120], blocks, threads, regs, smem)
        rows.setdefault(key, [0, 0.0, waves, r])
        rows[key][0] += 1
        rows[key][1] += dur
    top = sorted(rows.items(), key=lambda kv: -kv[1][1])[:40]
    return {
        "kernels_per_iter": len(kernels) / iters,
        "kernel_s_per_iter": tot * 1e-6 / iters,
        "share_waves_le1": one / tot, "share_waves_1_2": two / tot, "share_waves_gt2": many / tot,
        "share_unknown": unknown / tot,
        "mean_sms_spread": spread / max(tot - unknown, 1e-9),
        "top": [{"name": k[0], "blocks": k[1], "threads": k[2], "regs": k[3], "smem": k[4],
                 "count_per_iter": v[0] / iters, "s_per_iter": v[1] * 1e-6 / iters,
                 "waves": v[2], "resident_per_sm": v[3]} for k, v in top],
    }


def census(name, iters, sms):
    import torch
    from torch.profiler import ProfilerActivity, profile
    step = coloc.build_workload(name, False)
    t_end = time.perf_counter() + 3.0
    n = 0
    while n < 20 or time.perf_counter() < t_end:
        step()
        n += 1
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            step()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        ks = kernels_of_trace(path)
    finally:
        os.unlink(path)
    torch.cuda.synchronize()
    return summarise(ks, sms, iters)


def print_summary(doc):
    print(f"gridcensus on {doc.get('gpu', '?')} ({doc.get('sms', '?')} SMs)")
    for name, s in doc["workloads"].items():
        if "error" in s:
            print(f"{name}: error {s['error']}")
            continue
        print(f"{name}: {s['kernels_per_iter']:.0f} kernels, {s['kernel_s_per_iter'] * 1e3:.2f} ms"
              f" an iteration; kernel time in <=1 wave {s['share_waves_le1']:.2f}, 1-2 waves "
              f"{s['share_waves_1_2']:.2f}, >2 waves {s['share_waves_gt2']:.2f}, unknown "
              f"{s['share_unknown']:.2f}; time-weighted min(blocks, SMs) "
              f"{s['mean_sms_spread']:.1f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--only", default="cnn_infer_b1,cnn_infer_b8,cnn_train,tfm_train,tfm_infer,"
                                      "host_loop")
    ap.add_argument("--iters", type=int, default=coloc.PROF_ITERS)
    ap.add_argument("--summary", metavar="JSON")
    a = ap.parse_args()
    if a.summary:
        with open(a.summary) as f:
            print_summary(json.load(f))
        return
    if not a.out:
        ap.error("--out is required (or --summary JSON)")
    import torch
    props = torch.cuda.get_device_properties(0)
    doc = {"schema": "slicesim-gridcensus", "schema_version": 1, "script": "calib/coloc/gridcensus.py",
           "argv": sys.argv[1:], "gpu": props.name, "sms": props.multi_processor_count,
           "torch": torch.__version__, "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "limits": {"threads": SM_THREADS, "regs": SM_REGS, "smem": SM_SMEM, "blocks": SM_BLOCKS},
           "workloads": {}}
    for name in a.only.split(","):
        if name not in coloc.WORKLOADS:
            ap.error(f"--only: unknown workload {name!r} (known: {', '.join(coloc.WORKLOADS)})")
        try:
            doc["workloads"][name] = census(name, a.iters, props.multi_processor_count)
        except Exception as e:  # noqa: BLE001
            doc["workloads"][name] = {"error": repr(e)[-500:]}
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=1)
    print_summary(doc)


if __name__ == "__main__":
    main()
