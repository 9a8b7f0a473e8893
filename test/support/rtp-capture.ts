import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Runs ffmpeg's RTP muxer on one second (or `seconds`) of its 320x240, 10 fps test source (or `source`) at a UDP socket
 * on
 * loopback and returns the packets in arrival order with the SDP ffmpeg wrote. After ffmpeg exits,
 * all it sent is queued on the socket; a datagram sent then lands behind it, so its arrival marks
 * the end without waiting on a clock.
 */
export async function captureRtp(
  encoder: string[],
  muxer: string[] = [],
  source = 'testsrc2=size=320x240:rate=10',
  seconds = 1,
): Promise<{ packets: Buffer[]; sdp: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'rtp-capture-'));
  const rtp = dgram.createSocket({ type: 'udp4', recvBufferSize: 1 << 22 });
  const rtcp = dgram.createSocket('udp4');
  try {
    rtp.bind(0, '127.0.0.1');
    rtcp.bind(0, '127.0.0.1');
    await Promise.all([once(rtp, 'listening'), once(rtcp, 'listening')]);
    const sentinel = Buffer.from('end of capture');
    const packets: Buffer[] = [];
    const ended = new Promise<void>((resolve) => {
      rtp.on('message', (msg) => (msg.equals(sentinel) ? resolve() : packets.push(msg)));
    });
    const sdpFile = path.join(dir, 'stream.sdp');
    const url = `rtp://127.0.0.1:${rtp.address().port}?rtcpport=${rtcp.address().port}&pkt_size=1000`;
    const args = [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      source,
      '-t',
      String(seconds),
      ...encoder,
      '-f',
      'rtp',
      '-rtpflags',
      'skip_rtcp',
      ...muxer,
      '-sdp_file',
      sdpFile,
      url,
    ];
    const child = spawn('ffmpeg', args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    if (code !== 0) throw new Error(`ffmpeg exited ${code}: ${stderr}`);
    rtcp.send(sentinel, rtp.address().port, '127.0.0.1');
    await ended;
    return { packets, sdp: await readFile(sdpFile, 'utf8') };
  } finally {
    rtp.close();
    rtcp.close();
    await rm(dir, { recursive: true, force: true });
  }
}
