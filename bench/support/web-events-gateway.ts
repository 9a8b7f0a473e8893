// The gateway as its own process for bench/support/web-events.ts: started from the built code
// with a config file, like `edge-gateway start`, and told over IPC to make alerts through its own
// store (the path the recorder takes: insertAlert in one transaction, the event hub told of it).
import { setTimeout as sleep } from 'node:timers/promises';
import Type from 'typebox';
import { loadConfig } from '../../dist/config/load.js';
import { startGateway } from '../../dist/main.js';
import { narrow } from './json.ts';

/** What bench/support/web-events.ts asks of this process. */
const Request = Type.Union([
  Type.Object({ type: Type.Literal('token'), scope: Type.String() }),
  Type.Object({ type: Type.Literal('alerts'), count: Type.Number(), intervalMs: Type.Number() }),
  Type.Object({ type: Type.Literal('stop') }),
]);

const configFile = process.argv[2];
if (!configFile)
  throw new Error('usage: node web-events-gateway.ts CONFIG_FILE (forked by bench/support/web-events.ts)');
const send = (message: object) => process.send?.(message);
const gw = await startGateway(loadConfig(configFile));
const issuer = gw.localIssuer;
if (!issuer) throw new Error('the gateway has no local issuer');
gw.store.upsertDevice({
  id: 'cam-bench',
  name: 'Bench camera',
  type: 'camera',
  status: 'online',
  model: null,
  manufacturer: null,
  firmwareVersion: null,
  lastSeenAt: Date.now(),
});

process.on('message', (message: unknown) => {
  void (async () => {
    const m = narrow(Request, message, 'a request from the bench');
    if (m.type === 'token')
      send({ type: 'token', token: await issuer.issue({ subject: 'bench', scope: m.scope, ttlS: 3600 }) });
    if (m.type === 'alerts') {
      // One alert every intervalMs, as cameras make them (each its own transaction).
      for (let i = 0; i < m.count; i++) {
        gw.store.insertAlert({
          id: `bench-${i}`,
          deviceId: 'cam-bench',
          type: 'human',
          message: `Person at Bench camera (${i})`,
          createdAt: Date.now(),
        });
        await sleep(m.intervalMs);
      }
      send({ type: 'alerts-done' });
    }
    if (m.type === 'stop') {
      await gw.stop();
      process.exit(0);
    }
  })();
});
send({ type: 'started', apiUrl: gw.apiUrl, metricsUrl: gw.metricsUrl, certFile: gw.certFile });
