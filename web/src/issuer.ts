// RFC 9207: the authorization response names its issuer (`iss`), so a sign-in answer made by
// another authorization server (a mix-up, or a link crafted elsewhere) is refused before its code
// is used. Pure: the session fetches the metadata and calls this with it.

/** What the check needs of the authorization server's metadata (RFC 8414). */
export interface IssuerMetadata {
  issuer: string;
  authorization_response_iss_parameter_supported?: boolean;
}

/** Narrows GET /.well-known/oauth-authorization-server's body; null when it is not metadata. */
export function readIssuerMetadata(body: unknown): IssuerMetadata | null {
  if (typeof body !== 'object' || body === null) return null;
  const { issuer, authorization_response_iss_parameter_supported: supported } = body as Record<string, unknown>;
  if (typeof issuer !== 'string' || issuer === '') return null;
  if (supported !== undefined && typeof supported !== 'boolean') return null;
  return supported === undefined ? { issuer } : { issuer, authorization_response_iss_parameter_supported: supported };
}

/**
 * Why the answer's `iss` is refused, as a sentence for the user; null when it is accepted.
 * An `iss` present must equal the issuer exactly (RFC 9207 §2.4: simple string comparison); one
 * missing is refused only when the server says it always sends one.
 */
export function issuerProblem(iss: string | null, metadata: IssuerMetadata): string | null {
  if (iss === null) {
    return metadata.authorization_response_iss_parameter_supported === true
      ? 'The sign-in answer did not say which server made it, and this gateway always does: it was refused. Sign in again.'
      : null;
  }
  if (iss !== metadata.issuer)
    return `The sign-in answer came from another server (${iss}), not this gateway (${metadata.issuer}): it was refused. Sign in again.`;
  return null;
}
