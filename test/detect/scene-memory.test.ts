import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { RememberedObject } from '../../src/detect/object-memory.js';
import { SceneMemories, type RememberedObjectStore } from '../../src/detect/scene-memory.js';
import type { Observation, SceneRules } from '../../src/detect/stationary.js';
import type { Box } from '../../src/detect/types.js';

// The scene memory at its edge: read from the store at a camera's first check, written back when it
// changes (a lastSeenAt alone only once it moved a minute), kept in RAM when the store fails.

const CAR: Box = { x: 0.2, y: 0.45, w: 0.3, h: 0.2 };
const rules: SceneRules = { stationaryIou: 0.6, zones: {}, stationaryZones: [], loiteringZones: {} };
const car = { label: 'car', category: 'vehicle' as const, score: 0.6, box: CAR };
const sawCar: Observation = { found: [car], bestFrame: { vehicle: 0 }, frames: [[car]], people: [], looked: null };
const sawNothing: Observation = { found: [], bestFrame: {}, frames: [[]], people: [], looked: null };
const quiet = pino({ level: 'silent' });

function fakeStore(start: Record<string, RememberedObject[]> = {}) {
  const lists = new Map(Object.entries(start));
  const writes: Array<[string, readonly RememberedObject[]]> = [];
  const store: RememberedObjectStore & { failing: boolean } = {
    failing: false,
    rememberedObjects: (id) => {
      if (store.failing) throw new Error('disk I/O error');
      return lists.get(id) ?? [];
    },
    replaceRememberedObjects: (id, objects) => {
      if (store.failing) throw new Error('database or disk is full');
      writes.push([id, objects]);
      lists.set(id, [...objects]);
    },
  };
  return { store, writes, lists };
}

describe('SceneMemories', () => {
  it('a car remembered before a restart is stationary at the first check after it', () => {
    const { store } = fakeStore();
    const before = new SceneMemories(store, quiet);
    expect(before.judge('dev_a', sawCar, rules, 1000, { recheck: false }).type).toBe('vehicle');
    const after = new SceneMemories(store, quiet);
    const judged = after.judge('dev_a', sawCar, rules, 90_000, { recheck: false });
    expect(judged.type).toBeNull();
    expect(judged.objects[0]?.stationary).toBe(true);
    // Another camera remembers nothing of it.
    expect(after.judge('dev_b', sawCar, rules, 90_000, { recheck: false }).type).toBe('vehicle');
  });

  it('writes a change at once, a lastSeenAt alone only once it moved a minute', () => {
    const { store, writes } = fakeStore();
    const scenes = new SceneMemories(store, quiet);
    scenes.judge('dev_a', sawCar, rules, 1000, { recheck: false });
    expect(writes).toHaveLength(1);
    scenes.judge('dev_a', sawCar, rules, 30_000, { recheck: false });
    expect(writes).toHaveLength(1);
    scenes.judge('dev_a', sawCar, rules, 61_000, { recheck: false });
    expect(writes).toHaveLength(2);
    scenes.judge('dev_a', sawNothing, rules, 62_000, { recheck: false });
    expect(writes.at(-1)?.[1]).toMatchObject([{ misses: 1 }]);
    scenes.judge('dev_a', sawNothing, rules, 63_000, { recheck: false });
    expect(writes.at(-1)).toEqual(['dev_a', []]);
  });

  it('a store that fails: the memory is kept in RAM, the check is judged all the same', () => {
    const { store } = fakeStore();
    store.failing = true;
    const scenes = new SceneMemories(store, quiet);
    expect(scenes.judge('dev_a', sawCar, rules, 1000, { recheck: false }).type).toBe('vehicle');
    expect(scenes.judge('dev_a', sawCar, rules, 2000, { recheck: false }).type).toBeNull();
    expect(scenes.memoryOf('dev_a').objects).toHaveLength(1);
  });

  it('a removed camera leaves RAM: added again, the car is news (the store lost its rows with the device)', () => {
    const { store, lists } = fakeStore();
    const scenes = new SceneMemories(store, quiet);
    scenes.judge('dev_a', sawCar, rules, 1000, { recheck: false });
    scenes.judge('dev_b', sawCar, rules, 1000, { recheck: false });
    lists.delete('dev_a');
    scenes.forget('dev_a');
    expect(scenes.judge('dev_a', sawCar, rules, 2000, { recheck: false }).type).toBe('vehicle');
    expect(scenes.judge('dev_b', sawCar, rules, 2000, { recheck: false }).type).toBeNull();
  });
});
