import { readdirSync, readFileSync } from 'node:fs';

/** The AAC → Opus transcoder ffmpeg processes that the gateway, running in this test process, started. */
export function transcoderPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('libopus'))
        pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
