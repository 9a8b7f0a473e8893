import type { LocalOAuth } from '../../../auth/oauth/create.js';

/** The local authorization server and what its pages need (made by auth/oauth/create.ts). */
export type OAuthRoutesOptions = LocalOAuth;

/** What the authorization pages work with: the options, the clock settled. */
export type AuthorizeContext = Omit<OAuthRoutesOptions, 'now'> & { now: () => number };
