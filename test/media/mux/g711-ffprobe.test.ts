import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { decode, ffprobe, withFile } from '../fmp4/mux-capture.js';
import { muxedWithG711 } from './synthetic-camera.js';

// What the recorder will keep: FragmentMuxer's init segment and fragments of H.264 with G.711
// (g711: true), as one file for ffmpeg, which reads its clips. ffprobe must find the µ-law track
// beside the video, ffmpeg decode both without an error, and turn the audio into AAC.

const run = promisify(execFile);

describe('FragmentMuxer with g711 read by ffmpeg', () => {
  let file: Buffer;
  beforeAll(() => {
    const { init, parts } = muxedWithG711(2, [30]);
    expect(parts).toHaveLength(4);
    file = Buffer.concat([init, ...parts]);
  });

  it('ffprobe lists pcm_mulaw at 8000 Hz beside the h264 video, without an error', async () => {
    const { stdout, stderr } = await withFile(file, 'clip.mp4', (f) =>
      run('ffprobe', ['-v', 'error', '-of', 'json', '-show_streams', f]),
    );
    expect(stderr).toBe('');
    const { streams } = JSON.parse(stdout) as { streams: Array<Record<string, unknown>> };
    expect(streams.map((s) => [s.codec_type, s.codec_name])).toEqual([
      ['video', 'h264'],
      ['audio', 'pcm_mulaw'],
    ]);
    expect(streams[0]).toMatchObject({ width: 64, height: 48 });
    expect(streams[1]).toMatchObject({ sample_rate: '8000', channels: 1, time_base: '1/8000' });
  });

  it('ffmpeg reads every packet at its time and decodes both tracks without an error', async () => {
    const probe = await withFile(file, 'clip.mp4', ffprobe);
    const audio = probe.packets.filter((p) => p.stream_index === 1);
    // 20 ms packets over the 2 s (the end of the stream hands on what the timelines held), the 30th
    // lost: its time is silence.
    expect(audio.map((p) => p.pts)).toEqual(
      Array.from({ length: 100 }, (_, n) => n * 160).filter((pts) => pts !== 30 * 160),
    );
    expect(audio.map((p) => Number(p.size))).toEqual(audio.map((p) => (p.pts === 29 * 160 ? 320 : 160)));
    const decoded = await withFile(file, 'clip.mp4', (f) => decode(f));
    expect(decoded.errors).toBe('');
    expect(decoded.hashes).toHaveLength(20 + audio.length);
  });

  it('ffmpeg turns the µ-law into AAC, the video copied', async () => {
    const out = await withFile(file, 'clip.mp4', async (f) => {
      const aac = path.join(path.dirname(f), 'aac.mp4');
      const { stderr } = await run('ffmpeg', ['-v', 'error', '-i', f, '-c:v', 'copy', '-c:a', 'aac', aac]);
      return { stderr, probe: await ffprobe(aac) };
    });
    expect(out.stderr).toBe('');
    expect(out.probe.streams.map((s) => s.codec_name)).toEqual(['h264', 'aac']);
    expect(out.probe.streams[1]).toMatchObject({ sample_rate: '8000', channels: 1 });
  });
});
