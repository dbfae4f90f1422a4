// Plays two GLBs of the same crowd with three.js (GLTFLoader + AnimationMixer,
// meshopt through three.js's decoder) and measures how far every joint of the
// second is from the same joint of the first, the joints matched by their
// path of node names (instance node / hips / ... / joint), so that a file
// another tool re-packed (reordered nodes, merged buffers, resampled tracks:
// gltfpack with -kn to keep the names) can be measured against ours.
// Samples where either file hides the joint (its and its ancestors' scales
// multiplying to less than 0.5) are skipped, and counted where only one does.
// Prints one JSON line per file: largest, 95th percentile and median
// distance [m] over every joint and over the feet (foot, toe, ankle), how
// many joint samples are more than 1 cm away, how many are shown in one file
// and hidden in the other, where the largest is (time [s] and node path), and
// from REF's footsteps (extras.crowdpatch) the compared file's planted-foot
// speed (mean [m/s]) and stance drift (p95 and max [m], as check.mjs);
// exits 1 when the stance drift is over 1 cm at the 95th percentile, or
// --limit M is given and a foot strays further than M.
//
// Usage: node compare.mjs [--dt 0.0103] [--limit 0.0015] REF.glb FILE.glb...
// The default step, 1/97 s, is no divisor of a 30 Hz key interval, so the
// figures include what a player shows between keys.
import * as THREE from 'three';
import { readGlb } from './gltf.mjs';

const args = process.argv.slice(2);
let dt = 1 / 97;
let limit = Infinity;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--dt') dt = Number(args[++i]);
  else if (args[i] === '--limit') limit = Number(args[++i]);
  else files.push(args[i]);
}
if (files.length < 2 || !(dt > 0) || !(limit > 0)) {
  console.error('usage: node compare.mjs [--dt S] [--limit M] REF.glb FILE.glb...');
  process.exit(2);
}

// The file's scene, a mixer playing its first animation, its period [s], its
// joints by name path, its objects by node index and its extras.crowdpatch.
async function load(file) {
  let read;
  try {
    read = await readGlb(file);
  } catch (e) {
    console.error(`compare.mjs: ${file}: ${e.message ?? e}`);
    process.exit(2);
  }
  const { gltf, extras, byIndex } = read;
  const clip = gltf.animations.find((c) => c.name === 'loop') ?? gltf.animations[0];
  if (!clip) {
    console.error(`compare.mjs: ${file}: no animation to play`);
    process.exit(2);
  }
  const mixer = new THREE.AnimationMixer(gltf.scene);
  mixer.clipAction(clip).play();
  const joints = new Map();
  const pathOf = new Map();
  const walk = (o, path) => {
    const p = `${path}/${o.name}`;
    pathOf.set(o, p);
    if (joints.has(p)) joints.set(p, null); // a path named twice: not comparable
    else joints.set(p, o);
    o.children.forEach((c) => walk(c, p));
  };
  gltf.scene.children.forEach((c) => walk(c, ''));
  return { gltf, mixer, joints, pathOf, byIndex, extras, period: clip.duration };
}

// The feet of every instance of REF's walkers (extras.crowdpatch: nodes,
// footsteps, the character's foot joints, written right after each
// instance node), as objects of `cmp` matched by name path: for the
// planted-foot figures of a file that kept no footsteps of its own.
function stanceFeet(ref, cmp) {
  const ex = ref.extras;
  if (!ex?.character || !ex.agents) return [];
  const out = [];
  ex.agents.forEach((agent) => {
    (agent.nodes ?? []).forEach((n, j) => {
      const find = (o) => o && cmp.joints.get(ref.pathOf.get(o));
      const node = find(ref.byIndex.get(n));
      const feet = [ex.character.left_foot, ex.character.right_foot].map((k) => find(ref.byIndex.get(n + 1 + k)));
      if (node && feet.every((f) => f)) {
        out.push({ node, feet, k: agent.first_instance + j, interval: agent.interval, footsteps: agent.footsteps ?? [] });
      }
    });
  });
  return out;
}

