// Plays baked crowdpatch GLBs the way a game would, with three.js
// (GLTFLoader.parse + AnimationMixer, no WebGL needed), and measures from the
// played animation:
//   - planted-foot speed: horizontal speed of each foot's contact joint while
//     its footstep (extras.crowdpatch.agents[i].footsteps) says it is planted;
//   - stance drift, as played (the definition of the bake's quality gate,
//     crowdpatch's animation::contact): the soles' contact points
//     (extras.crowdpatch.character.sole_points: heel, ball and toe of each
//     foot, each carried by a joint) are sampled on the played skeleton; a
//     point is in contact while within 1 cm of its lowest height for at
//     least 0.1 s, and its drift is the largest horizontal distance it moves
//     from where the contact began. p95, max and the share over 2 cm of the
//     heels' and balls' contacts are gated; the toe tips' p95 is reported,
//     with the least height of any sole point (clearance) and the
//     contact-weighted foot skate (Zhang et al. 2018, H = 2.5 cm). Files
//     without sole points fall back on the footsteps' contact joints;
//   - root deviation: horizontal distance of the hips from the instance node
//     (the baked path, root motion);
//   - posture: hip height over leg length (the hip joints' height over
//     extras.crowdpatch.character.leg_length; about 0.9–1.0 when walking
//     upright), min, p5 and mean over visible samples;
//   - loop jump: every joint of instance k at τ = π against instance k + 1 at
//     τ = 0 (the same moment of the agent);
//   - seam jump (--seams, for a patch that tiles with itself): every joint of
//     an agent leaving through an exit point against the agent of the
//     neighbour tile entering through its mirror point, at the crossing time.
//   - against (--against REF.glb): every joint of every visible instance
//     against the same joint of REF (the same bake written another way, e.g.
//     uncompressed), at every step: largest and 95th-percentile distance, and
//     the largest for the feet (posture and feet of a compressed file against
//     the plain one).
// Files compressed with EXT_meshopt_compression are decoded with three.js's
// meshopt decoder. Prints one JSON line per file; exits 1 when a figure is
// over its limit (planted-foot speed mean 0.01 m/s, stance drift of heels
// and balls p95 2.5 cm, max 10 cm, at most 10 % of contacts over 2 cm,
// root deviation p95 5 cm, loop and seam jumps 5 mm, feet against the
// reference 1.5 mm) or a walker crouches (hip height over leg length below
// 0.75 at the 5th percentile).
//
// Usage: node check.mjs [--seams] [--dt 0.0103] [--against REF.glb] FILE.glb...
// The default step, 1/97 s, is no divisor of the key interval, so the
// figures include what a player shows between keys.
import * as THREE from 'three';
import { readGlb } from './gltf.mjs';

const LIMITS = {
  plantedSpeedMean: 0.01, stanceDriftP95: 0.025, stanceDriftMax: 0.10, stanceDriftOver2cm: 0.10, rootDeviationP95: 0.05, loopJump: 0.005, seamJump: 0.005,
  // Against a reference: the stated bound of the key reduction (1 mm) with
  // room for the player's own f32 arithmetic.
  againstFeetMax: 0.0015,
};
// Lower limits: hip height over leg length at the 5th percentile.
const FLOORS = { hipHeightP5: 0.75 };

const args = process.argv.slice(2);
let seams = false;
let dt = 1 / 97;
let against = null;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--seams') seams = true;
  else if (args[i] === '--dt') dt = Number(args[++i]);
  else if (args[i] === '--against') against = args[++i];
  else files.push(args[i]);
}

// Patch frame (x, y) of a glTF world position.
const patch = (v) => [v.x, -v.z];
const dist2 = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1]);

async function load(file) {
  const { gltf, extras, byIndex } = await readGlb(file);
  const mixer = new THREE.AnimationMixer(gltf.scene);
  const clip = gltf.animations.find((c) => c.name === 'loop');
  const action = mixer.clipAction(clip);
  action.play();
  const ch = extras.character;
  const instances = [];
  extras.agents.forEach((agent, i) => {
    agent.nodes.forEach((n, j) => {
      const node = byIndex.get(n);
      // The exporter writes an instance's joint nodes right after it, in
      // character order (extras.crowdpatch.character.joints).
      const list = ch.joints.map((_, k) => byIndex.get(n + 1 + k));
      const find = (k) => list[k];
      instances.push({
        agent: i, k: agent.first_instance + j, node, list,
        feet: [find(ch.left_foot), find(ch.right_foot)], hips: find(ch.hips),
        hipJoints: (ch.hip_joints ?? [ch.hips, ch.hips]).map(find),
        footsteps: agent.footsteps ?? [],
        sole: (ch.sole_points ?? []).map((p) => ({ obj: find(p.joint), local: new THREE.Vector3(...p.local), part: p.part, foot: p.foot })),
      });
    });
  });
  return { gltf, extras, mixer, clip, instances };
}

