// Server-sent events as text/event-stream frames them; pure, so tests run it without a browser.

/** One SSE frame's fields (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export interface SseFrame {
  event: string;
  data: string;
  id: string | null;
}

/** Splits a growing text buffer into complete frames; returns them and what is left over. */
export function parseSse(buffer: string): { frames: SseFrame[]; rest: string } {
  const frames: SseFrame[] = [];
  const normalized = buffer.replace(/\r\n?/g, '\n');
  const blocks = normalized.split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let event = 'message';
    let id: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line === '' || line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
      else if (field === 'id') id = value;
    }
    if (data.length > 0) frames.push({ event, data: data.join('\n'), id });
  }
  return { frames, rest };
}