// The product of the scales of `o` and its ancestors (three.js's
// getWorldScale gives 1 for a singular matrix: a node scaled to 0, the way a
// hidden instance is, reads as shown).
const shown = (o) => {
  let k = 1;
  for (let x = o; x; x = x.parent) k *= Math.abs(x.scale.x);
  return k;
};
// The stance drift a player must keep under at the 95th percentile [m]
// (as check.mjs).
const STANCE_DRIFT_P95 = 0.01;
const pct = (s, q) => s[Math.min(s.length - 1, Math.floor(s.length * q))];
const ref = await load(files[0]);
let failed = false;
for (const file of files.slice(1)) {
  const cmp = await load(file);
  // Joints below an instance node (two levels of path at least) present once
  // in both files.
  const paths = [...ref.joints.keys()].filter(
    (p) => p.split('/').length > 2 && ref.joints.get(p) && cmp.joints.get(p) && !/ mesh$/.test(p),
  );
  if (paths.length === 0) {
    console.error(`compare.mjs: ${file}: no joint path in common with ${files[0]} (another crowd, or names dropped: gltfpack keeps them with -kn)`);
    failed = true;
    continue;
  }
  const feet = new Set(paths.filter((p) => /foot|toe|ankle/i.test(p.split('/').at(-1))));
  const all = [];
  const atFeet = [];
  let worst = { d: -1 };
  let worstFoot = { d: -1 };
  let far = 0; // samples of a joint more than 1 cm away
  let flips = 0; // samples of a joint shown in one file, hidden in the other
  const [a, b] = [new THREE.Vector3(), new THREE.Vector3()];
  const insts = stanceFeet(ref, cmp);
  const speeds = [];
  const drift = insts.map((i) => i.footsteps.map(() => null));
  let prev = null;
  for (let t = 0; t < ref.period; t += dt) {
    ref.mixer.setTime(t);
    cmp.mixer.setTime(t);
    ref.gltf.scene.updateMatrixWorld(true);
    cmp.gltf.scene.updateMatrixWorld(true);
    for (const p of paths) {
      const o = ref.joints.get(p);
      const q = cmp.joints.get(p);
      const [ra, rb] = [shown(o) >= 0.5, shown(q) >= 0.5];
      if (ra !== rb) flips++;
      if (!ra || !rb) continue;
      o.getWorldPosition(a);
      q.getWorldPosition(b);
      const d = a.distanceTo(b);
      all.push(d);
      if (d > 0.01) far++;
      if (feet.has(p)) {
        atFeet.push(d);
        if (d > worstFoot.d) worstFoot = { d, t, p };
      }
      if (d > worst.d) worst = { d, t, p };
    }
    // Planted feet of the compared file (patch plane: x and −z).
    const cur = insts.map((inst) => {
      if (shown(inst.node) < 0.5) return null;
      return inst.feet.map((f) => {
        const w = f.getWorldPosition(new THREE.Vector3());
        return [w.x, -w.z];
      });
    });
    cur.forEach((feetNow, i) => {
      const inst = insts[i];
      const tt = t + inst.k * ref.period;
      if (!feetNow || tt < inst.interval[0] - 1e-6 || tt > inst.interval[1] + 1e-6) return;
      inst.footsteps.forEach((f, j) => {
        if (tt < f.t - 1e-9 || tt > f.lift + 1e-9) return;
        const q = feetNow[f.foot === 'left' ? 0 : 1];
        const st = drift[i][j];
        if (!st) drift[i][j] = [q, 0];
        else st[1] = Math.max(st[1], Math.hypot(q[0] - st[0][0], q[1] - st[0][1]));
        const before = prev?.[i]?.[f.foot === 'left' ? 0 : 1];
        if (before && tt - dt >= f.t - 1e-9) speeds.push(Math.hypot(q[0] - before[0], q[1] - before[1]) / dt);
      });
    });
    prev = cur;
  }
  const drifts = drift.flat().filter((x) => x).map((x) => x[1]).sort((x, y) => x - y);
  const stanceFigures = speeds.length
    ? {
        plantedSpeedMean: speeds.reduce((x, y) => x + y, 0) / speeds.length,
        stanceDriftP95: pct(drifts, 0.95),
        stanceDriftMax: drifts.at(-1),
      }
    : {};
  all.sort((x, y) => x - y);
  atFeet.sort((x, y) => x - y);
  const feetMax = atFeet.at(-1) ?? 0;
  const over = [];
  if (feetMax > limit) over.push('feetMax');
  if ((stanceFigures.stanceDriftP95 ?? 0) > STANCE_DRIFT_P95) over.push('stanceDriftP95');
  failed ||= over.length > 0;
  console.log(JSON.stringify({
    file, against: files[0], joints: paths.length, feet: feet.size, samples: all.length,
    jointMax: all.at(-1) ?? 0, jointP95: pct(all, 0.95) ?? 0, jointP50: pct(all, 0.5) ?? 0,
    feetMax, feetP95: pct(atFeet, 0.95) ?? 0, over1cm: far, visibilityDiffers: flips, ...stanceFigures,
    worstAt: worst.d >= 0 ? { t: Number(worst.t.toFixed(4)), joint: worst.p } : null,
    worstFootAt: worstFoot.d >= 0 ? { t: Number(worstFoot.t.toFixed(4)), joint: worstFoot.p } : null,
    over,
  }));
}
process.exit(failed ? 1 : 0);