// The loop repeats: play time π is time 0 again, so the end of the window
// is taken a hair before it.
function setTime(m, tau) {
  m.mixer.setTime(Math.min(tau, m.extras.period - 1e-6));
  m.gltf.scene.updateMatrixWorld(true);
}

// World positions of every joint of an instance, ignoring its visibility
// scale (a hidden instance has scale 0).
function jointPositions(m, inst) {
  const s = inst.node.scale.clone();
  inst.node.scale.set(1, 1, 1);
  inst.node.updateMatrixWorld(true);
  const out = inst.list.map((o) => o.getWorldPosition(new THREE.Vector3()));
  inst.node.scale.copy(s);
  inst.node.updateMatrixWorld(true);
  return out;
}

function measure(m) {
  const period = m.extras.period;
  const speeds = [];
  const deviations = [];
  const ratios = [];
  const legLength = m.extras.character?.leg_length;
  // Per instance and footstep: [first position, largest distance from it].
  const stance = m.instances.map((inst) => inst.footsteps.map(() => null));
  // Per agent: samples of its sole points, {t, pts: [[x, y, h] × 6]}.
  const soleSamples = m.extras.agents.map(() => []);
  let prev = null;
  const steps = Math.round(period / dt);
  for (let s = 0; s <= steps; s++) {
    const tau = Math.min(s * dt, period - 1e-6);
    setTime(m, tau);
    const cur = m.instances.map((inst) => {
      const visible = inst.node.scale.x > 0.5;
      const feet = inst.feet.map((f) => patch(f.getWorldPosition(new THREE.Vector3())));
      const hipY = inst.hipJoints.reduce((a, j) => a + j.getWorldPosition(new THREE.Vector3()).y, 0) / inst.hipJoints.length;
      // Heel and ball of each foot ([x, y, h]), where the GLB records its
      // sole points: a planted foot's speed is that of the lower of the two
      // (the point it stands or rolls on) while that is on the floor.
      const sole = inst.sole.length === 6
        ? [0, 1, 3, 4].map((k) => {
          const w = inst.sole[k].local.clone().applyMatrix4(inst.sole[k].obj.matrixWorld);
          return [w.x, -w.z, w.y];
        })
        : null;
      return { visible, feet, sole, hipY, root: patch(inst.hips.getWorldPosition(new THREE.Vector3())), at: patch(inst.node.getWorldPosition(new THREE.Vector3())) };
    });
    cur.forEach((c, i) => {
      if (!c.visible) return;
      const inst = m.instances[i];
      const t = tau + inst.k * period;
      // A node listed twice (an agent's first instance also showing its
      // last window) is measured once: by the entry whose window holds t.
      const [start, end] = m.extras.agents[inst.agent].interval;
      if (t < start - 1e-6 || t > end + 1e-6) return;
      deviations.push(dist2(c.root, c.at));
      if (inst.sole.length === 6) {
        soleSamples[inst.agent].push({ t, pts: inst.sole.map((p) => {
          const w = p.local.clone().applyMatrix4(p.obj.matrixWorld);
          return [w.x, -w.z, w.y];
        }) });
      }
      if (legLength > 0) ratios.push(c.hipY / legLength);
      inst.footsteps.forEach((f, j) => {
        if (t < f.t - 1e-9 || t > f.lift + 1e-9) return;
        const p = c.feet[f.foot === 'left' ? 0 : 1];
        const st = stance[i][j];
        if (!st) stance[i][j] = [p, 0];
        else st[1] = Math.max(st[1], dist2(p, st[0]));
      });
      const p = prev && prev[i];
      if (!p || !p.visible) return;
      const t0 = (s - 1) * dt + inst.k * period;
      const t1 = t0 + dt;
      for (const f of inst.footsteps) {
        const foot = f.foot === 'left' ? 0 : 1;
        if (!(t0 >= f.t - 1e-9 && t1 <= f.lift + 1e-9)) continue;
        if (c.sole && p.sole) {
          // On the floor: within 1 cm of it (a foot on its raised toes is
          // not standing on its ball).
          const k = 2 * foot + (c.sole[2 * foot + 1][2] < c.sole[2 * foot][2] ? 1 : 0);
          if (c.sole[k][2] < 0.01) speeds.push(Math.hypot(c.sole[k][0] - p.sole[k][0], c.sole[k][1] - p.sole[k][1]) / dt);
        } else speeds.push(dist2(c.feet[foot], p.feet[foot]) / dt);
      }
    });
    prev = cur;
  }
  // Loop point: instance k at π against instance k + 1 at 0.
  let loopJump = 0;
  setTime(m, period - 1e-5);
  const atEnd = m.instances.map((inst) => jointPositions(m, inst));
  setTime(m, 0);
  m.instances.forEach((inst, i) => {
    const next = m.instances.findIndex((o) => o.agent === inst.agent && o.k === inst.k + 1);
    if (next < 0) return;
    const a = atEnd[i];
    const b = jointPositions(m, m.instances[next]);
    a.forEach((p, j) => { loopJump = Math.max(loopJump, p.distanceTo(b[j])); });
  });
  speeds.sort((a, b) => a - b);
  deviations.sort((a, b) => a - b);
  ratios.sort((a, b) => a - b);
  const planned = stance.flat().filter((x) => x).map((x) => x[1]).sort((a, b) => a - b);
  const sole = soleContacts(soleSamples);
  const drifts = sole.haveSole ? sole.weightBearing : planned;
  const mean = (v) => v.reduce((x, y) => x + y, 0) / Math.max(v.length, 1);
  const pct = (v, q) => v.length ? v[Math.round((v.length - 1) * q)] : 0;
  return {
    plantedSamples: speeds.length,
    plantedSpeedMean: mean(speeds),
    plantedSpeedP95: pct(speeds, 0.95),
    plantedSpeedMax: pct(speeds, 1),
    stanceContacts: drifts.length,
    stanceDriftP95: pct(drifts, 0.95),
    stanceDriftMax: pct(drifts, 1),
    stanceDriftOver2cm: drifts.length ? drifts.filter((d) => d > 0.02).length / drifts.length : 0,
    toeDriftP95: pct(sole.toe, 0.95),
    soleClearance: sole.clearance,
    footSkate: sole.skate,
    hipHeightMin: ratios.length ? ratios[0] : undefined,
    hipHeightP5: ratios.length ? pct(ratios, 0.05) : undefined,
    hipHeightMean: ratios.length ? mean(ratios) : undefined,
    rootDeviationMean: mean(deviations),
    rootDeviationP95: pct(deviations, 0.95),
    rootDeviationMax: pct(deviations, 1),
    loopJump,
  };
}

