import { connect, createServer, type Server, type Socket } from 'node:net';

// A TCP link between a client and a server on loopback that a test can make lose everything and then
// break, as a network does when a Wi-Fi link or a router goes away: bytes sent then are lost, and the
// ends learn of it only when the connection is reset.

export interface LinkCutter {
  /** The port clients connect to (on 127.0.0.1); the link forwards to the target. */
  readonly port: number;
  /** Connections open now. */
  readonly connections: number;
  /** From now on the open connections lose every byte, both ways (they stay open). */
  loseEverything(): void;
  /** Resets the open connections; new ones forward again. */
  cut(): void;
  close(): Promise<void>;
}

export async function startLinkCutter(targetPort: number, targetHost = '127.0.0.1'): Promise<LinkCutter> {
  const open = new Set<{ client: Socket; server: Socket; losing: boolean }>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, targetHost);
    const link = { client, server: upstream, losing: false };
    open.add(link);
    client.on('data', (bytes) => void (link.losing || upstream.write(bytes)));
    upstream.on('data', (bytes) => void (link.losing || client.write(bytes)));
    const end = () => {
      open.delete(link);
      client.destroy();
      upstream.destroy();
    };
    for (const s of [client, upstream]) {
      s.on('error', end);
      s.on('close', end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  const cut = () => {
    for (const link of [...open]) {
      link.client.resetAndDestroy();
      link.server.destroy();
    }
  };
  return {
    port: address.port,
    get connections() {
      return open.size;
    },
    loseEverything() {
      for (const link of open) link.losing = true;
    },
    cut,
    async close() {
      cut();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
