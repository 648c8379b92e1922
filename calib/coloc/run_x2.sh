#!/bin/sh
# calib/coloc/run_x2.sh - two bracketed co-location tables at once, one per GPU of a 2-GPU host
# (coloc.py --phases bracket): GPU 0 measures the workloads of $1, GPU 1 those of $2, each
# invocation pinned to its own half of the CPUs, with its own MPS control daemon
# (CUDA_VISIBLE_DEVICES, its own CUDA_MPS_PIPE_DIRECTORY / CUDA_MPS_LOG_DIRECTORY). Both daemons
# are told to quit at the end whatever happened (coloc.py also stops its own on every exit path).
# Never touches MIG mode, clocks, power limit or compute mode.
# Usage: sh calib/coloc/run_x2.sh W0,W1,.. W2,W3,.. OUTDIR [BUDGET_S] [extra coloc.py flags]
# Writes OUTDIR/gpu0.json, gpu0.log, gpu1.json, gpu1.log, env.txt.
set -u
only0=$1; only1=$2; out=$3; budget=${4:-480}
shift 3; [ $# -gt 0 ] && shift
here=$(dirname "$0")
mkdir -p "$out"
export CUDA_DEVICE_ORDER=PCI_BUS_ID PYTHONUNBUFFERED=1
n=$(nproc); half=$((n / 2))
{
    date -u; nproc; nvidia-smi --query-gpu=index,name,uuid,driver_version,compute_mode,mig.mode.current,power.limit,clocks.max.sm --format=csv
    python3 -c 'import torch, torchvision, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "torchvision", torchvision.__version__, "transformers", transformers.__version__)'
} >"$out/env.txt" 2>&1
pids=""
for g in 0 1; do
    if [ $g -eq 0 ]; then only=$only0; cpus="0-$((half - 1))"; else only=$only1; cpus="$half-$((n - 1))"; fi
    [ -n "$only" ] || continue
    d=/tmp/coloc-mps-gpu$g
    rm -rf "$d-pipe" "$d-log"
    (mkdir -p "$out/gpu$g"; CUDA_VISIBLE_DEVICES=$g taskset -c "$cpus" python3 "$here/coloc.py" \
        --out "$out/gpu$g" --phases bracket --gpu $g --mps-dir "$d" --only "$only" \
        --repeats 3 --window-s 1 --budget-s "$budget" "$@" >"$out/gpu$g.log" 2>&1;
     mv "$out/gpu$g/coloc.json" "$out/gpu$g.json"; rmdir "$out/gpu$g") &
    pids="$pids $!"
done
for p in $pids; do wait "$p"; done
for g in 0 1; do   # belt and braces: the daemons must not outlive the command
    d=/tmp/coloc-mps-gpu$g
    if [ -e "$d-pipe/control" ]; then
        echo quit | CUDA_MPS_PIPE_DIRECTORY="$d-pipe" CUDA_MPS_LOG_DIRECTORY="$d-log" \
            nvidia-cuda-mps-control >>"$out/env.txt" 2>&1
        echo "gpu$g: daemon still up at the end, told to quit" >>"$out/env.txt"
    fi
done
ps -eo pid,args | grep -c '[n]vidia-cuda-mps' >>"$out/env.txt"
date -u >>"$out/env.txt"
