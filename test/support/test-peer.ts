/**
 * A WebRTC test peer made again when it fails on its own side. The test peers run on
 * node-datachannel in the test's own process, and under a loaded machine they now and then fail
 * where the gateway did nothing wrong (a race in the library's offer side; a peer that receives
 * nothing). `make` cleans up what it made before it throws; `retryable` tells such a failure from a
 * real one. At most `attempts` tries, each retry said on the console with the failure.
 */
export async function madeAgain<T>(label: string, make: () => Promise<T>, retryable: (err: Error) => boolean, attempts = 3): Promise<T> {
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
