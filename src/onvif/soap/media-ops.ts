import type { XmlObject } from '../soap-xml.js';
import { MEDIA1_NS, MEDIA2_NS } from './device-ops.js';
import { at, attrOf, intOf, listOf, responseOf, textOf } from './read.js';
import { escapeXmlText } from './security.js';

// Media (ver10) and Media2 (ver20) services: profiles, stream and snapshot URIs.

export type MediaVersion = 'media1' | 'media2';

export interface CameraProfile {
  token: string;
  name: string | null;
  width: number | null;
  height: number | null;
  encoding: string | null;
  /** The profile's PTZ configuration: PTZ operations name a profile that has one. */
  ptz: { configurationToken: string; nodeToken: string | null } | null;
}

/** Cameras list a handful of profiles; more is a broken or hostile answer, cut short. */
const MAX_PROFILES = 32;

export function getProfiles(media: MediaVersion): string {
  return media === 'media2'
    ? `<GetProfiles xmlns="${MEDIA2_NS}"><Type>All</Type></GetProfiles>`
    : `<GetProfiles xmlns="${MEDIA1_NS}"/>`;
}

export function readProfiles(body: XmlObject, media: MediaVersion): CameraProfile[] {
  const out: CameraProfile[] = [];
  for (const p of listOf(responseOf(body, 'GetProfilesResponse'), 'profiles').slice(0, MAX_PROFILES)) {
    const token = attrOf(p, 'token');
    if (!token) continue;
    const enc = media === 'media2' ? at(p, 'configurations', 'videoEncoder') : at(p, 'videoEncoderConfiguration');
    const ptz = media === 'media2' ? at(p, 'configurations', 'PTZ') : at(p, 'PTZConfiguration');
    const ptzToken = attrOf(ptz, 'token');
    out.push({
      token: token.slice(0, 64),
      name: textOf(at(p, 'name'))?.slice(0, 64) ?? null,
      width: intOf(at(enc, 'resolution', 'width')),
      height: intOf(at(enc, 'resolution', 'height')),
      encoding: textOf(at(enc, 'encoding'))?.slice(0, 32) ?? null,
      ptz:
        ptzToken && ptzToken.length <= 64
          ? { configurationToken: ptzToken, nodeToken: textOf(at(ptz, 'nodeToken'))?.slice(0, 64) ?? null }
          : null,
    });
  }
  return out;
}

export function getStreamUri(media: MediaVersion, profileToken: string): string {
  const token = escapeXmlText(profileToken);
  if (media === 'media2')
    return `<GetStreamUri xmlns="${MEDIA2_NS}"><Protocol>RtspUnicast</Protocol><ProfileToken>${token}</ProfileToken></GetStreamUri>`;
  const tt = 'xmlns="http://www.onvif.org/ver10/schema"';
  return `<GetStreamUri xmlns="${MEDIA1_NS}"><StreamSetup><Stream ${tt}>RTP-Unicast</Stream><Transport ${tt}><Protocol>RTSP</Protocol></Transport></StreamSetup><ProfileToken>${token}</ProfileToken></GetStreamUri>`;
}

export function getSnapshotUri(media: MediaVersion, profileToken: string): string {
  return `<GetSnapshotUri xmlns="${media === 'media2' ? MEDIA2_NS : MEDIA1_NS}"><ProfileToken>${escapeXmlText(profileToken)}</ProfileToken></GetSnapshotUri>`;
}

/** The URI of a GetStreamUri/GetSnapshotUri answer (Media2: Uri; Media1: MediaUri/Uri), or null. */
export function readMediaUri(body: XmlObject, operation: 'GetStreamUri' | 'GetSnapshotUri'): string | null {
  const r = responseOf(body, `${operation}Response`);
  const uri = textOf(at(r, 'uri')) ?? textOf(at(r, 'mediaUri', 'uri'));
  return uri && uri.length <= 2048 ? uri : null;
}