// Contacts of the sole points (crowdpatch's animation::contact): per agent,
// its samples in time order; a point is in contact while within 1 cm of its
// lowest height for at least 0.1 s; drift is the largest horizontal distance
// from where the contact began. Returns the drifts of the heels and balls
// (sorted), of the toe tips, the least height of any point and the
// contact-weighted foot skate.
function soleContacts(perAgent) {
  const weightBearing = [];
  const toe = [];
  let clearance = Infinity;
  let skateNum = 0;
  let skateDen = 0;
  let haveSole = false;
  for (const raw of perAgent) {
    if (!raw.length) continue;
    haveSole = true;
    raw.sort((a, b) => a.t - b.t);
    const s = raw.filter((x, i) => i === 0 || x.t - raw[i - 1].t > 1e-6);
    for (let k = 0; k < 6; k++) {
      let low = Infinity;
      for (const x of s) { low = Math.min(low, x.pts[k][2]); clearance = Math.min(clearance, x.pts[k][2]); }
      let i = 0;
      while (i < s.length) {
        if (s[i].pts[k][2] > low + 0.01) { i++; continue; }
        const start = i;
        const p0 = s[i].pts[k];
        let drift = 0;
        while (i < s.length && s[i].pts[k][2] <= low + 0.01) {
          drift = Math.max(drift, Math.hypot(s[i].pts[k][0] - p0[0], s[i].pts[k][1] - p0[1]));
          i++;
        }
        if (s[i - 1].t - s[start].t >= 0.1 - 1e-9) (k % 3 === 2 ? toe : weightBearing).push(drift);
      }
    }
    for (let i = 1; i < s.length; i++) {
      const dt = s[i].t - s[i - 1].t;
      if (dt <= 1e-9) continue;
      for (let k = 0; k < 6; k++) {
        const a = s[i - 1].pts[k];
        const b = s[i].pts[k];
        const h = Math.max(0, (a[2] + b[2]) / 2);
        const w = Math.min(1, Math.max(0, 2 - 2 ** (h / 0.025)));
        skateNum += w * Math.hypot(b[0] - a[0], b[1] - a[1]);
        skateDen += w * dt;
      }
    }
  }
  weightBearing.sort((a, b) => a - b);
  toe.sort((a, b) => a - b);
  return { haveSole, weightBearing, toe, clearance: haveSole ? clearance : undefined, skate: skateDen > 0 ? skateNum / skateDen : 0 };
}

