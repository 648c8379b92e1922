#!/usr/bin/env python3
"""calib/coloc/capfit.py - the MPS cap model fitted by hand on the recorded runs (issue 25).

Which part of a loop's iteration a CUDA_MPS_ACTIVE_THREAD_PERCENTAGE cap stretches, read off the
recordings alone (no simulator), spreadsheet-style:

1. The cap sweep (calib/coloc/mpscap.py, one process per cap): per loop, the kernel-busy time
   per iteration of the torch.profiler census G(s) at s SMs against 1/s. Fitted by least squares
   as G(s) = A + B * S / s (S = the GPU's SMs): B is the SM-bound time at all S SMs, A what no
   SM count moves. Also the best single parallelism P of G(s) = A' + C / min(s, P) (the model's
   form) over P = 8..S, and the host's enqueue time and the iteration time per process.
2. The bracketed tables (coloc.py --phases bracket): per loop and cap, the GPU time NVML gives
   (utilisation / rate) over the solo's, against the two ways of splitting the exclusive solo
   run with its NVML GPM and census figures (model/fit/wmeas.h):
     split A (before): P = a / b * S, compute C = P (G - M / BW(S)), G(s) = C / min(s, P) + M / BW(s)
     split B: the SMs hold a warp a * t of the run's time, on all S SMs: SM-bound time
              Tc = a t - M / BW(S), the rest of G, T0 = G - a t, held by no SM count:
              G(s) = T0 + Tc * S / s + M / BW(s)
   and the iteration t = max(H, G(s)) over the mean of its two bracketing solos (H = their
   iteration time), against the measured ratio.
BW(s) is the scenario calibration's triad curve (calib/results/2026-11-22-h200-sxm-x2-model.json),
M the GPM DRAM utilisation x 4.8 TB/s (the H200 datasheet) x t, as wmeas.c computes them.

Usage: python3 calib/coloc/capfit.py [SWEEP.json] [BRACKETED.json ...]
       (defaults: calib/coloc/2026-11-29-h200-mpscap.json and the four h200-coloc runs)
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SWEEP = os.path.join(HERE, "2026-11-29-h200-mpscap.json")
BRACKETED = [os.path.join(HERE, f + ".json") for f in
             ("2026-11-28-h200-x2-run1-gpu0", "2026-11-28-h200-x2-run2-gpu0",
              "2026-11-28-h200-x2-run2-gpu1", "2026-11-29-h200-run5")]
CALIB = os.path.join(ROOT, "calib", "results", "2026-11-22-h200-sxm-x2-model.json")
DATASHEET_BW = 4.8e12   # H200 HBM3e, bytes/s (model/hw catalog: H200-SXM5-141GB)
SMS = 132               # H200 multiProcessorCount (the sweep's uncapped client reports it)
BRACKET_CAPS = {1: 75, 3: 50, 5: 25}   # coloc.py --phases bracket: record position -> cap


def cap_sms(pct):
    """The measured rule (physics.yaml mps_sm_granule, mps_min_sms): whole TPCs, at least 8."""
    return max(8, 2 * math.floor(SMS * pct / 200 + 1e-9))


def triad_bw():
    cal = json.load(open(CALIB))
    t = [b for b in cal["bandwidth"] if b["kernel"] == "triad"][0]

    def bw(s):
        lin = t["per_sm_gb_s"] * s
        return 1e9 * lin / (1 + (lin / t["bmax_gb_s"]) ** t["sharpness"]) ** (1 / t["sharpness"])
    return bw


def lsq_line(xs, ys):
    """y = a + b x by least squares; (a, b, rms relative residual)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    rms = math.sqrt(sum(((a + b * x) / y - 1) ** 2 for x, y in zip(xs, ys)) / n)
    return a, b, rms


