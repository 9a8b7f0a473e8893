import { readFileSync } from 'node:fs';
import path from 'node:path';

// Segments like the recorder keeps in RAM (fMP4 files that each play alone, one per group of
// pictures, named as its segmenter names them), cut by ffmpeg's segment muxer from a test picture:
// fixtures for the clip writer and recovery, which read any such files. G.711 audio needs the
// QuickTime flavour (`mov`): ffmpeg's mp4 muxer has no tag for it, while the recorder writes the
// same 'ulaw' sample entry into its own files.

/** ffmpeg output options: segments of every keyframe into `dir`, listed in `dir/list.csv`. */
export function segmentMuxerArgs(dir: string, format: 'mp4' | 'mov' = 'mp4'): string[] {
  return [
    '-f',
    'segment',
    '-segment_time',
    '0.5',
    '-segment_format',
    format,
    '-segment_format_options',
    'movflags=+frag_keyframe+empty_moov+default_base_moof',
    '-segment_list',
    path.join(dir, 'list.csv'),
    '-segment_list_type',
    'csv',
    path.join(dir, 'r1-%09d.mp4'),
  ];
}

export interface ListedSegment {
  file: string;
  /** Stream seconds. */
  startS: number;
  endS: number;
}

/** The segments ffmpeg listed in `dir/list.csv` (`name,start,end` a line), in order. */
export function listedSegments(dir: string): ListedSegment[] {
  return readFileSync(path.join(dir, 'list.csv'), 'utf8')
    .split('\n')
    .flatMap((line) => {
      const [file, start, end] = line.trim().split(',');
      return file && start && end ? [{ file, startS: Number(start), endS: Number(end) }] : [];
    });
}
