import { useEffect, useState } from 'preact/hooks';
import { useApp } from '../app.js';
import { bytesText, gbText, uptimeText, when } from '../format.js';
import { DeviceStatus } from '../parts/device-status.js';
import { DISK_LABELS, HOT_C, LOW_MEMORY_SHARE, systemWarnings, usedShare } from '../system-view.js';
import type { SystemCamera, SystemDisk, SystemStatus } from '../types.js';

// The gateway as its owner checks on it (admins; GET /v1/system): version and uptimes, the
// machine's CPU, memory and temperature, each disk, and each camera's stream as the gateway
// receives it. Asked again every 5 s while the tab is visible, not at all while it is hidden.

const REFRESH_MS = 5_000;

/** The latest answer, asked again every REFRESH_MS while the page is visible; the error of the last ask. */
function useSystemStatus(): { status: SystemStatus | null; error: string | null } {
  const { api, epoch } = useApp();
  const [status, setStatus] = useState<SystemStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let asking = false;
    const load = async () => {
      clearTimeout(timer);
      asking = true;
      try {
        setStatus(await api.system(abort.signal));
        setError(null);
      } catch (err) {
        if (abort.signal.aborted) return;
        setError(err instanceof Error ? err.message : 'The gateway did not answer.');
      } finally {
        asking = false;
      }
      if (!abort.signal.aborted && document.visibilityState === 'visible')
        timer = setTimeout(() => void load(), REFRESH_MS);
    };
    // Hidden: the next ask is dropped; shown again: asked at once (unless an ask is still on its
    // way: its answer sets the next one), then every REFRESH_MS.
    const visibility = () => {
      clearTimeout(timer);
      if (document.visibilityState === 'visible' && !asking) void load();
    };
    document.addEventListener('visibilitychange', visibility);
    void load();
    return () => {
      abort.abort();
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', visibility);
    };
  }, [api, epoch]);
  return { status, error };
}

