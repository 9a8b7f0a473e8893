import { connect, type Socket } from 'node:net';
import { formatRequest, RtspHeaders, RtspStreamReader, type RtspResponse } from '../../src/media/rtsp/index.js';

// A bare RTSP client for tests that need to see what players hide: exact answers, the interleaved
// frames in order, and connections from other loopback addresses (127.0.0.2 …).

export interface InterleavedFrame {
  channel: number;
  payload: Buffer;
}

export class TestRtspClient {
  readonly frames: InterleavedFrame[] = [];
  private cseq = 0;
  private readonly waiting = new Map<number, (r: RtspResponse) => void>();
  readonly closed: Promise<void>;
  private frameListeners: Array<() => void> = [];

  private constructor(readonly socket: Socket) {
    const reader = new RtspStreamReader();
    socket.on('data', (chunk: Buffer) => {
      reader.push(chunk);
      for (let item = reader.next(); item; item = reader.next()) {
        if (item.kind === 'interleaved') {
          this.frames.push({ channel: item.channel, payload: Buffer.from(item.payload) });
          for (const l of this.frameListeners) l();
        } else if (item.kind === 'response') {
          const cseq = Number(item.msg.headers.get('cseq'));
          this.waiting.get(cseq)?.(item.msg);
          this.waiting.delete(cseq);
        }
      }
    });
    socket.on('error', () => undefined);
    this.closed = new Promise((r) => socket.once('close', () => r()));
  }

  static open(port: number, localAddress = '127.0.0.1'): Promise<TestRtspClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1', localAddress }, () => resolve(new TestRtspClient(socket)));
      socket.once('error', reject);
    });
  }

  request(method: string, uri: string, headers: Record<string, string> = {}): Promise<RtspResponse> {
    const cseq = ++this.cseq;
    const h = new RtspHeaders({ CSeq: String(cseq), ...headers });
    return new Promise((resolve, reject) => {
      this.waiting.set(cseq, resolve);
      void this.closed.then(() => reject(new Error(`connection closed before the answer to ${method}`)));
      this.socket.write(formatRequest({ method, uri, version: 'RTSP/1.0', headers: h, body: Buffer.alloc(0) }));
    });
  }

  /** Resolves once `count` frames on `channel` have arrived. */
  waitForFrames(channel: number, count: number): Promise<InterleavedFrame[]> {
    return new Promise((resolve) => {
      const check = () => {
        const got = this.frames.filter((f) => f.channel === channel);
        if (got.length < count) return;
        this.frameListeners = this.frameListeners.filter((l) => l !== check);
        resolve(got);
      };
      this.frameListeners.push(check);
      check();
    });
  }

  /** DESCRIBE, SETUP track 0 with the given transport, PLAY; returns the answers. */
  async play(
    url: string,
    transport = 'RTP/AVP/TCP;unicast;interleaved=0-1',
  ): Promise<{ setup: RtspResponse; play: RtspResponse; session: string }> {
    const described = await this.request('DESCRIBE', url, { Accept: 'application/sdp' });
    if (described.status !== 200) throw new Error(`DESCRIBE answered ${described.status}`);
    const setup = await this.request('SETUP', `${url}/trackID=0`, { Transport: transport });
    if (setup.status !== 200) throw new Error(`SETUP answered ${setup.status}`);
    const session = (setup.headers.get('session') ?? '').split(';')[0] as string;
    const play = await this.request('PLAY', `${url}/`, { Session: session, Range: 'npt=0.000-' });
    return { setup, play, session };
  }

  close(): void {
    this.socket.destroy();
  }
}
