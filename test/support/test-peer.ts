import type nodeDataChannel from 'node-datachannel';

/**
 * A WebRTC test peer made again when it fails on its own side. The test peers run on
 * node-datachannel in the test's own process, and under a loaded machine they now and then fail
 * where the gateway did nothing wrong (PeerRaceError below). `make` cleans up what it made before it
 * throws; `retryable` tells such a failure from a real one. At most `attempts` tries, each retry
 * said on the console with the failure.
 */
export async function madeAgain<T>(
  label: string,
  make: () => Promise<T>,
  retryable: (err: Error) => boolean,
  attempts = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await make();
    } catch (caught) {
      const err = caught instanceof Error ? caught : new Error(String(caught));
      if (attempt >= attempts || !retryable(err)) throw err;
      console.warn(`${label}: WebRTC test peer failed on its side (${err.message}); making it again`);
    }
  }
}

/**
 * The test peer lost the race with its own answer. The gateway answers, and its ICE checks and DTLS
 * ClientHello can reach the offering peer before the peer has read the answer from the HTTP
 * response (the peer's JavaScript shares a loaded event loop; libdatachannel's threads do not). The
 * peer then runs the DTLS handshake with no remote fingerprint to check the certificate against,
 * fails it ("DTLS alert: unknown CA", then "certificate verify failed" in libdatachannel's log) and
 * closes; setting the answer then throws "Got a remote candidate without ICE transport", or, when
 * the answer went in first, the peer closes before it connects. Browsers keep the handshake until
 * the fingerprint is known, so real viewers do not have this; the tests make such a peer again.
 */
export class PeerRaceError extends Error {}

export const isPeerRace = (err: Error): boolean => err instanceof PeerRaceError;

/** The peer's offer once its candidates are gathered (the gateway takes no trickled candidates). */
export function gatheredOffer(pc: nodeDataChannel.PeerConnection): Promise<string> {
  return new Promise<string>((resolve) => {
    pc.onGatheringStateChange((state) => {
      if (state === 'complete') resolve(pc.localDescription()?.sdp ?? '');
    });
    pc.setLocalDescription();
  });
}

/**
 * The peer's state changes as they come, in ms since this was called, for a failure's message
 * (it takes the peer's onStateChange, onIceStateChange and onSignalingStateChange).
 */
export function stateHistory(pc: nodeDataChannel.PeerConnection): () => string {
  const t0 = Date.now();
  const seen: string[] = [];
  const note = (what: string) => (state: string) => void seen.push(`${Date.now() - t0} ms ${what} ${state}`);
  pc.onStateChange(note('peer'));
  pc.onIceStateChange(note('ICE'));
  pc.onSignalingStateChange(note('signaling'));
  return () => seen.join(', ');
}

/**
 * Sets the gateway's answer and waits for the peer to connect (DTLS done). When the peer lost the
 * race (PeerRaceError), its session (`end`) and the peer are ended before throwing. A peer still
 * connecting after `waitMs` is returned as it is: the test's own assertions say what is missing.
 */
export async function takeAnswer(
  pc: nodeDataChannel.PeerConnection,
  answer: string,
  end: () => Promise<unknown>,
  history: () => string,
  waitMs = 20_000,
): Promise<void> {
  const lost = async (why: string) => {
    const stood = `peer ${pc.state()}, ICE ${pc.iceState()}, signaling ${pc.signalingState()}; ${history()}`;
    await end();
    pc.close();
    return new PeerRaceError(`${why} (${stood})`);
  };
  try {
    pc.setRemoteDescription(answer, 'answer');
  } catch (err) {
    if (/without ICE transport/.test((err as Error).message)) throw await lost((err as Error).message);
    throw err;
  }
  for (const t0 = Date.now(); Date.now() - t0 < waitMs; await new Promise((r) => setTimeout(r, 10))) {
    const state = pc.state();
    if (state === 'connected') return;
    if (state === 'failed' || state === 'closed') throw await lost('the test peer ended before it connected');
  }
}
