#!/bin/sh
# calib/ddp/run_x2.sh - one recording of ddp.py --phases x2 on a host of two GPUs (rotated rounds,
# pinned processes; calib/ddp/NOTES.md 'A lower-noise table on 2 GPUs'), with its environment
# and the check that no MPS daemon outlives it. The raw per-process files stay in /tmp; OUT gets
# NAME.json.gz (the merged recording), NAME.log (ddp.py's output) and NAME-env.txt.
# Never touches MIG mode, clocks, power limit or compute mode; NVLink multicast stays off
# (ddp.py sets NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1).
# Usage: [PHASE=x4] sh calib/ddp/run_x2.sh OUT NAME BUDGET_S ROUNDS FIRST_ROUND TOTAL_ROUNDS [ddp.py flags]
# PHASE=x4: the 2 -> 4 GPU scaling rows on a host of four GPUs in the same protocol (solo, ddp2,
# ddp4 rotated; NOTES.md 'A lower-noise 4-GPU scaling table'); no MPS daemon is started then.
set -u
phase=${PHASE:-x2}
out=$1; name=$2; budget=$3; rounds=$4; first=$5; total=$6
shift 6
here=$(dirname "$0")
raw=/tmp/ddp-$phase-$name
rm -rf "$raw"
mkdir -p "$out"
export PYTHONUNBUFFERED=1
{
    date -u; nproc
    nvidia-smi --query-gpu=index,name,uuid,driver_version,compute_mode,mig.mode.current,power.limit,clocks.max.sm --format=csv
    nvidia-smi topo -m
    lscpu | head -20
    python3 -c 'import torch, torchvision, transformers; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())), "torchvision", torchvision.__version__, "transformers", transformers.__version__)'
    echo "mps before (pgrep -x nvidia-cuda-mps): $(pgrep -x nvidia-cuda-mps || echo none)"
} >"$out/$name-env.txt" 2>&1
python3 "$here/ddp.py" --out "$raw" --phases "$phase" --budget-s "$budget" --rounds "$rounds" \
    --first-round "$first" --total-rounds "$total" --quiet-nccl "$@" >"$out/$name.log" 2>&1
rc=$?
cp "$raw/ddp.json.gz" "$out/$name.json.gz"
if [ -e /tmp/ddp-mps-pipe/control ]; then   # belt and braces: ddp.py quits its daemon itself
    echo quit | CUDA_MPS_PIPE_DIRECTORY=/tmp/ddp-mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/ddp-mps-log \
        nvidia-cuda-mps-control >>"$out/$name-env.txt" 2>&1
    echo "daemon still up at the end, told to quit" >>"$out/$name-env.txt"
    sleep 2
fi
{
    echo "mps after (pgrep -x nvidia-cuda-mps): $(pgrep -x nvidia-cuda-mps || echo none)"
    echo "ddp.py exit $rc"; date -u
} >>"$out/$name-env.txt" 2>&1
exit $rc
