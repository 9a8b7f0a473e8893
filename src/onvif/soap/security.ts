import { createHash, randomBytes } from 'node:crypto';

// WS-Security UsernameToken with PasswordDigest (ONVIF Core §5.12):
// Digest = Base64(SHA-1(nonce bytes + Created + password)). Created is dated by the camera's clock
// (ours plus the offset learnt from GetSystemDateAndTime): cameras refuse tokens too far off theirs.

export function passwordDigest(nonceB64: string, created: string, password: string): string {
  return createHash('sha1')
    .update(Buffer.concat([Buffer.from(nonceB64, 'base64'), Buffer.from(created + password, 'utf8')]))
    .digest('base64');
}

export const escapeXmlText = (s: string): string => s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);

export interface Account {
  username: string;
  password: string;
}

/** The wsse:Security header element for one request. */
export function usernameTokenXml(account: Account, cameraNowMs: number, nonce: Buffer = randomBytes(16)): string {
  // Whole seconds: some firmware refuses fractional xsd:dateTime in Created.
  const created = new Date(Math.floor(cameraNowMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
  const nonceB64 = nonce.toString('base64');
  return (
    '<wsse:Security s:mustUnderstand="1" xmlns:wsse="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" ' +
    'xmlns:wsu="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"><wsse:UsernameToken>' +
    `<wsse:Username>${escapeXmlText(account.username)}</wsse:Username>` +
    `<wsse:Password Type="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest">${passwordDigest(nonceB64, created, account.password)}</wsse:Password>` +
    `<wsse:Nonce EncodingType="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary">${nonceB64}</wsse:Nonce>` +
    `<wsu:Created>${created}</wsu:Created></wsse:UsernameToken></wsse:Security>`
  );
}
