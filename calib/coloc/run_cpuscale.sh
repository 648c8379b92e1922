#!/bin/sh
# calib/coloc/run_cpuscale.sh - one bracketed co-location table on one GPU (coloc.py --phases
# bracket, which records each window's host enqueue CPU time) between two CPU-scaling sweeps of
# the same machine (hostcpu.py --phases burn: 1, 2, 4, 8, 16 busy CPU-only processes, an
# interpreter loop and tiny PyTorch CPU operations), so that the host's CPU throughput under n busy
# threads is measured on the machine and in the call that measured the table (issue 25).
# Never touches MIG mode, clocks, power limit or compute mode; the MPS daemon is told to quit at
# the end whatever happened (coloc.py also stops its own on every exit path).
# Usage: sh calib/coloc/run_cpuscale.sh W1,W2,.. OUTDIR [BUDGET_S] [BURN_NS] [--fake]
# (--fake: both scripts' CPU sleep workloads and no NVML, to test the script without a GPU)
# Writes OUTDIR/coloc.json, coloc.log, cpuscale-before.json/.log, cpuscale-after.json/.log, env.txt.
set -u
only=$1; out=$2; budget=${3:-420}; ns=${4:-1,2,4,8,16}
fake=""
for a in "$@"; do [ "$a" = --fake ] && fake=--fake; done
here=$(dirname "$0")
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{
    date -u; nproc; lscpu; cat /proc/loadavg
    nvidia-smi --query-gpu=index,name,uuid,driver_version,compute_mode,mig.mode.current,power.limit,clocks.max.sm --format=csv
    python3 -c 'import torch, torchvision, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "torchvision", torchvision.__version__, "transformers", transformers.__version__)'
} >"$out/env.txt" 2>&1
burn() {   # $1: before | after
    python3 "$here/hostcpu.py" --out "$out/cs-$1" --phases burn --burn-ns "$ns" --repeats 2 \
        --window-s 1 --budget-s 90 $fake >"$out/cpuscale-$1.log" 2>&1
    mv "$out/cs-$1/hostcpu.json" "$out/cpuscale-$1.json"; rmdir "$out/cs-$1"
}
burn before
d=/tmp/coloc-mps-cs
rm -rf "$d-pipe" "$d-log"
python3 "$here/coloc.py" --out "$out/table" --phases bracket --gpu 0 --mps-dir "$d" \
    --only "$only" --repeats 3 --window-s 1 --budget-s "$budget" $fake >"$out/coloc.log" 2>&1
mv "$out/table/coloc.json" "$out/coloc.json"; rmdir "$out/table"
if [ -e "$d-pipe/control" ]; then   # belt and braces: the daemon must not outlive the command
    echo quit | CUDA_MPS_PIPE_DIRECTORY="$d-pipe" CUDA_MPS_LOG_DIRECTORY="$d-log" \
        nvidia-cuda-mps-control >>"$out/env.txt" 2>&1
    echo "daemon still up at the end, told to quit" >>"$out/env.txt"
fi
burn after
ps -eo pid,args | grep -c '[n]vidia-cuda-mps' >>"$out/env.txt"
date -u >>"$out/env.txt"
