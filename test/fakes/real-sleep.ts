/** The `Sleep` of the scripted fakes (scripted-language-model.ts, scripted-speech.ts) and its real-time form. */

/** Waits `ms` (a real or a virtual clock); rejects with an AbortError when `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/** Waits `ms` on a real timer; rejects with an AbortError when `signal` aborts (at once if it already has). */
export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new DOMException('The operation was aborted', 'AbortError'));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new DOMException('The operation was aborted', 'AbortError'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
