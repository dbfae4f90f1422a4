#!/bin/bash
# Submits a crowdpatch world to Slurm: N shards as one job array, then the
# gather, held until the whole array has succeeded.
#
#   CROWDPATCH=/shared/bin/crowdpatch docs/farm/slurm-submit.sh MAP DIR N [BAKE FLAGS…]
#   e.g. docs/farm/slurm-submit.sh maps/town.map.json /shared/worlds/town 8 --animation skeletal
#
# MAP, DIR and the binary must be on a file system every node sees. The bake
# flags (--animation, --character, --compress, --keys-…) go to every shard
# and to the gather: a tile baked with other flags is not the job's tile.
# `crowdpatch compose MAP --plan --shards N` shows which tiles each shard
# bakes before anything is submitted.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,12p' "$0" >&2
  exit 2
fi
MAP=$1
DIR=$2
N=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
export CROWDPATCH=${CROWDPATCH:-crowdpatch}
array=$(sbatch --parsable --export=ALL --array="1-$N" "$here/shard.sbatch" "$MAP" "$DIR" "$@")
array=${array%%;*}
gather=$(sbatch --parsable --export=ALL --dependency="afterok:$array" --kill-on-invalid-dep=yes \
         "$here/gather.sbatch" "$MAP" "$DIR" "$N" "$@")
echo "shards: job array $array (1-$N); gather: job ${gather%%;*} after the array succeeds"
