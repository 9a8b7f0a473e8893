// The RTSP protocol layer: messages, interleaved framing and the headers the relay reads and
// writes. Pure functions over bytes and strings; the socket code lives elsewhere. What they throw
// on bad input, RtspParseError, is in errors.ts.

export {
  RtspHeaders,
  RtspStreamReader,
  formatInterleaved,
  formatRequest,
  formatResponse,
  reasonPhrase,
  type ReadItem,
  type RtspHeadersInit,
  type RtspRequest,
  type RtspResponse,
  type RtspStreamReaderOptions,
} from './message.js';
export {
  formatTransport,
  formatTransportSpec,
  parseTransport,
  type LowerTransport,
  type RtpProfile,
  type TransportProtocol,
  type TransportSpec,
} from './headers/transport.js';
export { formatSession, parseSession, type SessionHeader } from './headers/session.js';
export {
  formatRange,
  parseRange,
  type NptRange,
  type NptTime,
  type OpaqueRange,
  type RangeHeader,
} from './headers/range.js';
export { formatRtpInfo, parseRtpInfo, type RtpInfoEntry } from './headers/rtp-info.js';
export {
  chooseChallenge,
  formatChallenge,
  parseChallenges,
  type BasicChallenge,
  type Challenge,
  type DigestChallenge,
} from './headers/www-authenticate.js';
export {
  answerChallenge,
  formatAuthorization,
  parseAuthorization,
  type Authorization,
  type BasicCredentials,
  type ChallengeAnswer,
  type DigestCredentials,
} from './headers/authorization.js';
export { digestResponse, formatNonceCount, type DigestAlgorithm, type DigestInput } from './headers/digest.js';
export { verifyDigest, type DigestFailure, type DigestVerification, type VerifyDigestOptions } from './digest-check.js';
