// A detector worker thread: loads the model once, then runs one check at a time. Started by
// DetectorPool; inference blocks this thread, never the daemon's event loop.
import { parentPort, workerData } from 'node:worker_threads';
import { FrameError } from './errors.js';
import { shrinkFrame } from './frame.js';
import { inspectFrame } from './inspect.js';
import { loadCenterNet } from './tfjs-centernet.js';
import type { CheckMessage, WorkerConfig, WorkerMessage } from './worker-protocol.js';

const port = parentPort;
if (!port) throw new Error('detect/worker.js runs only as a worker thread');
const config = workerData as WorkerConfig;
const send = (msg: WorkerMessage): void => port.postMessage(msg);

try {
  const detector = await loadCenterNet({
    floorScore: config.floorScore,
    ...(config.modelDir ? { modelDir: config.modelDir } : {}),
  });
  // The first run of a graph sets up its kernels and buffers and costs several later ones: paid
  // here, before 'ready', not by the first motion start's alert.
  const side = detector.inputSize;
  await detector.detect({ data: new Uint8Array(side * side * 3), width: side, height: side });
  port.on('message', (msg: CheckMessage) => {
    void (async () => {
      try {
        const frames = [];
        for (const frame of msg.frames) frames.push(await inspectFrame(detector, frame, msg.motion));
        // Scaled here rather than on the daemon's event loop (a few ms a frame); the copies are
        // this thread's own, so they move back without another copy.
        const keptWidth = msg.keptWidth;
        const kept = keptWidth === null ? [] : msg.frames.map((f) => shrinkFrame(f, keptWidth));
        port.postMessage({ type: 'result', id: msg.id, frames, kept } satisfies WorkerMessage, [
          ...new Set(kept.map((f) => f.data.buffer as ArrayBuffer)),
        ]);
      } catch (err) {
        send({
          type: 'failed',
          id: msg.id,
          message: err instanceof Error ? err.message : String(err),
          frameError: err instanceof FrameError,
        });
      }
    })();
  });
  send({ type: 'ready', inputSize: detector.inputSize });
} catch (err) {
  send({ type: 'load-failed', message: err instanceof Error ? err.message : String(err) });
  port.close();
}
