// The gateway as its own process for bench/support/web-events.mjs: started from the built code
// with a config file, like `edge-gateway start`, and told over IPC to make alerts through its own
// store (the path the recorder takes: insertAlert in one transaction, the event hub told of it).
import { loadConfig } from '../../dist/config/load.js';
import { startGateway } from '../../dist/main.js';

const gw = await startGateway(loadConfig(process.argv[2]));
gw.store.upsertDevice({ id: 'cam-bench', name: 'Bench camera', type: 'camera', status: 'online', model: null, manufacturer: null, firmwareVersion: null, lastSeenAt: Date.now() });

process.on('message', async (m) => {
  if (m.type === 'token') process.send({ type: 'token', token: await gw.localIssuer.issue({ subject: 'bench', scope: m.scope, ttlS: 3600 }) });
  if (m.type === 'alerts') {
    // One alert every intervalMs, as cameras make them (each its own transaction).
    for (let i = 0; i < m.count; i++) {
      gw.store.insertAlert({ id: `bench-${i}`, deviceId: 'cam-bench', type: 'human', message: `Person at Bench camera (${i})`, createdAt: Date.now() });
      await new Promise((r) => setTimeout(r, m.intervalMs));
    }
    process.send({ type: 'alerts-done' });
  }
  if (m.type === 'stop') {
    await gw.stop();
    process.exit(0);
  }
});
process.send({ type: 'started', apiUrl: gw.apiUrl, metricsUrl: gw.metricsUrl, certFile: gw.certFile });
