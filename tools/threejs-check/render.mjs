// Renders frames of a baked crowdpatch GLB as played by three.js (GLTFLoader
// + AnimationMixer, skinning applied on the CPU with
// SkinnedMesh.getVertexPosition), without WebGL: triangles are projected
// through a perspective camera, flat-shaded and painted back to front into
// an SVG (convert it to PNG with any SVG renderer, e.g. ImageMagick).
//
// Usage: node render.mjs FILE.glb OUT_PREFIX [--times 0,2.5,5] [--agent N] [--feet]
//   writes OUT_PREFIX-<t>.svg for each play time t; with --agent, the camera
//   follows agent N's first visible instance from its side (close-up); with
//   --feet as well, it looks down at the agent's feet from where they are at
//   the first time, and stays there (a planted foot that skids or turns
//   shows against the floor grid).
import { writeFileSync } from 'node:fs';
import * as THREE from 'three';
import { readGlb } from './gltf.mjs';

const args = process.argv.slice(2);
const usage = 'usage: node render.mjs FILE.glb OUT_PREFIX [--times 0,2.5,5] [--agent N] [--feet]';
if (args.includes('--help') || args.includes('-h')) {
  console.log(usage);
  process.exit(0);
}
if (args.length < 2 || args[0].startsWith('--') || args[1].startsWith('--')) {
  console.error(usage);
  process.exit(2);
}
const file = args[0];
const prefix = args[1];
let times = [0];
let follow = null;
let feet = false;
for (let i = 2; i < args.length; i++) {
  if (args[i] === '--times') times = args[++i].split(',').map(Number);
  else if (args[i] === '--agent') follow = Number(args[++i]);
  else if (args[i] === '--feet') feet = true;
}
let fixedCamera = null;
let firstSole = null;

const { gltf, extras, byIndex } = await readGlb(file);
const mixer = new THREE.AnimationMixer(gltf.scene);
mixer.clipAction(gltf.animations.find((c) => c.name === 'loop')).play();

const W = 1200;
const H = 800;
const light = new THREE.Vector3(0.4, 1, 0.3).normalize();

