import { CandidateError } from './errors.js';

// ICE candidate attributes (RFC 8839 5.1) as browsers write them in an offer or a trickle PATCH.
//
// Browsers hide their host addresses behind mDNS names (`<uuid>.local`, draft-ietf-mmusic-mdns-ice-
// candidates): the gateway never resolves those (no multicast queries from the box, no wait); the
// peer's address is learnt from its connectivity checks on the wire (a peer-reflexive candidate).

export type CandidateType = 'host' | 'srflx' | 'prflx' | 'relay';

export interface IceCandidate {
  readonly foundation: string;
  readonly component: number;
  /** Lower-cased: 'udp' or 'tcp'. */
  readonly transport: string;
  readonly priority: number;
  /** An IPv4 or IPv6 literal, or a host name (mDNS `.local` in practice). */
  readonly address: string;
  readonly port: number;
  readonly type: CandidateType;
  /** The address is an mDNS name: only a connectivity check from the peer tells where it is. */
  readonly mdns: boolean;
  readonly relatedAddress: string | null;
  readonly relatedPort: number | null;
  /** RFC 6544 (`tcptype active|passive|so`), null for UDP. */
  readonly tcpType: string | null;
}

const CANDIDATE_TYPES: readonly string[] = ['host', 'srflx', 'prflx', 'relay'];
// RFC 8839: foundation = 1*32 ice-char; ice-char = ALPHA / DIGIT / "+" / "/".
const FOUNDATION = /^[A-Za-z0-9+/]{1,32}$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
// Loose on purpose: what matters is that it has no blanks and cannot be taken for a name.
const IPV6 = /^[0-9A-Fa-f:.]{2,45}(%[A-Za-z0-9_.-]{1,32})?$/;
// RFC 1123 labels; `.local` names from browsers are UUIDs.
const HOST_NAME =
  /^(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/** Reads the value of an `a=candidate:` attribute (without `candidate:`), or throws CandidateError. */
export function parseCandidate(value: string): IceCandidate {
  const parts = value.trim().split(/\s+/);
  if (parts.length < 8) throw new CandidateError('a candidate has at least 8 fields');
  const [
    foundation = '',
    componentField = '',
    transportField = '',
    priorityField = '',
    address = '',
    portField = '',
    typ = '',
    typeField = '',
  ] = parts;
  if (!FOUNDATION.test(foundation))
    throw new CandidateError(`bad foundation ${JSON.stringify(foundation.slice(0, 40))}`);
  const component = boundedInt(componentField, 1, 256, 'component');
  const transport = transportField.toLowerCase();
  if (transport !== 'udp' && transport !== 'tcp')
    throw new CandidateError(`unsupported transport ${JSON.stringify(transportField.slice(0, 20))}`);
  const priority = boundedInt(priorityField, 1, 0xffffffff, 'priority');
  const kind = addressKind(address);
  if (kind === null) throw new CandidateError(`bad connection address ${JSON.stringify(address.slice(0, 60))}`);
  const port = boundedInt(portField, 0, 65535, 'port');
  if (typ !== 'typ') throw new CandidateError('missing "typ"');
  if (!CANDIDATE_TYPES.includes(typeField))
    throw new CandidateError(`unknown candidate type ${JSON.stringify(typeField.slice(0, 20))}`);

  let relatedAddress: string | null = null;
  let relatedPort: number | null = null;
  let tcpType: string | null = null;
  // Extensions come as name/value pairs; unknown ones (generation, ufrag, network-id, …) are ignored.
  for (let i = 8; i + 1 < parts.length; i += 2) {
    const name = parts[i] ?? '';
    const val = parts[i + 1] ?? '';
    if (name === 'raddr') {
      if (addressKind(val) === null) throw new CandidateError('bad raddr');
      relatedAddress = val;
    } else if (name === 'rport') {
      relatedPort = boundedInt(val, 0, 65535, 'rport');
    } else if (name === 'tcptype') {
      tcpType = val;
    }
  }
  if ((parts.length - 8) % 2 !== 0) throw new CandidateError('an extension name without its value');
  return {
    foundation,
    component,
    transport,
    priority,
    address,
    port,
    type: typeField as CandidateType,
    mdns: kind === 'name' && /\.local\.?$/i.test(address),
    relatedAddress,
    relatedPort,
    tcpType,
  };
}

function addressKind(address: string): 'ip' | 'name' | null {
  if (IPV4.test(address)) return 'ip';
  if (address.includes(':')) return IPV6.test(address) ? 'ip' : null;
  // A dotted all-digit string that is not a valid IPv4 literal is a typo, not a name.
  if (/^[\d.]+$/.test(address)) return null;
  return HOST_NAME.test(address) ? 'name' : null;
}

function boundedInt(field: string, min: number, max: number, what: string): number {
  if (!/^\d{1,10}$/.test(field)) throw new CandidateError(`${what} is not a number`);
  const n = Number(field);
  if (n < min || n > max) throw new CandidateError(`${what} ${n} out of range ${min}..${max}`);
  return n;
}
