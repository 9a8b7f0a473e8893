import { useState } from 'preact/hooks';
import type { Api } from '../api.js';

// "Export this range": a start and an end (the browser's local time, a minute apart at least, a
// day at most, as the API takes) and a download of that footage as one MP4 through a ticketed
// address, so the browser saves it as it comes without holding it in memory.

const DAY_MS = 86_400_000;

/** `<input type="datetime-local">`'s value for a moment, to the second. */
function localInput(t: number): string {
  const d = new Date(t - new Date(t).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 19);
}

/** The moment of a datetime-local value (the browser's time zone); NaN when it does not parse. */
function fromLocalInput(value: string): number {
  return value ? new Date(value).getTime() : Number.NaN;
}

export function ExportRange(props: { api: Api; deviceId: string; aroundMs: number; onClose: () => void }) {
  const [from, setFrom] = useState(localInput(props.aroundMs - 5 * 60_000));
  const [to, setTo] = useState(localInput(Math.min(Date.now(), props.aroundMs + 5 * 60_000)));
  const [state, setState] = useState<{ busy: boolean; message: string | null }>({ busy: false, message: null });

  const download = async (e: Event) => {
    e.preventDefault();
    const startMs = fromLocalInput(from);
    const endMs = fromLocalInput(to);
    if (Number.isNaN(startMs) || Number.isNaN(endMs)) return setState({ busy: false, message: 'Enter both times.' });
    if (endMs <= startMs) return setState({ busy: false, message: 'The end must be after the start.' });
    if (endMs - startMs > DAY_MS) return setState({ busy: false, message: 'Export at most a day at a time.' });
    setState({ busy: true, message: null });
    try {
      const { url } = await props.api.footageExport(props.deviceId, startMs, endMs);
      const link = document.createElement('a');
      link.href = url;
      link.download = '';
      document.body.append(link);
      link.click();
      link.remove();
      setState({ busy: false, message: 'The download has started.' });
    } catch (err) {
      setState({ busy: false, message: err instanceof Error ? err.message : 'The export failed.' });
    }
  };

  return (
    <form class="export filters" aria-label="Export a range of footage" onSubmit={(e) => void download(e)}>
      <label>
        From
        <input type="datetime-local" step={1} value={from} onChange={(e) => setFrom(e.currentTarget.value)} />
      </label>
      <label>
        To
        <input type="datetime-local" step={1} value={to} onChange={(e) => setTo(e.currentTarget.value)} />
      </label>
      <button type="submit" aria-disabled={state.busy}>
        Download MP4
      </button>
      <button type="button" class="quiet" onClick={props.onClose}>
        Close
      </button>
      <p role="status" class="outcome">
        {state.message}
      </p>
    </form>
  );
}
