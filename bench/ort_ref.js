#!/usr/bin/env node
// ort_ref.js: score a neateval population exported as ONNX models
// (`neateval export --all`, or the bench's own export) with onnxruntime, as a
// reference beside PyTorch (torch_ref.py), with the same inputs and outputs.
//
//   node bench/ort_ref.js MODELS MNIST [--threads 2] [--batch N|auto]
//       [--limit N] [--results FILE|-] [--warmup] [--logits DIR] [--spin]
//
// MODELS is a folder with manifest.json (the genomes in the population's
// order: {"genomes": [{"genome_id", "file", "error"}]}, file relative to
// the folder, null for a genome that could not be exported, with its error)
// and the .onnx files. MNIST is the t10k images IDX file (.gz ok) or a folder
// holding t10k-images-idx3-ubyte[.gz] and t10k-labels-idx1-ubyte[.gz]. Pixels
// become float32 x/255, as neateval and torch_ref.py compute them.
//
// Each genome runs in its own InferenceSession with --threads intra-op
// threads, one inter-op thread, sequential execution and every graph
// optimisation; its threads wait passively for work unless --spin.
// --batch auto (the default) tries 64, 256 and 1024 images
// per run on a warm-up of up to 1024 images, untimed, and scores the genome
// with the fastest. The time of the scoring alone is summed, as torch_ref.py
// does: session creation and warm-up are not timed.
//
// The summary JSON goes to stdout, last. --results writes one JSON line per
// genome (genome_id, fitness, accuracy, loss, images, error, batch) to FILE
// or, with -, to stdout before the summary. --logits writes each scored
// genome's logits to DIR/<genome_id>.f32, little-endian float32 [N, classes].
//
// onnxruntime-node is found by require(), so through NODE_PATH: install it
// with scripts/ort-deps.sh (or ONNXRUNTIME_NODE_INSTALL=skip npm install
// onnxruntime-node; its CPU library is in the package).
'use strict';

const fs = require('fs');
const path = require('path');
const zlib = require('zlib');

function die(msg) {
  process.stderr.write(`ort_ref.js: ${msg}\n`);
  process.exit(2);
}

function parseArgs(argv) {
  const a = { threads: 2, batch: 'auto', limit: 0, results: null, warmup: false, logits: null, spin: false, pos: [] };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) die(`${k} needs a value`);
      return argv[++i];
    };
    const int = (lo) => {
      const s = val();
      const v = Number(s);
      if (!Number.isInteger(v) || v < lo) die(`${k} ${s}: want a whole number ≥ ${lo}`);
      return v;
    };
    switch (k) {
      case '--threads': a.threads = int(1); break;
      case '--batch': { const s = argv[i + 1]; a.batch = s === 'auto' ? (i++, 'auto') : int(1); break; }
      case '--limit': a.limit = int(0); break;
      case '--results': a.results = val(); break;
      case '--logits': a.logits = val(); break;
      case '--warmup': a.warmup = true; break;
      case '--spin': a.spin = true; break;
      default:
        if (k.startsWith('--')) die(`unknown flag ${k}`);
        a.pos.push(k);
    }
  }
  if (a.pos.length !== 2) die('usage: ort_ref.js MODELS MNIST [--threads T] [--batch N|auto] [--limit N] [--results FILE|-] [--warmup] [--logits DIR] [--spin]');
  return a;
}

// readIDX returns {dims, data} of an IDX file of unsigned bytes.
function readIDX(file) {
  let b = fs.readFileSync(file);
  if (b[0] === 0x1f && b[1] === 0x8b) b = zlib.gunzipSync(b);
  if (b.length < 4 || b[0] !== 0 || b[1] !== 0 || b[2] !== 8) die(`${file}: not an IDX file of unsigned bytes`);
  const rank = b[3];
  const dims = [];
  for (let i = 0; i < rank; i++) dims.push(b.readUInt32BE(4 + 4 * i));
  const off = 4 + 4 * rank;
  const n = dims.reduce((x, y) => x * y, 1);
  if (b.length !== off + n) die(`${file}: ${b.length} bytes, the header says ${off + n}`);
  return { dims, data: b.subarray(off) };
}

function findMNIST(p) {
  if (!fs.statSync(p).isDirectory()) {
    return [p, p.replace('images-idx3', 'labels-idx1')];
  }
  const pick = (base) => {
    for (const name of [base, base + '.gz']) {
      if (fs.existsSync(path.join(p, name))) return path.join(p, name);
    }
    die(`${p}: no ${base}[.gz]`);
  };
  return [pick('t10k-images-idx3-ubyte'), pick('t10k-labels-idx1-ubyte')];
}

// score runs the session over every image in batches of `batch` and returns
// {correct, lossSum, finite, logits}.
async function score(ort, sess, images, labels, shape, classes, batch, keep) {
  const size = shape[0] * shape[1] * shape[2];
  const n = labels.length;
  const out = keep ? new Float32Array(n * classes) : null;
  let correct = 0, lossSum = 0, finite = true;
  for (let i = 0; i < n; i += batch) {
    const m = Math.min(batch, n - i);
    const x = new ort.Tensor('float32', images.subarray(i * size, (i + m) * size), [m, ...shape]);
    const y = (await sess.run({ input: x })).logits.data;
    if (keep) out.set(y, i * classes);
    for (let r = 0; r < m; r++) {
      const row = y.subarray(r * classes, (r + 1) * classes);
      let best = row[0], arg = 0;
      for (let k = 1; k < classes; k++) if (row[k] > best) { best = row[k]; arg = k; }
      let s = 0, ok = true;
      for (let k = 0; k < classes; k++) {
        if (!Number.isFinite(row[k])) ok = false;
        s += Math.exp(row[k] - best);
      }
      if (!ok) { finite = false; continue; }
      if (arg === labels[i + r]) correct++;
      lossSum += Math.log(s) + best - row[labels[i + r]];
    }
  }
  return { correct, lossSum, finite, logits: out };
}

