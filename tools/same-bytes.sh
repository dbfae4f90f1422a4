#!/usr/bin/env bash
# Same bytes: bakes every shipped patch three ways — skeletal with the built-in
# character, `--animation none`, and skeletal with RobotExpressive when
# ../shared/data is present — and compares the GLBs.
#
#   tools/same-bytes.sh OLD_REV [NEW_REV]   old and new tree (NEW_REV default:
#                                           the work tree); each revision is
#                                           built in its own git worktree under
#                                           target/same-bytes/
#   tools/same-bytes.sh --jobs              the work tree with --jobs 1 and
#                                           --jobs 2 (determinism across threads)
#
# A GLB counts as the same when its bytes are equal, or else when its JSON
# chunk parses to the same value and its binary chunk is byte-identical (a
# move that only reorders JSON keys). Reports are compared without their
# stage timings. Exit 0 when everything is the same, 1 otherwise, 2 on error.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$root/target/same-bytes
robot=$root/../shared/data/characters/RobotExpressive.glb

# build REV -> path of a release `crowdpatch` binary of that revision.
build() {
    local rev=$1
    if [ "$rev" = "WORKTREE" ]; then
        cargo build --release --quiet --bin crowdpatch >&2
        echo "$root/target/release/crowdpatch"
        return
    fi
    local sha
    sha=$(git rev-parse --verify "$rev^{commit}")
    local tree=$work/tree-$sha
    if [ ! -d "$tree" ]; then
        git worktree add --detach --quiet "$tree" "$sha" >&2
    fi
    # Old trees shipped the binary in the root package; new ones in cli/.
    (cd "$tree" && CARGO_TARGET_DIR=$work/target-$sha cargo build --release --quiet --bin crowdpatch >&2)
    echo "$work/target-$sha/release/crowdpatch"
}

# bake BIN OUT [extra bake flags…]: the three bakes of every shipped patch.
bake() {
    local bin=$1 out=$2
    shift 2
    rm -rf "$out"
    mkdir -p "$out"
    "$bin" bake patches/*.patch.json -o "$out/skeletal" --report "$out/skeletal" --quiet "$@" || [ $? -eq 1 ]
    "$bin" bake patches/*.patch.json -o "$out/none" --report "$out/none" --animation none --quiet "$@" || [ $? -eq 1 ]
    if [ -f "$robot" ]; then
        "$bin" bake patches/*.patch.json -o "$out/robot" --report "$out/robot" --character "$robot" --quiet "$@" \
            || [ $? -eq 1 ]
    else
        echo "SKIPPED: RobotExpressive bakes ($robot is absent)" >&2
    fi
}

compare() {
    python3 - "$1" "$2" <<'EOF'
import json, os, struct, sys, hashlib
a, b = sys.argv[1], sys.argv[2]
def chunks(data):
    out = {}
    off = 12
    while off < len(data):
        n, kind = struct.unpack_from('<I4s', data, off)
        out[kind] = data[off + 8: off + 8 + n]
        off += 8 + n
    return out
def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in ('timings', 'patch', 'glb')}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
bad = 0
count = 0
for dirpath, _, files in sorted(os.walk(a)):
    for f in sorted(files):
        pa = os.path.join(dirpath, f)
        rel = os.path.relpath(pa, a)
        pb = os.path.join(b, rel)
        count += 1
        if not os.path.exists(pb):
            print(f"MISSING {rel}"); bad += 1; continue
        da, db = open(pa, 'rb').read(), open(pb, 'rb').read()
        if f.endswith('.glb'):
            if da == db:
                print(f"same bytes   {rel}  sha256 {hashlib.sha256(da).hexdigest()[:16]}  {len(da)} B")
                continue
            ca, cb = chunks(da), chunks(db)
            if json.loads(ca[b'JSON']) == json.loads(cb[b'JSON']) and ca.get(b'BIN\0') == cb.get(b'BIN\0'):
                print(f"same content {rel}  (JSON keys reordered, BIN identical)")
            else:
                print(f"DIFFERENT    {rel}  ({len(da)} B vs {len(db)} B)"); bad += 1
        elif f.endswith('.json'):
            if strip(json.loads(da)) == strip(json.loads(db)):
                print(f"same report  {rel}")
            else:
                print(f"DIFFERENT    {rel}"); bad += 1
print(f"{count - bad} of {count} files the same")
sys.exit(1 if bad or count == 0 else 0)
EOF
}

case "${1:-}" in
    "" | -h | --help)
        sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'
        exit 2
        ;;
    --jobs)
        bin=$(build WORKTREE)
        bake "$bin" "$work/jobs1" --jobs 1
        bake "$bin" "$work/jobs2" --jobs 2
        compare "$work/jobs1" "$work/jobs2"
        ;;
    *)
        old=$(build "$1")
        new=$(build "${2:-WORKTREE}")
        bake "$old" "$work/old"
        bake "$new" "$work/new"
        compare "$work/old" "$work/new"
        ;;
esac
