#!/usr/bin/env bash
# Fills fuzz/corpus/TARGET/ with seeds from the shipped inputs: patches,
# patterns, maps, tiles baked from them (plain, skeletal, meshopt), composed
# worlds, and, when ../shared/data is beside the repository, its characters
# (under 1 MB), BVH walk and glTF animation sources. Nothing of ../shared is
# copied into the repository: the corpus directory is ignored by git.
#   fuzz/seed.sh            (from the repository root or fuzz/)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
c=fuzz/corpus
mkdir -p "$c"/{patch_json,patch_structured,pattern_json,map_json,tile_glb,tile_glb_chunks,world_json,character_gltf,bvh,joint_map}
bin=target/release/crowdpatch
[ -x "$bin" ] || cargo build --release --bin crowdpatch --quiet

cp patches/*.patch.json "$c/patch_json/"
cp patterns/*.pattern.json "$c/pattern_json/"
# Maps beside the shipped patterns, as the targets' scratch directory has them.
for m in maps/*.map.json; do cp "$m" "$c/map_json/"; done
head -c 64 /dev/urandom > "$c/patch_structured/random-0"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Small tiles fuzz faster (every execution parses the whole file): capsules
# of the shipped patches but dense, and skeletal ones at 4 Hz.
"$bin" bake patches/avenue.patch.json patches/figure7.patch.json patches/park.patch.json patches/plaza.patch.json \
  -o "$tmp/capsules" --animation none --quiet
"$bin" bake patches/figure7.patch.json patches/park.patch.json -o "$tmp/skeletal" --frame-rate 4 --quiet
mkdir -p "$tmp/meshopt"
"$bin" bake patches/figure7.patch.json -o "$tmp/meshopt/figure7-skeletal.glb" --frame-rate 4 --compress meshopt --quiet
"$bin" bake patches/park.patch.json -o "$tmp/meshopt/park-capsules.glb" --animation none --compress meshopt --quiet
"$bin" compose maps/town.map.json -o "$tmp/town" --quiet
"$bin" compose maps/town.map.json -o "$tmp/wang" --wang 2 --quiet
for d in capsules meshopt; do
  for f in "$tmp/$d"/*.glb; do cp "$f" "$c/tile_glb/$d-$(basename "$f")"; done
done
cp "$tmp/town/world.json" "$c/world_json/town.json"
cp "$tmp/wang/world.json" "$c/world_json/wang.json"

# The structure-aware tile target's seeds: u32 JSON length, JSON, BIN.
python3 - "$c/tile_glb" "$c/tile_glb_chunks" <<'PY'
import os, struct, sys
src, dst = sys.argv[1], sys.argv[2]
for name in sorted(os.listdir(src)):
    b = open(os.path.join(src, name), 'rb').read()
    jl = struct.unpack_from('<I', b, 12)[0]
    json = b[20:20 + jl]
    rest = b[20 + jl:]
    binary = rest[8:8 + struct.unpack_from('<I', rest, 0)[0]] if len(rest) >= 8 else b''
    open(os.path.join(dst, name + '.chunks'), 'wb').write(struct.pack('<I', len(json)) + json + binary)
PY

# Characters: skinned tiles are characters too (mode byte 0: a character,
# 2: an animation source).
for f in "$tmp/skeletal"/figure7.glb "$tmp/skeletal"/park.glb; do
  for mode in 0 2; do { printf "\\x0$mode"; cat "$f"; } > "$c/character_gltf/$mode-$(basename "$f")"; done
done
shared=$root/../shared/data
if [ -d "$shared" ]; then
  for f in "$shared"/characters/*.glb "$shared"/characters/*.gltf "$shared"/characters/*.vrm; do
    [ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 1000000 ] || continue
    { printf '\x00'; cat "$f"; } > "$c/character_gltf/0-$(basename "$f")"
  done
  cp "$shared"/mocap/*.bvh "$c/bvh/" 2>/dev/null || true
else
  echo "SKIPPED: ../shared/data is absent (no third-party characters or BVH seeds)"
fi
# A small BVH of the project's own: a hips-legs chain, two frames.
cat > "$c/bvh/tiny.bvh" <<'BVH'
HIERARCHY
ROOT Hips
{
  OFFSET 0.0 90.0 0.0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT LeftUpLeg
  {
    OFFSET 10.0 0.0 0.0
    CHANNELS 3 Zrotation Xrotation Yrotation
    JOINT LeftLeg
    {
      OFFSET 0.0 -45.0 0.0
      CHANNELS 3 Zrotation Xrotation Yrotation
      End Site
      {
        OFFSET 0.0 -45.0 0.0
      }
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.033333
0.0 90.0 0.0 0.0 0.0 0.0 0.0 10.0 0.0 0.0 -5.0 0.0
0.0 90.0 5.0 0.0 0.0 0.0 0.0 -10.0 0.0 0.0 5.0 0.0
BVH
printf '%s\n' '{"format": 1, "bones": {"hips": "pelvis", "leftUpperLeg": "Thigh_L", "rightUpperLeg": "Thigh_R", "leftLowerLeg": "Calf_L", "rightLowerLeg": "Calf_R", "leftFoot": "Foot_L", "rightFoot": "Foot_R"}}' > "$c/joint_map/vrm-names.json"
printf '%s\n' '{"format": 1, "bones": {}}' > "$c/joint_map/empty.json"
for t in "$c"/*; do printf '%-18s %3d seeds\n' "$(basename "$t")" "$(ls "$t" | wc -l)"; done
