import { GatewayError } from '../../domain/errors.js';

/**
 * The only error the RTSP parsers throw on bad input. `status` is the RTSP status a server
 * should answer with before closing the connection (a client that hits this on a camera's
 * response has no one to answer; it just drops the connection):
 * 400 malformed, 413 body or frame too large, 414 request line too long,
 * 431 header section too large (unknown to RTSP 1.0 clients, which read it as 400),
 * 461 no transport the server supports, 505 RTSP version not supported.
 */
export class RtspParseError extends GatewayError.of('rtsp_parse') {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
