import type dgram from 'node:dgram';

// Promise forms of a datagram socket's bind and close, shared by the discovery service and responder.

export function bindSocket(socket: dgram.Socket, port: number, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    socket.once('error', onError);
    socket.bind({ port, address }, () => {
      socket.off('error', onError);
      resolve();
    });
  });
}

export function closeSocket(socket: dgram.Socket): Promise<void> {
  return new Promise((resolve) => {
    try {
      socket.close(() => resolve());
    } catch {
      // Already closed (or never bound): nothing left to release.
      resolve();
    }
  });
}
