#!/usr/bin/env python3
"""calib/coloc/mpscap.py - one MPS client alone under CUDA_MPS_ACTIVE_THREAD_PERCENTAGE caps.

Two measurements, on one GPU, never changing its MIG mode, clocks, power limit or compute mode;
the MPS daemon it starts (private pipe and log directories) is stopped on every exit path.

1. SMs per thread percentage. calib/mpssms.cu (built here with nvcc -arch=sm_90) is started as
   an MPS client at each percentage of --pcts; it reports the device's multiProcessorCount as
   the client sees it and the distinct SMs (%smid) its kernels ran on. Also once without MPS.
2. Host and GPU time of coloc.py's PyTorch loops (--workloads) alone: without MPS, as an
   uncapped MPS client, and at each cap of --caps. Per configuration one process: warm-up
   (cudnn autotuning at the SM count this client sees), then --iters timed iterations, each
   split into the host's enqueue time (step start until the step's closing
   torch.cuda.synchronize() is called: Python, dispatch, launches) and the wait in that
   synchronisation; then a torch.profiler census (coloc.kernel_census) of kernels per iteration
   and their busy time, and the number of distinct kernel names.

Usage (on the GPU machine):
    python3 calib/coloc/mpscap.py --out DIR [--pcts 5,10,...] [--caps 50,25]
        [--workloads cnn_train,...] [--iters 40]
Output: DIR/mpscap.json (rewritten after every measurement).
"""
import argparse
import atexit
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import coloc  # noqa: E402  (build_workload, kernel_census, env_info)

MPS = {"env": None}


def stop_mps():
    if MPS["env"] is not None:
        subprocess.run(["nvidia-cuda-mps-control"], input="quit\n", text=True, env=MPS["env"],
                       timeout=30)
        MPS["env"] = None


def start_mps(base_env):
    d = tempfile.mkdtemp(prefix="mpscap-")
    env = dict(base_env, CUDA_MPS_PIPE_DIRECTORY=os.path.join(d, "pipe"),
               CUDA_MPS_LOG_DIRECTORY=os.path.join(d, "log"))
    os.makedirs(env["CUDA_MPS_PIPE_DIRECTORY"])
    os.makedirs(env["CUDA_MPS_LOG_DIRECTORY"])
    subprocess.run(["nvidia-cuda-mps-control", "-d"], env=env, check=True, timeout=30)
    MPS["env"] = env
    return env


def worker(name, iters):
    """One configuration of one workload; prints one JSON line."""
    import torch
    step = coloc.build_workload(name, False)
    t0 = time.time()
    while time.time() - t0 < 2.0:
        step()
    host, it = coloc.host_wait_split(step, iters)
    cen = coloc.kernel_census(step, False)
    names = set()
    try:
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
        names = {e.name for e in prof.events() if "cuda" in str(getattr(e, "device_type", "")).lower()}
    except Exception:  # noqa: BLE001
        pass
    p = torch.cuda.get_device_properties(0)
    print(json.dumps({"sms_reported": p.multi_processor_count,
                      "iter_s_median": statistics.median(it), "iter_s": it,
                      "host_enqueue_s_median": statistics.median(host), "host_enqueue_s": host,
                      "census": cen, "distinct_kernel_names": len(names)}), flush=True)


def run_worker(name, env, iters):
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name,
                        "--iters", str(iters)], env=env, capture_output=True, text=True,
                       timeout=300)
    line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    try:
        return json.loads(line)
    except ValueError:
        return {"error": (r.stderr or "")[-1500:]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=".")
    ap.add_argument("--worker")
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--pcts", default="1,2,3,4,5,6,7,8,9,10,12,15,20,25,30,33,40,50,60,66,75,"
                                      "80,90,100")
    ap.add_argument("--caps", default="50,25")
    ap.add_argument("--workloads", default="cnn_train,tfm_train,tfm_infer,cnn_infer_b128")
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.iters)
        return
    os.makedirs(args.out, exist_ok=True)
    atexit.register(stop_mps)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, lambda *_: sys.exit(130))
    t_start = time.time()
    doc = {"schema": "slicesim-mpscap", "schema_version": 1, "script": "calib/coloc/mpscap.py",
           "env": coloc.env_info(False), "sms": [], "loops": [], "errors": []}
    path = os.path.join(args.out, "mpscap.json")

    def save():
        doc["elapsed_s"] = time.time() - t_start
        with open(path + ".tmp", "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(path + ".tmp", path)

    binary = os.path.join(tempfile.mkdtemp(prefix="mpssms-"), "mpssms")
    calib = os.path.dirname(HERE)
    subprocess.run(["nvcc", "-arch=sm_90", "-O2", "-o", binary,
                    os.path.join(calib, "mpssms.cu"), "-lcuda"], check=True, timeout=300)
    base = dict(os.environ)
    base.pop("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", None)

    def probe(env, pct):
        r = subprocess.run([binary], env=env, capture_output=True, text=True, timeout=60)
        try:
            rec = json.loads(r.stdout)
        except ValueError:
            rec = {"error": (r.stderr or r.stdout)[-500:]}
        rec.update({"mps": env is not base, "thread_percentage": pct})
        doc["sms"].append(rec)
        print("sms", json.dumps(rec), flush=True)

    workloads = [w for w in args.workloads.split(",") if w]
    probe(base, None)
    for w in workloads:
        rec = run_worker(w, base, args.iters)
        rec.update({"workload": w, "sharing": "exclusive", "mps_percent": None})
        doc["loops"].append(rec)
        save()
        print("loop", w, "exclusive", rec.get("iter_s_median"), rec.get("host_enqueue_s_median"),
              flush=True)
    env = start_mps(base)
    r = subprocess.run(["nvidia-cuda-mps-control"], input="get_server_list\n", text=True,
                       capture_output=True, env=env, timeout=30)
    for p in [float(x) for x in args.pcts.split(",") if x]:
        probe(dict(env, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=("%g" % p)), p)
    save()
    for w in workloads:
        for cap in [None] + [int(c) for c in args.caps.split(",") if c]:
            e = dict(env) if cap is None else dict(env, CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=str(cap))
            rec = run_worker(w, e, args.iters)
            rec.update({"workload": w, "sharing": "mps", "mps_percent": cap})
            doc["loops"].append(rec)
            save()
            print("loop", w, "mps", cap, rec.get("sms_reported"), rec.get("iter_s_median"),
                  rec.get("host_enqueue_s_median"), (rec.get("census") or {}).get("kernels_per_iter"),
                  flush=True)
    r2 = subprocess.run(["nvidia-cuda-mps-control"], input="get_server_list\n", text=True,
                        capture_output=True, env=env, timeout=30)
    doc["mps_daemon"] = {"server_list": r.stdout.strip() or r2.stdout.strip()}
    stop_mps()
    save()


if __name__ == "__main__":
    main()
