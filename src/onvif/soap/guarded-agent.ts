import { Agent, type AgentOptions } from 'node:http';
import type { Duplex } from 'node:stream';
import { CameraFaultError } from '../errors.js';
import { countXmlns, MAX_XMLNS } from '../soap-xml.js';

/**
 * One camera's HTTP guard: counts and inspects what the camera sends on every socket, so an
 * oversized answer, a DTD or a namespace flood is cut off while it arrives, and destroy() aborts
 * everything in flight (a pending long-poll included).
 */
export class GuardedAgent extends Agent {
  constructor(
    opts: AgentOptions,
    private readonly maxBytes: number,
  ) {
    super(opts);
  }

  override createConnection(...args: Parameters<Agent['createConnection']>): Duplex {
    const socket = super.createConnection(...args) as Duplex;
    let total = 0;
    let namespaces = 0;
    let tail = '';
    socket.on('data', (chunk: Buffer) => {
      total += chunk.length;
      // Keep a little of the previous chunk so a marker split across two chunks is still seen once.
      const text = tail + chunk.toString('latin1');
      namespaces += countXmlns(text) - countXmlns(tail);
      tail = text.slice(-16);
      if (total > this.maxBytes)
        socket.destroy(new CameraFaultError(`camera response larger than ${this.maxBytes} bytes`));
      else if (/<!DOCTYPE|<!ENTITY/i.test(text))
        socket.destroy(new CameraFaultError('camera response with a DTD refused'));
      else if (namespaces > MAX_XMLNS)
        socket.destroy(new CameraFaultError('camera response with a namespace flood refused'));
    });
    return socket;
  }
}
