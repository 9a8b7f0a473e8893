import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audioModeFor, audioModeOf, writeClip, writeThumbnail } from '../../../src/media/recorder/clip-writer.js';
import { assembleArgs, concatList, motionArgs, thumbnailArgs } from '../../../src/media/recorder/ffmpeg-args.js';
import { listedSegments, segmentMuxerArgs } from '../../support/fmp4-segments.js';

const run = promisify(execFile);

describe('ffmpeg argument lists', () => {
  it.each([
    ['copy', ['-c:a', 'copy']],
    ['aac', ['-c:a', 'aac', '-b:a', '64k']],
    ['none', ['-an']],
  ] as const)('assemble with audio %s: copies video, MP4 with the index first', (audio, audioArgs) => {
    const args = assembleArgs({ listFile: '/r/.x.ffconcat', output: '/s/.x.mp4.tmp', durationS: 12.3456, audio });
    const text = args.join(' ');
    expect(text).toContain('-f concat -safe 0 -i /r/.x.ffconcat -t 12.346');
    expect(text).toContain('-c:v copy');
    expect(text).toContain(audioArgs.join(' '));
    expect(text).toContain('-movflags +faststart -f mp4 -y /s/.x.mp4.tmp');
    expect(args).not.toContain('-ss'); // a copied stream may only start where the first segment does
  });

  it('quotes segment paths the ffconcat way and gives each its listed duration', () => {
    expect(
      concatList([
        { path: '/a/b.mp4', durationS: 1 },
        { path: "/a/it's here.mp4", durationS: 0.9333 },
      ]),
    ).toBe(
      "ffconcat version 1.0\nfile '/a/b.mp4'\nduration 1.000000\nfile '/a/it'\\''s here.mp4'\nduration 0.933300\n",
    );
  });

  it('thumbnail and motion frames', () => {
    expect(thumbnailArgs({ input: '/c.mp4', offsetS: 2.5, output: '/c.jpg.tmp', width: 640 }).join(' ')).toContain(
      '-ss 2.500 -i /c.mp4 -frames:v 1 -vf scale=640:-2',
    );
    expect(motionArgs({ inputUrl: 'rtsp://x', fps: 2, width: 64, height: 36, readTimeoutS: 5 }).join(' ')).toContain(
      '-an -vf fps=2,scale=64:36,format=gray -f rawvideo pipe:1',
    );
  });
});

// The same argument lists run by real ffmpeg: segments like the recorder's, then a clip from them.
describe('clip assembly with real ffmpeg', () => {
  let dir: string;
  /** The segments with their lengths, as the recorder knows them. */
  const segmentsOf = (sub: string) =>
    listedSegments(path.join(dir, sub)).map((s) => ({
      path: path.join(dir, sub, s.file),
      durationS: s.endS - s.startS,
    }));

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "eg-clip-it's "));
    // 4 s of 10 fps H.264 with a keyframe each second and no B-frames (as cameras send), one with AAC and one with
    // G.711 µ-law audio, in fMP4 segments like the recorder's (one per keyframe).
    for (const [sub, audio, format] of [
      ['aac', ['-c:a', 'aac'], 'mp4'],
      ['pcmu', ['-c:a', 'pcm_mulaw', '-ar', '8000'], 'mov'],
    ] as const) {
      const out = path.join(dir, sub);
      await run('mkdir', ['-p', out]);
      await run('ffmpeg', [
        '-v',
        'error',
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=320x180:rate=10',
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:sample_rate=16000',
        '-t',
        '4',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-bf',
        '0',
        '-g',
        '10',
        '-pix_fmt',
        'yuv420p',
        ...audio,
        '-ac',
        '1',
        ...segmentMuxerArgs(out, format),
      ]);
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('tells AAC (copied) from G.711 (encoded: MP4 cannot hold it), as the recorder does from its muxer', async () => {
    expect(await audioModeOf('ffmpeg', segmentsOf('aac')[0]!.path)).toBe('copy');
    expect(await audioModeOf('ffmpeg', segmentsOf('pcmu')[0]!.path)).toBe('aac');
    expect([audioModeFor('AAC'), audioModeFor('G711'), audioModeFor(null)]).toEqual(['copy', 'aac', 'none']);
  });

  it.each(['aac', 'pcmu'])(
    'writes a playable MP4 (with %s audio) of the asked length, index first, plus a thumbnail',
    async (sub) => {
      const segments = segmentsOf(sub);
      expect(segments).toHaveLength(4); // one per keyframe
      const storage = path.join(dir, `storage-${sub}`);
      const written = await writeClip({
        ffmpegPath: 'ffmpeg',
        scratchDir: path.join(dir, sub),
        segments: segments.slice(1), // from the keyframe at 1 s
        durationS: 2.5,
        audio: await audioModeOf('ffmpeg', segments[0]!.path),
        storageDir: storage,
        fileName: 'dev_1/rec_1.mp4',
      });
      const file = path.join(storage, 'dev_1/rec_1.mp4');
      expect(
        await writeThumbnail({
          ffmpegPath: 'ffmpeg',
          storageDir: storage,
          fileName: 'dev_1/rec_1.mp4',
          atS: 1,
          durationS: 2.5,
        }),
      ).toBe(true);
      expect(readdirSync(path.join(storage, 'dev_1')).sort()).toEqual(['rec_1.jpg', 'rec_1.mp4']); // no temporaries left
      const { stdout } = await run('ffprobe', [
        '-v',
        'error',
        '-show_entries',
        'stream=codec_name,duration',
        '-of',
        'json',
        file,
      ]);
      const probed = JSON.parse(stdout) as { streams: Array<{ codec_name: string; duration: string }> };
      expect(probed.streams.map((s) => s.codec_name)).toEqual(['h264', 'aac']);
      // The video track's own length (with B-frames the container adds their delay on top).
      expect(Number(probed.streams[0]!.duration)).toBeGreaterThan(2.3);
      expect(Number(probed.streams[0]!.duration)).toBeLessThan(2.7);
      const bytes = readFileSync(file);
      expect(bytes.indexOf('moov')).toBeLessThan(bytes.indexOf('mdat')); // +faststart
      expect(written.sizeBytes).toBe(bytes.length);
      const decoded = await run('ffmpeg', ['-v', 'error', '-i', file, '-f', 'null', '-']);
      expect(decoded.stderr).toBe('');
    },
  );

  it('fails cleanly, leaving nothing behind, when a segment is missing', async () => {
    const storage = path.join(dir, 'storage-missing');
    await expect(
      writeClip({
        ffmpegPath: 'ffmpeg',
        scratchDir: path.join(dir, 'aac'),
        segments: [{ path: path.join(dir, 'aac', 'nope.mp4'), durationS: 1 }],
        durationS: 1,
        audio: 'none',
        storageDir: storage,
        fileName: 'dev_1/rec_2.mp4',
      }),
    ).rejects.toThrow(/ffmpeg exited with/);
    expect(readdirSync(path.join(storage, 'dev_1'))).toEqual([]);
    expect(readdirSync(path.join(dir, 'aac')).filter((f) => f.endsWith('.ffconcat'))).toEqual([]);
  });
});