export function SystemScreen() {
  const { status, error } = useSystemStatus();
  if (status === null)
    return (
      <section>
        <h1>System</h1>
        <p role={error ? 'alert' : 'status'}>{error ?? 'Loading…'}</p>
      </section>
    );
  const warnings = systemWarnings(status);
  return (
    <section class="system-screen">
      <h1>System</h1>
      <p class="meta system-note">Refreshed every {REFRESH_MS / 1000} seconds while this page is shown.</p>
      {error ? (
        <p class="banner warn" role="alert">
          Could not refresh: {error}
        </p>
      ) : null}
      <div role="status" data-testid="system-warnings">
        {warnings.length > 0 ? (
          <ul class="warnings">
            {warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        ) : null}
      </div>
      <div class="system-grid">
        <GatewayPanel status={status} />
        <MachinePanel status={status} />
      </div>
      <section class="panel" aria-labelledby="disks-title">
        <h2 id="disks-title">Storage</h2>
        <ul class="disks">
          {status.storage.map((disk) => (
            <Disk key={disk.name} disk={disk} />
          ))}
        </ul>
      </section>
      <section class="panel" aria-labelledby="streams-title">
        <h2 id="streams-title">Cameras</h2>
        <CameraTable cameras={status.cameras} />
      </section>
    </section>
  );
}

function Fact(props: { label: string; children: preact.ComponentChildren; testId?: string }) {
  return (
    <div class="fact">
      <dt>{props.label}</dt>
      <dd data-testid={props.testId}>{props.children}</dd>
    </div>
  );
}

function GatewayPanel({ status }: { status: SystemStatus }) {
  return (
    <section class="panel" aria-labelledby="gateway-title">
      <h2 id="gateway-title">Gateway</h2>
      <dl class="facts">
        <Fact label="Version" testId="version">
          {status.version}
        </Fact>
        <Fact label="Running for">{uptimeText(status.uptime_s)}</Fact>
        <Fact label="Machine up for">{uptimeText(status.host.uptime_s)}</Fact>
        <Fact label="Gateway process">
          {status.process.cpu_pct === null ? 'Measuring CPU…' : `${status.process.cpu_pct.toFixed(1)} % CPU`},{' '}
          {(status.process.rss_bytes / 1e6).toFixed(0)} MB memory
        </Fact>
      </dl>
    </section>
  );
}

function MachinePanel({ status }: { status: SystemStatus }) {
  const { host } = status;
  const available = host.memory_available_bytes / host.memory_total_bytes;
  const hot = host.temperature_c !== null && host.temperature_c >= HOT_C;
  return (
    <section class="panel" aria-labelledby="machine-title">
      <h2 id="machine-title">Machine</h2>
      <dl class="facts">
        <Fact label="CPU" testId="cpu">
          {host.cpu_pct === null ? 'Measuring…' : `${host.cpu_pct.toFixed(0)} % busy`} ({host.cpu_cores} cores, load{' '}
          {host.load_1m.toFixed(2)})
        </Fact>
        <Fact label="Memory">
          <span class={available < LOW_MEMORY_SHARE ? 'bad' : undefined}>
            {gbText(host.memory_available_bytes)} available of {gbText(host.memory_total_bytes)} (
            {Math.floor(available * 100)} %)
          </span>
        </Fact>
        <Fact label="Temperature" testId="temperature">
          {host.temperature_c === null ? (
            'No sensor'
          ) : (
            <span class={hot ? 'bad' : undefined}>{host.temperature_c.toFixed(1)} °C</span>
          )}
        </Fact>
      </dl>
    </section>
  );
}

const STATE_TEXT: Record<SystemDisk['state'], string> = {
  ok: 'OK',
  low: 'Nearly full',
  read_only: 'Read-only',
  missing: 'Missing',
  failed: 'Failing',
};

function Disk({ disk }: { disk: SystemDisk }) {
  const share = usedShare(disk);
  const used = disk.total_bytes !== null && disk.free_bytes !== null ? disk.total_bytes - disk.free_bytes : null;
  return (
    <li class="disk" data-testid={`disk-${disk.name}`}>
      <div class="disk-head">
        <span class="disk-name">{DISK_LABELS[disk.name]}</span>
        <span class={`disk-state disk-${disk.state}`}>{STATE_TEXT[disk.state]}</span>
      </div>
      <span class="meta disk-path">{disk.path}</span>
      {/* The words beside it say the same: the bar is for the eye. */}
      <div class={`disk-bar disk-bar-${disk.state}`} aria-hidden="true">
        {share === null ? null : <span style={{ width: `${(share * 100).toFixed(1)}%` }} />}
      </div>
      <span class="disk-figures" data-testid="disk-figures">
        {used === null || disk.total_bytes === null || disk.free_bytes === null
          ? 'Size unknown while the disk is missing'
          : `${gbText(used)} used, ${gbText(disk.free_bytes)} free of ${gbText(disk.total_bytes)}`}
      </span>
      {disk.used_by_gateway_bytes === null ? null : (
        <span class="meta">Gateway's files: {bytesText(disk.used_by_gateway_bytes)}</span>
      )}
    </li>
  );
}

/**
 * A table on a wide screen; on a phone each row is drawn as a card (style.css). The roles are the
 * table's own, written out: a table drawn as blocks loses them in some browsers.
 */
function CameraTable({ cameras }: { cameras: SystemCamera[] }) {
  if (cameras.length === 0) return <p class="placeholder-text">No cameras yet.</p>;
  return (
    <table class="stream-table" role="table">
      <thead role="rowgroup">
        <tr role="row">
          {['Camera', 'Status', 'Bitrate', 'Frame rate', 'Viewers', 'Last error'].map((h) => (
            <th key={h} scope="col" role="columnheader">
              {h}
            </th>
          ))}
        </tr>
      </thead>
      <tbody role="rowgroup">
        {cameras.map((c) => (
          <tr key={c.device_id} role="row" data-testid="system-camera">
            <th scope="row" role="rowheader" class="camera-name">
              {c.name}
            </th>
            <td role="cell" data-label="Status">
              <DeviceStatus device={{ status: c.status, address: null }} />
            </td>
            <td role="cell" data-label="Bitrate" data-testid="bitrate">
              {c.bitrate_kbps === null ? 'Not streaming' : `${Math.round(c.bitrate_kbps).toLocaleString()} kbit/s`}
            </td>
            <td role="cell" data-label="Frame rate" data-testid="fps">
              {c.fps === null ? '—' : `${c.fps.toFixed(1)} fps`}
            </td>
            <td role="cell" data-label="Viewers">
              {c.viewers}
            </td>
            <td role="cell" data-label="Last error" class="last-error" data-testid="last-error">
              {/* One element: on a phone the cell is a grid of its label and its value. */}
              <span>
                {c.last_error ?? 'None'}
                {c.last_error !== null && c.last_error_at ? <span class="meta"> ({when(c.last_error_at)})</span> : null}
              </span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
