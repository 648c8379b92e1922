#!/usr/bin/env python3
"""calib/coloc/launchceil.py - the kernel launch ceiling of k MPS clients (issue 25).

Question: do the kernels of different MPS clients cost each other a fixed time per kernel (a
launch or dispatch path they share), or does each client's launch rate stay its own until the
SMs are full? NVIDIA's MPS guide says Volta+ clients "submit work directly to the GPU without
passing through the MPS server" (docs.nvidia.com/deploy/mps, "Volta MPS"), while the server owns
"one set of GPU scheduling resources" shared by all its clients ("When to use MPS").

For each kernel shape (calib/mpslaunch.cu: grid, per-block spin, host gap, synchronisation) it
runs one exclusive client (no daemon) before and after the MPS part, then under one MPS control
daemon (own pipe and log directories) k = 1, 2, 1, 4, 1, 6, 1, 8, 1 identical clients at once,
each over --windows windows of --window-s seconds from a common wall-clock start: every k > 1
configuration is bracketed by a lone MPS client. Per configuration it records each client's
per-window launches, seconds and rate; the aggregate is the sum of the clients' rates.
Never changes MIG mode, clocks, power limit or compute mode; stops the daemon it starts on every
exit path (try/finally) and waits until its pipe is gone.

usage: python3 calib/coloc/launchceil.py --out DIR [--bin calib/bin/mpslaunch] [--budget-s 480]
Writes DIR/launchceil.json.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

SHAPES = [  # name, blocks, threads, spin_ns, gap_ns, sync_every
    ("empty1", 1, 32, 0, 0, 0),          # an empty one-block kernel, back to back
    ("empty132", 132, 128, 0, 0, 0),     # an empty kernel of one block per SM
    ("spin2us_b8", 8, 128, 2000, 0, 0),  # 2 us on 8 SMs: leaves the others idle
    ("spin5us_b132", 132, 128, 5000, 0, 0),  # 5 us on every SM
    ("gap20us", 1, 32, 0, 20000, 0),     # an empty kernel every 20 us of host time
    ("sync1", 1, 32, 0, 0, 1),           # launch and wait: the round trip
]
KS = [1, 2, 1, 4, 1, 6, 1, 8, 1]
STATE = {"mps_env": None}


def sh(cmd):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
    return (r.stdout + r.stderr).strip()


def run_clients(binary, shape, k, env, windows, window_s, lead_s):
    """k clients of one shape from a common start; their JSON objects (or an error string)."""
    _, blocks, threads, spin, gap, sync = shape
    start_at = time.time_ns() + int(lead_s * 1e9)
    args = [binary, "--start-at", str(start_at), "--blocks", str(blocks), "--threads",
            str(threads), "--spin-ns", str(spin), "--gap-ns", str(gap), "--sync-every", str(sync),
            "--windows", str(windows), "--window-s", str(window_s)]
    procs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(k)]
    out = []
    for p in procs:
        o, e = p.communicate(timeout=lead_s + windows * window_s + 60)
        try:
            out.append(json.loads(o))
        except ValueError:
            out.append({"error": (o + e)[-400:], "rc": p.returncode})
    return out


def summary(clients):
    ok = [c for c in clients if "windows" in c]
    if len(ok) != len(clients):
        return {"ok": False}
    n_w = min(len(c["windows"]) for c in ok)
    agg = [sum(c["windows"][w]["rate"] for c in ok) for w in range(n_w)]
    late = max(c["late_ns"] for c in ok)
    return {"ok": True, "aggregate_rate": agg, "per_client_mean": [a / len(ok) for a in agg],
            "max_late_ns": late, "sms": [c["sms"] for c in ok]}


def start_mps(d):
    env = dict(os.environ, CUDA_MPS_PIPE_DIRECTORY=d + "-pipe", CUDA_MPS_LOG_DIRECTORY=d + "-log")
    for x in ("-pipe", "-log"):
        shutil.rmtree(d + x, ignore_errors=True)
        os.makedirs(d + x)
    r = subprocess.run(["nvidia-cuda-mps-control", "-d"], env=env, capture_output=True, text=True)
    if r.returncode == 0:
        STATE["mps_env"] = env
    return env, r.returncode


def stop_mps():
    env = STATE["mps_env"]
    if env is None:
        return
    subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", text=True, env=env, timeout=30)
    STATE["mps_env"] = None
    ctl = os.path.join(env["CUDA_MPS_PIPE_DIRECTORY"], "control")
    end = time.time() + 15
    while os.path.exists(ctl) and time.time() < end:
        time.sleep(0.2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "bin",
                                                  "mpslaunch"))
    ap.add_argument("--budget-s", type=float, default=480)
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--window-s", type=float, default=0.5)
    ap.add_argument("--lead-s", type=float, default=2.5)
    ap.add_argument("--mps-dir", default="/tmp/launchceil-mps")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    t0 = time.time()
    shapes = [s for s in SHAPES if not a.only or s[0] in a.only.split(",")]
    doc = {"schema": 1, "date_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
           "command": " ".join(sys.argv), "windows": a.windows, "window_s": a.window_s,
           "env": {"nvidia_smi": sh("nvidia-smi --query-gpu=name,uuid,driver_version,"
                                    "compute_mode,mig.mode.current,power.limit,clocks.max.sm "
                                    "--format=csv,noheader"),
                   "nvcc": sh("nvcc --version | tail -2"), "nproc": os.cpu_count()},
           "shapes": [dict(zip(("name", "blocks", "threads", "spin_ns", "gap_ns", "sync_every"),
                               s)) for s in shapes],
           "runs": [], "cut": []}
    base = dict(os.environ)
    for k in ("CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"):
        base.pop(k, None)

    def record(mode, shape, k, env):
        if time.time() - t0 > a.budget_s:
            doc["cut"].append({"mode": mode, "shape": shape[0], "k": k})
            return
        cl = run_clients(a.bin, shape, k, env, a.windows, a.window_s, a.lead_s)
        r = {"mode": mode, "shape": shape[0], "k": k, "t_s": round(time.time() - t0, 1),
             "clients": cl}
        r.update(summary(cl))
        doc["runs"].append(r)
        agg = r.get("aggregate_rate")
        print(f"{r['t_s']:7.1f}s {mode:9s} {shape[0]:13s} k={k} aggregate "
              f"{[round(x) for x in agg] if agg else cl[0]}", flush=True)

    try:
        for s in shapes:
            record("exclusive", s, 1, base)
        env, rc = start_mps(a.mps_dir)
        doc["mps_daemon_rc"] = rc
        if rc == 0:
            for s in shapes:
                for k in KS:
                    record("mps", s, k, env)
            doc["mps_server_list"] = sh("echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=" +
                                        env["CUDA_MPS_PIPE_DIRECTORY"] + " nvidia-cuda-mps-control")
    finally:
        stop_mps()
    for s in shapes:
        record("exclusive", s, 1, base)
    doc["elapsed_s"] = round(time.time() - t0, 1)
    with open(os.path.join(a.out, "launchceil.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
