#!/bin/sh
# workloads/library/fit-all.sh - regenerate every library profile from its observations in obs/
# with `slicesim fit-workload` (run from the repository root after `make`). Re-run it when
# model/physics/physics.yaml or workloads/priors.yaml change, and review the diff.
set -eu
L=workloads/library
fit() { # NAME CLASS SOURCE
    ./slicesim fit-workload "$L/obs/$1.yaml" -o "$L/$1.yaml" --class "$2" --source "$3" \
        >"${FIT_LOG_DIR:-/tmp}/fit-$1.txt"
    echo "fitted $L/$1.yaml ($(sed -n 2p "${FIT_LOG_DIR:-/tmp}/fit-$1.txt"))"
}
fit simpletrack compute-bound-simulation "CERN 'Efficient Access to Shared GPU Resources' part 5, tables 'Full GPU vs MIG enabled' and 'Running simulation on different MIG partitions' (A100 40GB PCIe; shared/validation/cern-simpletrack.csv), all 15 cells"
fit cern-finetune transformer-training "CERN 'Efficient Access to Shared GPU Resources' part 5, section 'Machine Learning Training' (A100 40GB PCIe; shared/validation/cern-finetune.csv), 22 of 24 rows: the 7g-vs-3g 5000-sample pair left out (copy error in the source)"
fit resnet50-train cnn-training "MIGProfiler (HuaizhengZhang/MIGProfiler @5462a7c1) data/A100-80g/train/cv, published-tables.md table 1.1a: batch 32 and 64 on 7g.80gb, 3g.40gb, 2g.20gb, 1g.10gb (8 rows, with DCGM GR-engine-active)"
fit vit-b16-infer small-batch-inference "MIGProfiler (HuaizhengZhang/MIGProfiler @5462a7c1) data/A100-80g/infer/cv, published-tables.md table 1.1b: vision_transformer batch 1 and 2 on every profile (8 rows, with DCGM GR-engine-active)"
fit bert-base-train transformer-training "MIGProfiler (HuaizhengZhang/MIGProfiler @5462a7c1) data/A100-80g/train/nlp/nlp_train_bsz.csv, published-tables.md table 1.1c: sequence 64, batch 32 and 64 on every profile (8 rows, latency)"
fit yolos-small-infer small-batch-inference "nebuly-ai/nos demos/gpu-sharing-comparison/README.md, published-tables.md table 2.1 (A100 80GB PCIe): time-slicing 1, 3, 5, 7 pods and MIG 1g.10gb 1 pod (5 rows; MPS rows left out)"
