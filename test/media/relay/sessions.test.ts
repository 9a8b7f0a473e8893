import { describe, expect, it } from 'vitest';
import { InterleavedBatch } from '../../../src/media/relay/sessions.js';
import { RtspStreamReader } from '../../../src/media/rtsp/index.js';

// A viewer's interleaved frames are gathered while one camera read is handed out and written in one
// corked burst on the next tick: the bytes must be exactly the frames, in order.

class FakeSocket {
  destroyed = false;
  corked = 0;
  /** Each uncorked burst: the buffers written while corked. */
  bursts: Buffer[][] = [];
  private current: Buffer[] = [];
  cork(): void {
    this.corked++;
  }
  uncork(): void {
    this.corked--;
    this.bursts.push(this.current);
    this.current = [];
  }
  write(b: Buffer): boolean {
    if (this.corked === 0) throw new Error('written uncorked');
    this.current.push(b);
    return true;
  }
}

const tick = () => new Promise((r) => process.nextTick(r));

describe('InterleavedBatch', () => {
  it('writes the frames of one tick as one corked burst that parses back to the same packets', async () => {
    const socket = new FakeSocket();
    const batch = new InterleavedBatch(socket);
    const packets = [Buffer.from('first packet'), Buffer.alloc(1400, 7), Buffer.from([1, 2, 3]), Buffer.alloc(0)];
    const channels = [0, 0, 1, 2];
    packets.forEach((p, i) => batch.add(channels[i]!, p));
    expect(batch.bytes).toBe(packets.reduce((a, p) => a + 4 + p.length, 0));
    expect(socket.bursts).toEqual([]); // nothing before the read is done
    await tick();
    expect(socket.bursts).toHaveLength(1);
    expect(batch.bytes).toBe(0);
    const reader = new RtspStreamReader();
    reader.push(Buffer.concat(socket.bursts[0]!));
    const got: Array<[number, Buffer]> = [];
    for (let item = reader.next(); item; item = reader.next())
      if (item.kind === 'interleaved') got.push([item.channel, Buffer.from(item.payload)]);
    expect(got).toEqual(packets.map((p, i) => [channels[i], p]));
    // The packets themselves are written, not copies.
    expect(socket.bursts[0]!.filter((_, i) => i % 2 === 1)).toEqual(packets);
    expect(socket.bursts[0]![1]).toBe(packets[0]);
  });

  it('starts a new burst for the next read, and writes nothing to a socket destroyed meanwhile', async () => {
    const socket = new FakeSocket();
    const batch = new InterleavedBatch(socket);
    batch.add(0, Buffer.from('a'));
    await tick();
    batch.add(0, Buffer.from('b'));
    batch.add(0, Buffer.from('c'));
    await tick();
    expect(socket.bursts.map((b) => b.length)).toEqual([2, 4]);
    batch.add(0, Buffer.from('d'));
    socket.destroyed = true;
    await tick();
    expect(socket.bursts).toHaveLength(2);
    expect(batch.bytes).toBe(0);
  });
});
