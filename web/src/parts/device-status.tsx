import type { Device } from '../types.js';

// A camera's status in words, with what to do about it when it is not online.

const ADVICE: Record<Device['status'], { label: string; advice: string | null }> = {
  online: { label: 'Online', advice: null },
  offline: { label: 'Offline', advice: 'Not answering. Check its power and network cable; the gateway keeps trying.' },
  unauthorized: {
    label: 'Wrong password',
    advice:
      "The camera refuses the gateway's username and password. An admin enters the right ones in the app or the gateway's config.",
  },
};

export function DeviceStatus(props: { device: Pick<Device, 'status' | 'address'>; withAdvice?: boolean }) {
  const { label, advice } = ADVICE[props.device.status];
  return (
    <span class="status-wrap">
      <span class={`status status-${props.device.status}`}>{label}</span>
      {props.withAdvice && advice ? (
        <span class="advice">
          {advice}
          {props.device.status === 'unauthorized' && props.device.address ? ` (camera at ${props.device.address})` : ''}
        </span>
      ) : null}
    </span>
  );
}