def sweep(path):
    d = json.load(open(path))
    print(f"== cap sweep {os.path.relpath(path, ROOT)} ({d['env']['gpu']}, {d['env']['uuid'][:12]}, "
          f"{d['env']['date_utc']}); one process per row, medians of {40} iterations")
    print("SMs a client reports per thread percentage: " + ", ".join(
        f"{r['thread_percentage']:g}%->{r['sms_reported']}" for r in d["sms"] if r.get("mps")))
    bad = [r for r in d["sms"] if r.get("mps") and r["sms_reported"] != cap_sms(r["thread_percentage"])]
    print(f"  against 2 floor({SMS} p / 200), at least 8: {len(bad)} differ")
    loops = {}
    for r in d["loops"]:
        loops.setdefault(r["workload"], []).append(r)
    for w, rs in loops.items():
        print(f"-- {w}")
        print("   config      SMs  iter ms  enqueue ms  busy ms  iter-busy  kernels")
        pts = []
        for r in rs:
            c = r.get("census") or {}
            it, enq, busy = (1e3 * r["iter_s_median"], 1e3 * r["host_enqueue_s_median"],
                             1e3 * c.get("busy_s_per_iter", 0))
            cfg = r["sharing"] if r["mps_percent"] is None else f"cap{r['mps_percent']}"
            print(f"   {cfg:10s} {r['sms_reported']:4d} {it:8.2f} {enq:11.2f} {busy:8.2f} "
                  f"{it - busy:10.2f} {c.get('kernels_per_iter', 0):8.0f}")
            if r["sharing"] == "mps" and busy > 0:
                pts.append((r["sms_reported"], busy))
        a, b, rms = lsq_line([SMS / s for s, _ in pts], [g for _, g in pts])
        g132 = a + b
        kern = (rs[-1].get("census") or {}).get("kernels_per_iter", 0)
        print(f"   G(s) = A + B {SMS}/s: A = {a:.2f} ms ({1e3 * a / kern:.1f} us per kernel), "
              f"B = {b:.2f} ms, SM-bound share B / G({SMS}) = {b / g132:.2f}, rms {100 * rms:.1f} % "
              f"over {len(pts)} SM counts")
        best = None
        for p in range(min(s for s, _ in pts) + 2, SMS + 1, 2):
            a2, c2, rms2 = lsq_line([1 / min(s, p) for s, _ in pts], [g for _, g in pts])
            if a2 >= 0 and (best is None or rms2 < best[0]):
                best = (rms2, p, a2, c2)
        print(f"   best single P of A' + C / min(s, P): P = {best[1]} (rms {100 * best[0]:.1f} %)")
        enq = [1e3 * r["host_enqueue_s_median"] for r in rs if r["mps_percent"] is None or
               (r.get("census") or {}).get("busy_s_per_iter", 1) * 1e3 < 0.8 * 1e3 * r["host_enqueue_s_median"]]
        print(f"   host enqueue of the processes whose GPU time stays under it: "
              f"{min(enq):.2f}-{max(enq):.2f} ms ({len(enq)} processes)")


def bracketed(paths, bw):
    print("== bracketed runs: GPU time (NVML utilisation / rate) under a cap over the solo's, "
          "and the iteration over the mean of its two bracketing solos")
    print("   table workload      cap  G meas   G split A  G split B   t meas   t A     t B")
    errs = {"A": [], "B": []}
    for path in paths:
        d = json.load(open(path))
        for w in d["census"]:
            solos = [r for r in d["runs"] if r["sharing"] == "exclusive" and
                     r["clients"][0]["workload"] == w]
            if not solos:
                continue
            # the exclusive solo as the tables average it: rate, NVML utilisation, GPM
            rate = sum(r["clients"][0]["rate_iter_per_s"] for r in solos) / len(solos)
            u = sum(r["nvml_util"]["gpu_pct"] for r in solos) / len(solos) / 100
            a = sum(r["nvml_util"]["gpm"]["sm_util_pct"] for r in solos) / len(solos) / 100
            dram = sum(r["nvml_util"]["gpm"]["dram_bw_util_pct"] for r in solos) / len(solos) / 100
            busy = d["census"][w]["busy_s_per_iter"] * rate   # busy_frac as table.py writes it
            t = 1 / rate
            g = u * t
            m_s = dram * DATASHEET_BW * t / bw(SMS)
            p = max(1, min(SMS, a / busy * SMS))
            comp_a = max(0.01 * g, g - m_s)
            tc_b = max(0.01 * g, a * t - m_s)
            t0_b = max(0.0, g - tc_b - m_s)
            rec = {r["bracket"]["pos"]: r for r in d["runs"] if r["sharing"] == "mps" and
                   r["k"] == 1 and r["clients"][0]["workload"] == w and "bracket" in r}
            for pos, cap in BRACKET_CAPS.items():
                if not all(q in rec for q in (pos - 1, pos, pos + 1)):
                    continue
                s = cap_sms(cap)
                rr = rec[pos]["clients"][0]["rate_iter_per_s"]
                gm = rec[pos]["nvml_util"]["gpu_pct"] / 100 / rr
                h = 2 / (rec[pos - 1]["clients"][0]["rate_iter_per_s"] +
                         rec[pos + 1]["clients"][0]["rate_iter_per_s"])
                mem = m_s * bw(SMS) / bw(s)
                ga = comp_a * p / min(s, p) + mem
                gb = t0_b + tc_b * SMS / s + mem
                ta, tb = max(h, ga) / h, max(h, gb) / h
                tm = (1 / rr) / h
                errs["A"].append(abs(ta / tm - 1))
                errs["B"].append(abs(tb / tm - 1))
                tag = os.path.basename(path)[11:-5]
                print(f"   {tag:10s} {w:13s} {cap:3d} {gm / g:7.2f} {ga / g:10.2f} {gb / g:10.2f} "
                      f"{tm:8.2f} {ta:6.2f} {tb:7.2f}")
    for k, e in errs.items():
        print(f"   split {k}: mean |t error| over the brackets {100 * sum(e) / len(e):.1f} % "
              f"({len(e)} rows)")


def main(args):
    paths = [a for a in args if a.endswith(".json")]
    sweeps = [p for p in paths if "mpscap" in p] or [SWEEP]
    brk = [p for p in paths if "mpscap" not in p] or BRACKETED
    bw = triad_bw()
    for p in sweeps:
        sweep(p)
    bracketed(brk, bw)


if __name__ == "__main__":
    main(sys.argv[1:])
