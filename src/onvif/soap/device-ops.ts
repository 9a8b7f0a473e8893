import type { XmlObject } from '../soap-xml.js';
import { at, intOf, listOf, responseOf, textOf } from './read.js';

// Device management service: request bodies and the readers of their answers.

export const DEVICE_NS = 'http://www.onvif.org/ver10/device/wsdl';
export const MEDIA1_NS = 'http://www.onvif.org/ver10/media/wsdl';
export const MEDIA2_NS = 'http://www.onvif.org/ver20/media/wsdl';
export const EVENTS_NS = 'http://www.onvif.org/ver10/events/wsdl';
export const PTZ_NS = 'http://www.onvif.org/ver20/ptz/wsdl';

export const GET_SYSTEM_DATE_AND_TIME = `<GetSystemDateAndTime xmlns="${DEVICE_NS}"/>`;
export const GET_DEVICE_INFORMATION = `<GetDeviceInformation xmlns="${DEVICE_NS}"/>`;
export const GET_SERVICES = `<GetServices xmlns="${DEVICE_NS}"><IncludeCapability>false</IncludeCapability></GetServices>`;
export const GET_CAPABILITIES = `<GetCapabilities xmlns="${DEVICE_NS}"><Category>All</Category></GetCapabilities>`;
export const SYSTEM_REBOOT = `<SystemReboot xmlns="${DEVICE_NS}"/>`;

export function setSystemDateAndTime(now: Date): string {
  const tt = 'xmlns="http://www.onvif.org/ver10/schema"';
  return (
    `<SetSystemDateAndTime xmlns="${DEVICE_NS}"><DateTimeType>Manual</DateTimeType><DaylightSavings>false</DaylightSavings>` +
    `<TimeZone><TZ ${tt}>UTC0</TZ></TimeZone><UTCDateTime>` +
    `<Date ${tt}><Year>${now.getUTCFullYear()}</Year><Month>${now.getUTCMonth() + 1}</Month><Day>${now.getUTCDate()}</Day></Date>` +
    `<Time ${tt}><Hour>${now.getUTCHours()}</Hour><Minute>${now.getUTCMinutes()}</Minute><Second>${now.getUTCSeconds()}</Second></Time>` +
    `</UTCDateTime></SetSystemDateAndTime>`
  );
}

/** The camera's UTC clock in ms, or null when it gave none we can read (local time only, nonsense). */
export function readSystemDateAndTime(body: XmlObject): number | null {
  const utc = at(responseOf(body, 'GetSystemDateAndTimeResponse'), 'systemDateAndTime', 'UTCDateTime');
  const [y, mo, d] = [intOf(at(utc, 'date', 'year')), intOf(at(utc, 'date', 'month')), intOf(at(utc, 'date', 'day'))];
  const [h, mi, s] = [
    intOf(at(utc, 'time', 'hour')),
    intOf(at(utc, 'time', 'minute')),
    intOf(at(utc, 'time', 'second')),
  ];
  if (y === null || mo === null || d === null || h === null || mi === null || s === null) return null;
  if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return null;
  return Date.UTC(y, mo - 1, d, h, mi, s);
}

export interface DeviceInformation {
  manufacturer: string | null;
  model: string | null;
  firmwareVersion: string | null;
  serialNumber: string | null;
  hardwareId: string | null;
}

export const NO_DEVICE_INFORMATION: DeviceInformation = {
  manufacturer: null,
  model: null,
  firmwareVersion: null,
  serialNumber: null,
  hardwareId: null,
};

export function readDeviceInformation(body: XmlObject): DeviceInformation {
  const r = responseOf(body, 'GetDeviceInformationResponse');
  const field = (name: string) => textOf(at(r, name))?.slice(0, 256) ?? null;
  return {
    manufacturer: field('manufacturer'),
    model: field('model'),
    firmwareVersion: field('firmwareVersion'),
    serialNumber: field('serialNumber'),
    hardwareId: field('hardwareId'),
  };
}

/** Service addresses by what the gateway uses them for (as the camera wrote them: rebase before use). */
export interface ServiceAddresses {
  media1: string | null;
  media2: string | null;
  events: string | null;
  /** Pan, tilt and zoom; null on a fixed camera. */
  ptz: string | null;
}

export function readServices(body: XmlObject): ServiceAddresses {
  const out: ServiceAddresses = { media1: null, media2: null, events: null, ptz: null };
  for (const s of listOf(responseOf(body, 'GetServicesResponse'), 'service')) {
    const ns = textOf(at(s, 'namespace'));
    const xaddr = textOf(at(s, 'XAddr'));
    if (!xaddr) continue;
    if (ns === MEDIA1_NS) out.media1 ??= xaddr;
    else if (ns === MEDIA2_NS) out.media2 ??= xaddr;
    else if (ns === EVENTS_NS) out.events ??= xaddr;
    else if (ns === PTZ_NS) out.ptz ??= xaddr;
  }
  if (!out.media1 && !out.media2 && !out.events)
    throw new Error('GetServices listed none of the media and events services');
  return out;
}

export function readCapabilities(body: XmlObject): ServiceAddresses {
  const caps = at(responseOf(body, 'GetCapabilitiesResponse'), 'capabilities');
  const out = {
    media1: textOf(at(caps, 'media', 'XAddr')),
    media2: null,
    events: textOf(at(caps, 'events', 'XAddr')),
    ptz: textOf(at(caps, 'PTZ', 'XAddr')),
  };
  if (!out.media1 && !out.events) throw new Error('GetCapabilities listed neither media nor events');
  return out;
}
