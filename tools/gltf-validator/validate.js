#!/usr/bin/env node
// validate.js FILE.glb|FILE.gltf...  — runs the Khronos glTF Validator (the
// pinned npm package gltf-validator, installed here by `npm ci`) on each file.
//
// Prints one JSON line per file:
//   {"file", "errors", "warnings", "infos", "hints", "animations", "drawCalls", "vertices", "triangles", "messages": ["E CODE /pointer message", ...]}
// where messages lists up to 20 issues of severity error (E), warning (W) and
// information (I). Exit status: 0 when no file has an error or a warning,
// 1 when some file does, 2 on bad usage or when the validator cannot run.
'use strict';
const fs = require('fs');
const path = require('path');

let validator;
try {
  validator = require('gltf-validator');
} catch (e) {
  console.error(`validate.js: cannot load gltf-validator (${e.message}); run npm ci in ${__dirname}`);
  process.exit(2);
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node validate.js FILE.glb...');
  process.exit(2);
}

const SEVERITY = ['E', 'W', 'I', 'H'];

async function validate(file) {
  const data = new Uint8Array(fs.readFileSync(file));
  const report = await validator.validateBytes(data, {
    uri: path.basename(file),
    maxIssues: 1000,
    externalResourceFunction: (uri) =>
      new Promise((resolve, reject) => {
        fs.readFile(path.resolve(path.dirname(file), decodeURIComponent(uri)), (err, bytes) =>
          err ? reject(err.toString()) : resolve(new Uint8Array(bytes)));
      }),
  });
  const issues = report.issues;
  const messages = issues.messages
    .filter((m) => m.severity <= 2)
    .slice(0, 20)
    .map((m) => `${SEVERITY[m.severity]} ${m.code} ${m.pointer || ''} ${m.message}`);
  return {
    file,
    errors: issues.numErrors,
    warnings: issues.numWarnings,
    infos: issues.numInfos,
    hints: issues.numHints,
    animations: report.info ? report.info.animationCount : null,
    drawCalls: report.info ? report.info.drawCallCount : null,
    vertices: report.info ? report.info.totalVertexCount : null,
    triangles: report.info ? report.info.totalTriangleCount : null,
    messages,
  };
}

(async () => {
  let bad = false;
  for (const file of files) {
    const result = await validate(file);
    console.log(JSON.stringify(result));
    if (result.errors > 0 || result.warnings > 0) bad = true;
  }
  process.exit(bad ? 1 : 0);
})().catch((e) => {
  console.error(`validate.js: ${e && e.stack ? e.stack : e}`);
  process.exit(2);
});
