import { bytesText, when } from '../format.js';
import type { CameraFootage, FootageStatus } from '../types.js';

// What a camera's continuous recording keeps, and whether it runs: the owner's answer to "how far
// back can I look, and is it still recording?".

export function FootageKept(props: { status: FootageStatus; camera: CameraFootage | null }) {
  const { status, camera } = props;
  const disk = status.disk.source ?? status.disk.mount_point ?? status.disk.device;
  const free = status.disk.free_bytes === null ? '' : `, ${bytesText(status.disk.free_bytes)} free`;
  const running = status.recording && camera?.recording === true;
  const why = !status.recording ? status.reason : (camera?.reason ?? 'this camera keeps no continuous footage');
  return (
    <p class="footage-kept" data-testid="footage-kept">
      <span class={running ? 'status status-online' : 'status status-offline'}>
        {running
          ? `Recording around the clock (${camera?.profile === 'main' ? 'main' : 'sub'} stream)`
          : 'Not recording'}
      </span>{' '}
      {running ? null : <span>{why}. </span>}
      {camera?.oldest ? (
        <span>
          Kept since {when(camera.oldest)} ({camera.hours_kept.toFixed(1)} h, {bytesText(camera.bytes)}).{' '}
        </span>
      ) : (
        <span>No footage kept yet. </span>
      )}
      <span class="meta">
        Disk {disk}
        {free}.
      </span>
    </p>
  );
}