// The seam: an exit point on side k of the tile meets the entry (L − s, t)
// on side k + 2 of the neighbour, which is the same tile shifted by L.
function seamJump(m) {
  const L = m.extras.size;
  const period = m.extras.period;
  const sides = ['south', 'east', 'north', 'west'];
  const shift = { south: [0, -L], east: [L, 0], north: [0, L], west: [-L, 0] };
  let worst = 0;
  let checked = 0;
  m.extras.agents.forEach((a, i) => {
    if (!a.kind.exogenous) return;
    const exit = a.kind.exogenous.exit;
    const opp = sides[(sides.indexOf(exit.side) + 2) % 4];
    const xp = m.extras.patterns[exit.side].exits[exit.index];
    // The neighbour agent entering through the mirror point.
    const j = m.extras.agents.findIndex((b) => {
      if (!b.kind.exogenous) return false;
      const e = b.kind.exogenous.entry;
      if (e.side !== opp) return false;
      const ep = m.extras.patterns[opp].entries[e.index];
      return Math.abs(ep.s - (L - xp.s)) < 1e-6 && Math.abs(ep.t - xp.t) < 1e-6;
    });
    if (j < 0) return;
    const tOut = a.interval[1];
    const tIn = m.extras.agents[j].interval[0];
    const tau = ((tOut % period) + period) % period;
    const ka = Math.floor((tOut - 1e-9) / period);
    const kb = Math.floor(tIn / period + 1e-9);
    const ia = m.instances.find((o) => o.agent === i && o.k === ka);
    const ib = m.instances.find((o) => o.agent === j && o.k === kb);
    if (!ia || !ib) return;
    // A at the end of its window piece, B at the start of its own.
    const tauA = tOut - ka * period;
    const tauB = tIn - kb * period;
    setTime(m, tauA);
    const pa = jointPositions(m, ia);
    setTime(m, tauB);
    const pb = jointPositions(m, ib);
    const [dx, dy] = shift[exit.side];
    pa.forEach((p, k) => {
      const q = pb[k].clone().add(new THREE.Vector3(dx, 0, -dy));
      worst = Math.max(worst, p.distanceTo(q));
    });
    checked += 1;
    void tau;
  });
  return { seamsChecked: checked, seamJump: worst };
}

// Joint distances of `m` against the reference `r` (same bake).
function compare(m, r) {
  const period = m.extras.period;
  const steps = Math.round(period / dt);
  const all = [];
  let feetMax = 0;
  let rootMax = 0;
  for (let s = 0; s <= steps; s++) {
    const tau = Math.min(s * dt, period - 1e-6);
    setTime(m, tau);
    setTime(r, tau);
    m.instances.forEach((inst, i) => {
      if (inst.node.scale.x <= 0.5) return;
      const other = r.instances[i];
      const ch = m.extras.character;
      inst.list.forEach((o, j) => {
        const d = o.getWorldPosition(new THREE.Vector3()).distanceTo(other.list[j].getWorldPosition(new THREE.Vector3()));
        all.push(d);
        if (j === ch.left_foot || j === ch.right_foot) feetMax = Math.max(feetMax, d);
        if (j === ch.hips) rootMax = Math.max(rootMax, d);
      });
    });
  }
  all.sort((a, b) => a - b);
  return {
    against,
    againstJointMax: all.length ? all[all.length - 1] : 0,
    againstJointP95: all.length ? all[Math.round((all.length - 1) * 0.95)] : 0,
    againstFeetMax: feetMax,
    againstRootMax: rootMax,
  };
}

const reference = against ? await load(against) : null;
let failed = false;
for (const file of files) {
  const m = await load(file);
  const out = { file, character: m.extras.character?.name, instances: new Set(m.instances.map((o) => o.node)).size, ...measure(m) };
  if (seams) Object.assign(out, seamJump(m));
  if (reference) Object.assign(out, compare(m, reference));
  const over = Object.entries(LIMITS).filter(([k, v]) => out[k] !== undefined && out[k] > v).map(([k]) => k)
    .concat(Object.entries(FLOORS).filter(([k, v]) => out[k] !== undefined && out[k] < v).map(([k]) => k));
  out.over = over;
  if (over.length) failed = true;
  console.log(JSON.stringify(out));
}
process.exit(failed ? 1 : 0);
