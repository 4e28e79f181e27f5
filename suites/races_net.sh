#!/usr/bin/env bash
# races_net.sh - one fused-network run for the races label (suites/races.cmake):
# trains MODEL (a golden fixture directory) on its first 6 samples for one
# epoch at batch 3 (validation split 0.2: 4 to train, a full batch and a
# partial one, then a partial validation batch of 2), then predicts the 6
# at batch 4 (a full batch and a partial one), on the cl backend. Every
# kind of batch once: Oclgrind interprets each work-item, so a sample more
# is seconds more. Run under Oclgrind by races.sh
# with XO_FUSE=require, so every batch runs the fused kernels or fails.
# SPEC (optional): a model spec run on MODEL_DIR's data instead of its own
# model, from its initial weights (a graph of the seed's shapes).
# usage: races_net.sh XO MODEL_DIR TAG [SPEC]
set -eu -o pipefail
xo=$1
dir=$2
tag=$3
spec=${4:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ "${XO_FUSE:-}" = require ] || { echo "races_net: XO_FUSE=require is not set" >&2; exit 1; }
python3 "$here/npy_head.py" "$dir/x_train.npy" "${tag}_x.npy" 6
python3 "$here/npy_head.py" "$dir/y_train.npy" "${tag}_y.npy" 6
rm -rf "${tag}_w" "${tag}_p.npy"
model=$dir/model.model
from=(--weights "$dir/weights")
if [ -n "$spec" ]; then
    model=$spec
    from=()
fi
"$xo" train --model "$model" "${from[@]}" --x "${tag}_x.npy" \
    --y "${tag}_y.npy" --save "${tag}_w" --epochs 1 --batch-size 3 --validation-split 0.2 \
    --device cl
"$xo" predict --model "$model" --weights "${tag}_w" --input "${tag}_x.npy" \
    --output "${tag}_p.npy" --batch-size 4 --device cl
test -s "${tag}_p.npy"
echo "races_net: $tag: trained and predicted on the fused path"