for (const t of times) {
  mixer.setTime(Math.min(t, extras.period - 1e-6));
  gltf.scene.updateMatrixWorld(true);
  const L = extras.size;
  const camera = new THREE.PerspectiveCamera(40, W / H, 0.1, 200);
  if (fixedCamera) {
    camera.position.copy(fixedCamera[0]);
    camera.lookAt(fixedCamera[1]);
  } else if (follow !== null && feet) {
    const agent = extras.agents[follow];
    const node = agent.nodes.map((n) => byIndex.get(n)).find((o) => o.scale.x > 0.5) ?? byIndex.get(agent.nodes[0]);
    const p = node.getWorldPosition(new THREE.Vector3());
    const q = node.getWorldQuaternion(new THREE.Quaternion());
    const side = new THREE.Vector3(1, 0, 0).applyQuaternion(q);
    const ahead = new THREE.Vector3(0, 0, 1).applyQuaternion(q);
    const eye = p.clone().addScaledVector(side, 0.9).addScaledVector(ahead, 0.6).add(new THREE.Vector3(0, 1.5, 0));
    fixedCamera = [eye, p.clone()];
    camera.position.copy(eye);
    camera.lookAt(p);
  } else if (follow !== null) {
    const agent = extras.agents[follow];
    const node = agent.nodes.map((n) => byIndex.get(n)).find((o) => o.scale.x > 0.5) ?? byIndex.get(agent.nodes[0]);
    const p = node.getWorldPosition(new THREE.Vector3());
    const q = node.getWorldQuaternion(new THREE.Quaternion());
    const side = new THREE.Vector3(1, 0, 0).applyQuaternion(q);
    camera.position.copy(p).addScaledVector(side, 4).add(new THREE.Vector3(0, 1.2, 0));
    camera.lookAt(p.clone().add(new THREE.Vector3(0, 0.8, 0)));
  } else {
    camera.position.set(L * 0.5, L * 0.75, L * 0.45);
    camera.lookAt(L * 0.5, 0, -L * 0.5);
  }
  camera.updateMatrixWorld(true);
  const tris = [];
  const project = (v) => {
    const c = v.clone().project(camera);
    return [(c.x + 1) * 0.5 * W, (1 - c.y) * 0.5 * H, c.z];
  };
  gltf.scene.traverse((o) => {
    if (!o.isMesh) return;
    // Hidden instances (scale 0 on the instance node) have zero-size bones.
    const geo = o.geometry;
    const pos = geo.attributes.position;
    const idx = geo.index ? geo.index.array : [...Array(pos.count).keys()];
    const colour = o.material.color ? o.material.color.clone() : new THREE.Color(0.7, 0.7, 0.7);
    const world = [];
    for (let i = 0; i < pos.count; i++) {
      const v = new THREE.Vector3();
      if (o.isSkinnedMesh) o.getVertexPosition(i, v);
      else v.fromBufferAttribute(pos, i);
      world.push(v.applyMatrix4(o.matrixWorld));
    }
    for (let k = 0; k < idx.length; k += 3) {
      const [a, b, c] = [world[idx[k]], world[idx[k + 1]], world[idx[k + 2]]];
      const n = new THREE.Vector3().subVectors(b, a).cross(new THREE.Vector3().subVectors(c, a));
      if (n.lengthSq() < 1e-12) continue;
      n.normalize();
      const toCam = new THREE.Vector3().subVectors(camera.position, a);
      if (n.dot(toCam) <= 0 && o.isSkinnedMesh) continue; // back face
      const pa = project(a), pb = project(b), pc = project(c);
      if ([pa, pb, pc].some((p) => p[2] < -1 || p[2] > 1)) continue;
      const shade = 0.35 + 0.65 * Math.abs(n.dot(light));
      const col = colour.clone().multiplyScalar(shade);
      tris.push({ layer: o.isSkinnedMesh ? 1 : 0, z: (pa[2] + pb[2] + pc[2]) / 3, pts: [pa, pb, pc], col: `#${col.getHexString()}` });
    }
  });
  // The ground and obstacles first, then the characters back to front.
  tris.sort((a, b) => a.layer - b.layer || b.z - a.z);
  const svg = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><rect width="${W}" height="${H}" fill="#dfe8f0"/>`];
  for (const tr of tris) {
    const d = tr.pts.map((p) => `${p[0].toFixed(1)},${p[1].toFixed(1)}`).join(' ');
    svg.push(`<polygon points="${d}" fill="${tr.col}" stroke="${tr.col}" stroke-width="0.4"/>`);
  }
  if (feet && follow !== null) {
    // A 10 cm floor grid round the feet, the sole points (heel, ball, toe)
    // where they were in the first frame (grey) and now (red: on the
    // floor, within 1 cm; blue: lifted).
    const c = fixedCamera[1];
    const line = (a, b, w) => {
      const [pa, pb] = [project(a), project(b)];
      svg.push(`<line x1="${pa[0].toFixed(1)}" y1="${pa[1].toFixed(1)}" x2="${pb[0].toFixed(1)}" y2="${pb[1].toFixed(1)}" stroke="#8899aa" stroke-width="${w}"/>`);
    };
    for (let k = -10; k <= 10; k++) {
      line(new THREE.Vector3(c.x + k * 0.1, 0, c.z - 1), new THREE.Vector3(c.x + k * 0.1, 0, c.z + 1), k % 5 ? 0.5 : 1.2);
      line(new THREE.Vector3(c.x - 1, 0, c.z + k * 0.1), new THREE.Vector3(c.x + 1, 0, c.z + k * 0.1), k % 5 ? 0.5 : 1.2);
    }
    const agent = extras.agents[follow];
    const node = agent.nodes.map((n) => byIndex.get(n)).find((o) => o.scale.x > 0.5);
    if (node) {
      const n0 = [...byIndex.entries()].find(([, o]) => o === node)[0];
      const pts = (extras.character.sole_points ?? []).map((sp) => new THREE.Vector3(...sp.local).applyMatrix4(byIndex.get(n0 + 1 + sp.joint).matrixWorld));
      firstSole ??= pts.map((v) => v.clone());
      for (const v of firstSole.filter((w) => w.y < 0.01)) {
        const q = project(v);
        svg.push(`<path d="M${q[0] - 5},${q[1] - 5}L${q[0] + 5},${q[1] + 5}M${q[0] - 5},${q[1] + 5}L${q[0] + 5},${q[1] - 5}" stroke="#555" stroke-width="1.5"/>`);
      }
      for (const v of pts) {
        const q = project(v);
        svg.push(`<circle cx="${q[0].toFixed(1)}" cy="${q[1].toFixed(1)}" r="4" fill="${v.y < 0.01 ? '#d02020' : '#2050d0'}"/>`);
      }
    }
  }
  svg.push(`<text x="12" y="24" font-family="monospace" font-size="16">${extras.name} · ${extras.character?.name ?? 'capsules'} · t = ${t.toFixed(2)} s</text></svg>`);
  const out = `${prefix}-${t.toFixed(2)}.svg`;
  writeFileSync(out, svg.join('\n'));
  console.log(`wrote ${out} (${tris.length} triangles)`);
}
