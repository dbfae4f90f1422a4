#!/usr/bin/env bash
# Runs fuzz targets one after another for SECONDS each (default 60; 0: the
# corpus once, without mutation), built
# optimised with debug assertions (overflow checks) on (-O -a), with
# the limits the project holds every reader to: no input over 10 s
# (-timeout=10), none over 2 GB (-rss_limit_mb=2048). Prints each target's
# executions; exits non-zero on the first crash, hang or blow-up, whose
# input libFuzzer saves under fuzz/artifacts/TARGET/.
# With FUZZ_REPORT_ONLY=1 a finding is printed and the next target runs,
# and the script exits 0 (CI's exploratory run: see docs/fuzzing.md).
#   fuzz/run.sh [SECONDS] [TARGET...]     (after fuzz/seed.sh)
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(patch_json patch_structured pattern_json map_json tile_glb tile_glb_chunks world_json character_gltf bvh joint_map)
found=()
for t in "${targets[@]}"; do
  dict=()
  # Tiles and characters: every execution parses the whole file; 1 MB
  # holds a tile of the shipped patches and the shared characters.
  len=4194304
  case $t in tile_glb|tile_glb_chunks|character_gltf) len=1048576 ;; esac
  case $t in
    patch_json|pattern_json|map_json|world_json|joint_map|tile_glb_chunks) dict=(-dict=json.dict) ;;
    bvh) dict=(-dict=bvh.dict) ;;
  esac
  mkdir -p "corpus/$t" "artifacts/$t"
  log=$(mktemp)
  # 0 seconds: run the corpus once, no mutation (a regression check).
  if [ "$secs" = 0 ]; then limit=(-runs=0); else limit=(-max_total_time="$secs"); fi
  if cargo +nightly fuzz run -O -a "$t" "corpus/$t" -- "${limit[@]}" -timeout=10 -rss_limit_mb=2048 \
       -max_len="$len" -print_final_stats=1 "${dict[@]}" >"$log" 2>&1; then
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || echo '?')
    printf '%-18s %10s executions in %s s, coverage %s, corpus %s\n' "$t" "$execs" "$secs" "$cov" "$(ls "corpus/$t" | wc -l)"
    rm -f "$log"
  else
    tail -40 "$log"
    echo "FAILED: $t (log $log; the input is in fuzz/artifacts/$t/)"
    if [ -z "${FUZZ_REPORT_ONLY:-}" ]; then exit 1; fi
    found+=("$t")
  fi
done
if [ ${#found[@]} -gt 0 ]; then
  echo "FUZZ FINDINGS (reported, not gating: FUZZ_REPORT_ONLY is set): ${found[*]}"
fi
