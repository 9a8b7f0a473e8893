export { parseScope, hasScope } from './scope-claim.js';
export { parseBearer, type BearerInput, type BearerResult } from './bearer.js';
export { JwksStore, jwksCacheFile, type JwksStoreOptions } from './jwks-store.js';
export { LocalIssuer, type LocalIssuerOptions, type IssueOptions } from './local-issuer.js';
export { TokenVerifier, MAX_TOKEN_LENGTH, type VerifierOptions, type VerifiedToken } from './verifier.js';