// bestBatch times one pass over up to 1024 images at each candidate batch
// size and returns the fastest.
async function bestBatch(ort, sess, images, labels, shape, classes) {
  const m = Math.min(1024, labels.length);
  const size = shape[0] * shape[1] * shape[2];
  const imgs = images.subarray(0, m * size), labs = labels.subarray(0, m);
  let best = 0, bestT = Infinity;
  for (const b of [64, 256, 1024]) {
    if (b > m && best) break;
    const t0 = process.hrtime.bigint();
    await score(ort, sess, imgs, labs, shape, classes, b, false);
    const t = Number(process.hrtime.bigint() - t0);
    if (t < bestT) { best = b; bestT = t; }
  }
  return best;
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = require('onnxruntime-node');
  } catch (e) {
    die(`cannot load onnxruntime-node (${e.code || e.message}); install it with scripts/ort-deps.sh and set NODE_PATH`);
  }
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(a.pos[0], 'manifest.json'), 'utf8'));
  } catch (e) {
    die(`${path.join(a.pos[0], 'manifest.json')}: ${e.message}`);
  }
  const [imgPath, labPath] = findMNIST(a.pos[1]);
  const img = readIDX(imgPath), lab = readIDX(labPath);
  let n = img.dims[0];
  if (lab.dims[0] !== n) die(`${labPath}: ${lab.dims[0]} labels for ${n} images`);
  if (a.limit) n = Math.min(n, a.limit);
  const shape = img.dims.length === 3 ? [1, img.dims[1], img.dims[2]] : img.dims.slice(1);
  const size = shape[0] * shape[1] * shape[2];
  const images = new Float32Array(n * size);
  for (let i = 0; i < images.length; i++) images[i] = img.data[i] / 255;
  const labels = new Int32Array(lab.data.subarray(0, n));
  const classes = manifest.num_classes;
  if (!Number.isInteger(classes) || classes < 1) die('manifest.json: num_classes missing');
  if (a.logits) fs.mkdirSync(a.logits, { recursive: true });

  // Threads wait passively unless --spin: on a machine shared with other
  // work, spinning threads make onnxruntime several times slower than it is
  // (the bench sets OMP_WAIT_POLICY=PASSIVE for PyTorch alike).
  const spin = a.spin ? '1' : '0';
  const opts = {
    intraOpNumThreads: a.threads, interOpNumThreads: 1, executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    extra: { session: { intra_op: { allow_spinning: spin }, inter_op: { allow_spinning: spin } } },
  };
  const results = [];
  const batches = {};
  let secs = 0, evaluated = 0;
  for (const g of manifest.genomes) {
    if (!g.file) {
      results.push({ genome_id: g.genome_id, fitness: null, accuracy: null, loss: null, images: 0, error: g.error });
      continue;
    }
    const sess = await ort.InferenceSession.create(path.join(a.pos[0], g.file), opts);
    let batch = a.batch;
    if (batch === 'auto') batch = await bestBatch(ort, sess, images, labels, shape, classes);
    else if (a.warmup) await score(ort, sess, images.subarray(0, Math.min(batch, n) * size), labels.subarray(0, Math.min(batch, n)), shape, classes, batch, false);
    batches[batch] = (batches[batch] || 0) + 1;
    const t0 = process.hrtime.bigint();
    const r = await score(ort, sess, images, labels, shape, classes, batch, !!a.logits);
    secs += Number(process.hrtime.bigint() - t0) / 1e9;
    evaluated++;
    await sess.release();
    if (a.logits) fs.writeFileSync(path.join(a.logits, `${g.genome_id}.f32`), Buffer.from(r.logits.buffer));
    if (!r.finite) {
      results.push({ genome_id: g.genome_id, fitness: null, accuracy: null, loss: null, images: n, error: 'non-finite logits (NaN or ±Inf)', batch });
    } else {
      const acc = r.correct / n;
      results.push({ genome_id: g.genome_id, fitness: acc, accuracy: acc, loss: r.lossSum / n, images: n, error: null, batch });
    }
  }
  if (a.results) {
    const text = results.map((r) => JSON.stringify(r) + '\n').join('');
    if (a.results === '-') process.stdout.write(text);
    else fs.writeFileSync(a.results, text);
  }
  const version = (ort.env && ort.env.versions && ort.env.versions.node) || 'unknown';
  process.stdout.write(JSON.stringify({
    engine: `onnxruntime ${version}`, threads: a.threads, spin: a.spin, batch: a.batch, batches,
    genomes: evaluated, invalid: manifest.genomes.length - evaluated, images: n,
    seconds: Math.round(secs * 1e4) / 1e4,
    images_genomes_per_s: secs > 0 ? Math.round(evaluated * n / secs * 10) / 10 : null,
  }) + '\n');
}

main().catch((e) => die(e.stack || String(e)));
