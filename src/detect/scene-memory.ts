import type { BaseLogger } from 'pino';
import type { RememberedObject } from './object-memory.js';
import {
  EMPTY_SCENE,
  judgeScene,
  type Observation,
  type SceneJudgement,
  type SceneMemory,
  type SceneRules,
} from './stationary.js';

// Each camera's scene memory at the edge: in RAM, read from the store at a camera's first check
// after start and written back when it changes, so a parked car is still known after a restart.
// The loitering zones' occupancy stays in RAM: a restart starts their count again.

/** What the scene memory needs of the store (src/store/remembered-objects.ts; main.ts passes the Store). */
export interface RememberedObjectStore {
  rememberedObjects(deviceId: string): RememberedObject[];
  replaceRememberedObjects(deviceId: string, objects: readonly RememberedObject[]): void;
}

/**
 * A change of lastSeenAt alone is written only when it moved this much: it matters only to forget
 * a person unseen for minutes, and every write is an fsync on the SD card.
 */
const LAST_SEEN_WRITE_MS = 60_000;

interface CameraScene {
  memory: SceneMemory;
  /** What the store holds. */
  stored: readonly RememberedObject[];
}

export class SceneMemories {
  private readonly cameras = new Map<string, CameraScene>();

  constructor(
    private readonly store: RememberedObjectStore | null,
    private readonly logger: BaseLogger,
  ) {}

  /** Judges one check of a camera against its memory (judgeScene), keeping the memory after it. */
  judge(
    deviceId: string,
    seen: Observation,
    rules: SceneRules,
    now: number,
    opts: { recheck: boolean },
  ): SceneJudgement {
    const scene = this.sceneOf(deviceId);
    const judged = judgeScene(scene.memory, seen, rules, now, opts);
    scene.memory = judged.memory;
    if (this.store && !storedAlike(scene.stored, judged.memory.objects)) {
      try {
        this.store.replaceRememberedObjects(deviceId, judged.memory.objects);
        scene.stored = judged.memory.objects;
      } catch (err) {
        // Kept in RAM all the same; only a restart before the next write would lose it.
        this.logger.warn({ device: deviceId, err: (err as Error).message }, 'remembered objects could not be written');
      }
    }
    return judged;
  }

  /**
   * The device was removed: its memory leaves RAM. The store's rows went with the device; a camera
   * added again starts with an empty scene.
   */
  forget(deviceId: string): void {
    this.cameras.delete(deviceId);
  }

  /** The camera's memory now (tests, logs). */
  memoryOf(deviceId: string): SceneMemory {
    return this.sceneOf(deviceId).memory;
  }

  private sceneOf(deviceId: string): CameraScene {
    let scene = this.cameras.get(deviceId);
    if (scene) return scene;
    let stored: RememberedObject[] = [];
    try {
      stored = this.store?.rememberedObjects(deviceId) ?? [];
    } catch (err) {
      this.logger.warn({ device: deviceId, err: (err as Error).message }, 'remembered objects could not be read');
    }
    scene = { memory: { ...EMPTY_SCENE, objects: stored }, stored };
    this.cameras.set(deviceId, scene);
    return scene;
  }
}

/** Whether the store's copy is still good enough: the same objects and misses, lastSeenAt within LAST_SEEN_WRITE_MS. */
function storedAlike(stored: readonly RememberedObject[], now: readonly RememberedObject[]): boolean {
  return (
    stored.length === now.length &&
    stored.every((a, i) => {
      const b = now[i]!;
      return (
        a.category === b.category &&
        a.box.x === b.box.x &&
        a.box.y === b.box.y &&
        a.box.w === b.box.w &&
        a.box.h === b.box.h &&
        a.firstSeenAt === b.firstSeenAt &&
        a.misses === b.misses &&
        Math.abs(a.lastSeenAt - b.lastSeenAt) < LAST_SEEN_WRITE_MS
      );
    })
  );
}
