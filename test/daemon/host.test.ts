import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { reservePort } from '../../src/daemon/host.js';

function listenOn(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve, reject) =>
    server.once('error', reject).listen(port, '127.0.0.1', () => resolve(server)),
  );
}
const close = (server: Server) => new Promise((resolve) => server.close(resolve));

describe('reservePort', () => {
  it('holds the free port it found until released, so nobody else can bind it meanwhile', async () => {
    const reservation = await reservePort('127.0.0.1', 0);
    expect(reservation.port).toBeGreaterThan(0);
    await expect(listenOn(reservation.port)).rejects.toMatchObject({ code: 'EADDRINUSE' });
    await reservation.release();
    await reservation.release(); // twice (the start's cleanup after the API took it) is harmless
    const api = await listenOn(reservation.port);
    await close(api);
  });

  it('takes a configured port as it is, holding nothing', async () => {
    const reservation = await reservePort('127.0.0.1', 8443);
    expect(reservation.port).toBe(8443);
    await expect(reservation.release()).resolves.toBeUndefined();
  });
});
