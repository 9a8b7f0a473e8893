import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { decodeCenterNet } from './centernet-decode.js';
import { ModelLoadError } from './errors.js';
import { channelsOf } from './frame.js';
import type { Detector, Frame, RawDetection } from './types.js';

// The COCO CenterNet (MobileNetV3) weights that @vladmandic/human 3.3.6 ships, checked byte for byte:
// a damaged or swapped file is refused at load rather than giving wrong answers.
const MODEL_FILES = {
  'centernet.json': 'bfb942eaacc5becf738d536663bc4580a0ae9e560722306e6d4dd7fe4a09de05',
  'centernet.bin': '1b635a15009071f506f9f2b3519b31c072c534888989f30d269ffd44734ef7ef',
} as const;
const INPUT_SIZE = 512;
const OUTPUT = 'tower_0/detections';

/** Where the package keeps the model, resolved from node_modules like any import (no network). */
export function defaultModelDir(): string {
  const entry = createRequire(import.meta.url).resolve('@vladmandic/human');
  return path.join(path.dirname(entry), '..', 'models');
}

export interface CenterNetOptions {
  modelDir?: string;
  /** Detections below this score are not returned (the model pads its 100 rows with noise). */
  floorScore?: number;
}

/**
 * Loads the model into TensorFlow.js on its WebAssembly backend (the .wasm files are inside
 * @tensorflow/tfjs-backend-wasm; SIMD, one thread). The model is read from files and handed to tfjs
 * from memory: tfjs never fetches a URL. Throws ModelLoadError for missing, damaged or unloadable files.
 */
export async function loadCenterNet(opts: CenterNetOptions = {}): Promise<Detector> {
  const dir = opts.modelDir ?? defaultModelDir();
  const floor = opts.floorScore ?? 0.1;
  const bytes = new Map<string, Buffer>();
  for (const [name, sha256] of Object.entries(MODEL_FILES)) {
    let data: Buffer;
    try {
      data = await readFile(path.join(dir, name));
    } catch (err) {
      throw new ModelLoadError(
        `cannot read model file ${path.join(dir, name)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      );
    }
    if (createHash('sha256').update(data).digest('hex') !== sha256)
      throw new ModelLoadError(
        `model file ${path.join(dir, name)} is damaged or not the expected version (checksum differs)`,
      );
    bytes.set(name, data);
  }
  const manifest = parseManifest(bytes.get('centernet.json')!);
  const bin = bytes.get('centernet.bin')!;
  try {
    const tf = await import('@tensorflow/tfjs-core');
    await import('@tensorflow/tfjs-backend-wasm');
    const { loadGraphModel } = await import('@tensorflow/tfjs-converter');
    if (!(await tf.setBackend('wasm'))) throw new Error('the wasm backend did not start');
    await tf.ready();
    const handler = tf.io.fromMemory({
      modelTopology: manifest.modelTopology,
      weightSpecs: manifest.weightSpecs,
      weightData: bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength),
      format: 'graph-model',
    });
    const model = await loadGraphModel(handler);

    const run = (frame: Frame): Float32Array => {
      const channels = channelsOf(frame);
      const side = Math.max(frame.width, frame.height);
      return tf.tidy(() => {
        let x = tf.tensor3d(Float32Array.from(frame.data), [frame.height, frame.width, channels]);
        if (channels === 4) x = tf.slice(x, [0, 0, 0], [frame.height, frame.width, 3]);
        // Pad a non-square frame to a square (bottom and right) rather than stretch it: the model
        // was trained on undistorted objects.
        if (frame.width !== frame.height)
          x = tf.pad(x, [
            [0, side - frame.height],
            [0, side - frame.width],
            [0, 0],
          ]);
        const input = tf.image.resizeBilinear(tf.expandDims<import('@tensorflow/tfjs-core').Tensor4D>(x, 0), [
          INPUT_SIZE,
          INPUT_SIZE,
        ]);
        const out = model.execute(input, OUTPUT);
        if (Array.isArray(out)) throw new Error('unexpected model outputs');
        return out.dataSync() as Float32Array;
      });
    };
    run({ data: new Uint8Array(INPUT_SIZE * INPUT_SIZE * 3), width: INPUT_SIZE, height: INPUT_SIZE });

    return {
      inputSize: INPUT_SIZE,
      async detect(frame: Frame): Promise<RawDetection[]> {
        const side = Math.max(frame.width, frame.height);
        const sx = side / frame.width;
        const sy = side / frame.height;
        return decodeCenterNet(run(frame), INPUT_SIZE, floor)
          .map((d) => ({ ...d, box: { x: d.box.x * sx, y: d.box.y * sy, w: d.box.w * sx, h: d.box.h * sy } }))
          .filter((d) => d.box.x < 1 && d.box.y < 1)
          .map((d) => ({
            ...d,
            box: { ...d.box, w: Math.min(d.box.w, 1 - d.box.x), h: Math.min(d.box.h, 1 - d.box.y) },
          }));
      },
      dispose(): void {
        model.dispose();
      },
    };
  } catch (err) {
    throw new ModelLoadError(
      `cannot load the detection model from ${dir}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

interface Manifest {
  modelTopology: object;
  weightSpecs: import('@tensorflow/tfjs-core').io.WeightsManifestEntry[];
}

function parseManifest(json: Buffer): Manifest {
  let doc: unknown;
  try {
    doc = JSON.parse(json.toString('utf8'));
  } catch {
    throw new ModelLoadError('centernet.json is not JSON');
  }
  const d = doc as { modelTopology?: unknown; weightsManifest?: unknown };
  if (typeof d.modelTopology !== 'object' || d.modelTopology === null || !Array.isArray(d.weightsManifest)) {
    throw new ModelLoadError('centernet.json has no modelTopology / weightsManifest');
  }
  const groups: unknown[] = d.weightsManifest;
  // Trusted enough: the weights file ships inside a registry package; tfjs checks each spec as it loads.
  const weightSpecs = groups.flatMap((g): unknown[] =>
    typeof g === 'object' && g !== null && Array.isArray((g as { weights?: unknown }).weights)
      ? (g as { weights: unknown[] }).weights
      : [],
  ) as Manifest['weightSpecs'];
  return { modelTopology: d.modelTopology, weightSpecs };
}
