#!/usr/bin/env python3
"""calib/coloc/cpuscale.py - the host's CPU throughput under n busy threads, and whether a
bracketed table's clients follow it (issue 25; run_cpuscale.sh records both on one machine).

Reads run_cpuscale.sh's recordings: the CPU-scaling sweeps (hostcpu.py --phases burn: n CPU-only
processes of a fixed work, n = 1 first and last) and the bracketed table (coloc.py --phases
bracket, whose records carry each client's host enqueue CPU time per sub-window,
host_cpu_s_reps). Prints
  - per sweep and burner kind, the mean rate of the n processes over the mean of the two lone
    runs (r(n); the node factor a host term would use is f(n) = 1 / r(n)), and the processes'
    spread at n = 16 (slowest, fastest over the lone mean);
  - per workload and bracketed configuration (caps, k clients): the clients' mean rate over the
    mean of the two lone MPS clients around it, and their mean enqueue CPU time per iteration over
    the brackets' (x host), beside the sweeps' mean f(k) (interpolated linearly in n).
Usage: python3 calib/coloc/cpuscale.py --sweeps A.json,B.json,.. --table T.json [--table T2.json]
"""
import argparse
import json
import statistics as st


def sweep_curve(path):
    """{kind: {n: r(n)}} and {kind: (lone mean, slowest, fastest at the largest n)}."""
    doc = json.load(open(path))
    runs = {}
    for r in doc["runs"]:
        rates = [c["rate_iter_per_s"] for c in r["clients"]]
        runs.setdefault(r["workload"], []).append((r["k"], rates))
    curve, spread = {}, {}
    for kind, v in runs.items():
        if len(v) < 3 or v[0][0] != 1 or v[-1][0] != 1:
            continue
        lone = (v[0][1][0] + v[-1][1][0]) / 2
        curve[kind] = {k: st.mean(rates) / lone for k, rates in v[1:-1]}
        kmax, rmax = max(v[1:-1])
        spread[kind] = (lone, min(rmax) / lone, max(rmax) / lone, v[0][1][0], v[-1][1][0], kmax)
    return curve, spread


def interp(curve, n):
    """r(n) from a {n: r} curve with r(1) = 1, linear in n between measured counts."""
    pts = sorted({**curve, 1: 1.0}.items())
    for (a, ra), (b, rb) in zip(pts, pts[1:]):
        if a <= n <= b:
            return ra + (rb - ra) * (n - a) / (b - a)
    return pts[-1][1]


def client_means(rec):
    rate = st.mean(c["rate_iter_per_s"] for c in rec["clients"])
    host = [h for c in rec["clients"] for h in (c.get("host_cpu_s_reps") or []) if h is not None]
    return rate, (st.mean(host) if host else None)


def bracket_rows(path):
    """(workload, configuration, k, rate / brackets, host CPU / brackets) per bracketed MPS
    configuration of a coloc.py --phases bracket recording."""
    doc = json.load(open(path))
    seq = {}
    for r in doc["runs"]:
        b = r.get("bracket")
        if r.get("sharing") != "mps" or not b or not isinstance(b.get("pos"), int):
            continue
        seq.setdefault(b["workload"], {})[b["pos"]] = r
    out = []
    for w, by in seq.items():
        for pos in sorted(p for p in by if p % 2 == 1):
            if pos - 1 not in by or pos + 1 not in by:
                continue
            r = by[pos]
            cfg = f"cap{r['mps_percent']}" if r["kind"] == "cap" else f"mps{r['k']}"
            (ra, ha), (rb, hb), (rc, hc) = (client_means(by[p]) for p in (pos - 1, pos, pos + 1))
            host = hb / ((ha + hc) / 2) if None not in (ha, hb, hc) else None
            out.append((w, cfg, r["k"], rb / ((ra + rc) / 2), host))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sweeps", required=True, help="comma-separated hostcpu.py burn recordings")
    ap.add_argument("--table", action="append", default=[], help="coloc.py bracket recording")
    args = ap.parse_args()
    curves = []
    print("sweep kind lone(first,last) r(n) = mean rate at n busy / lone mean; at the largest n "
          "the slowest and fastest process")
    for path in args.sweeps.split(","):
        curve, spread = sweep_curve(path)
        for kind, c in curve.items():
            lone, lo, hi, first, last, kmax = spread[kind]
            cs = " ".join(f"r({n})={v:.2f}" for n, v in sorted(c.items()))
            print(f"{path.rsplit('/', 1)[-1]} {kind} lone {first:.0f},{last:.0f} {cs} "
                  f"n={kmax}: {lo:.2f}..{hi:.2f}")
            curves.append(c)
    print("workload config k rate/brackets host_cpu/brackets 1/rate f(k)=1/mean r(k) "
          "[min..max over sweeps]")
    for path in args.table:
        for w, cfg, k, rate, host in bracket_rows(path):
            rs = [interp(c, k) for c in curves]
            f = 1 / st.mean(rs)
            hs = f"{host:.2f}" if host is not None else "-"
            print(f"{w} {cfg} {k} {rate:.2f} {hs} {1 / rate:.2f} f={f:.2f} "
                  f"[{1 / max(rs):.2f}..{1 / min(rs):.2f}]")


if __name__ == "__main__":
    main()
