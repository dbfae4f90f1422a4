// Shared by check.mjs, realism.mjs and render.mjs: a crowdpatch GLB read with
// three.js's GLTFLoader (meshopt-compressed files through three.js's meshopt
// decoder), its extras.crowdpatch, and its scene objects by glTF node index.
import { readFileSync } from 'node:fs';
import { GLTFLoader } from 'three/examples/jsm/loaders/GLTFLoader.js';
import { MeshoptDecoder } from 'three/examples/jsm/libs/meshopt_decoder.module.js';

export function parse(buffer) {
  return new Promise((resolve, reject) => {
    new GLTFLoader()
      .setMeshoptDecoder(MeshoptDecoder)
      .parse(buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength), '', resolve, reject);
  });
}

// The parsed file, its extras.crowdpatch and its objects by node index.
export async function readGlb(file) {
  const gltf = await parse(readFileSync(file));
  const json = gltf.parser.json;
  // Absent from a file another tool re-packed without its extras.
  const extras = json.scenes?.[json.scene ?? 0]?.extras?.crowdpatch;
  const byIndex = new Map();
  gltf.scene.traverse((o) => {
    const a = gltf.parser.associations.get(o);
    if (a && a.nodes !== undefined) byIndex.set(a.nodes, o);
  });
  return { gltf, extras, byIndex };
}
