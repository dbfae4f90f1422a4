// Plays baked crowdpatch GLBs with three.js (GLTFLoader + AnimationMixer, no
// WebGL) and measures the walkers as the player shows them, with the
// definitions of docs/design.md "Realism": each agent's instance-node
// position followed over its whole interval, sampled every 1/25 s for the
// turn rate and every 0.4 s for the speed. The figures are compared with the
// bake's own report (extras.crowdpatch.metrics.realism): the turn-rate p95
// and the speed median and p95 must agree within 10 % (turn rates below
// 0.05 rad/s within 0.05). Prints one JSON line per file; exits 1 when a
// figure is off.
//
// Usage: node realism.mjs FILE.glb...
import * as THREE from 'three';
import { readGlb } from './gltf.mjs';

const MOVING = 0.3;
const TOLERANCE = 0.1;

async function load(file) {
  const { gltf, extras, byIndex } = await readGlb(file);
  const mixer = new THREE.AnimationMixer(gltf.scene);
  mixer.clipAction(gltf.animations.find((c) => c.name === 'loop')).play();
  return { gltf, extras, mixer, byIndex };
}

// Patch-frame position of an agent at unwrapped time t: the instance whose
// window holds t, at play time t − kπ.
function positionAt(m, agent, t) {
  const period = m.extras.period;
  const k = Math.min(Math.max(Math.floor(t / period), agent.first_instance), agent.first_instance + agent.nodes.length - 1);
  const node = m.byIndex.get(agent.nodes[k - agent.first_instance]);
  const tau = Math.min(Math.max(t - k * period, 0), period - 1e-6);
  m.mixer.setTime(tau);
  node.updateMatrixWorld(true);
  const v = node.getWorldPosition(new THREE.Vector3());
  return [v.x, -v.z];
}

function track(m, agent, dt) {
  const [a, b] = agent.interval;
  const n = Math.floor((b - a) / dt + 1e-9);
  const out = [];
  for (let k = 0; k <= n; k++) out.push(positionAt(m, agent, a + k * dt));
  return out;
}

function speedsAndTurns(tracks, dt) {
  const speeds = [];
  const turns = [];
  for (const tr of tracks) {
    let prev = null;
    for (let k = 1; k < tr.length; k++) {
      const d = [tr[k][0] - tr[k - 1][0], tr[k][1] - tr[k - 1][1]];
      const v = Math.hypot(d[0], d[1]) / dt;
      speeds.push(v);
      const h = v >= MOVING ? Math.atan2(d[1], d[0]) : null;
      if (prev !== null && h !== null) {
        let dh = (h - prev) % (2 * Math.PI);
        if (dh > Math.PI) dh -= 2 * Math.PI;
        if (dh <= -Math.PI) dh += 2 * Math.PI;
        turns.push(Math.abs(dh) / dt);
      }
      prev = h;
    }
  }
  return { speeds, turns };
}

// Nearest rank, as the bake's statistics.
function quantile(v, q) {
  if (!v.length) return 0;
  const s = [...v].sort((a, b) => a - b);
  return s[Math.min(Math.max(Math.ceil(s.length * q), 1), s.length) - 1];
}

let failed = false;
for (const file of process.argv.slice(2)) {
  const m = await load(file);
  const realism = m.extras.metrics.realism;
  if (!realism) {
    console.log(JSON.stringify({ file, skipped: 'no metrics.realism in the file' }));
    continue;
  }
  const fine = speedsAndTurns(m.extras.agents.map((a) => track(m, a, 1 / 25)), 1 / 25);
  const coarse = speedsAndTurns(m.extras.agents.map((a) => track(m, a, realism.crowd.sample_interval)), realism.crowd.sample_interval);
  const played = {
    turnRateP95: quantile(fine.turns, 0.95),
    speedP50: quantile(coarse.speeds, 0.5),
    speedP95: quantile(coarse.speeds, 0.95),
  };
  const report = {
    turnRateP95: realism.turn_rate_played.p95,
    speedP50: realism.crowd.speed.p50,
    speedP95: realism.crowd.speed.p95,
  };
  const off = Object.keys(played).filter((k) => {
    const floor = k.startsWith('turn') ? 0.05 : 0.0;
    return Math.abs(played[k] - report[k]) > Math.max(TOLERANCE * Math.abs(report[k]), floor);
  });
  if (off.length) failed = true;
  console.log(JSON.stringify({ file, played, report, off }));
}
process.exit(failed ? 1 : 0);
