/**
 * The seam through which code reads time and sets timers (the client's linger windows, request deadlines
 * and reconnect pauses; the broker's and the log's timers), so tests drive them with a manual clock
 * instead of sleeping.
 */
export interface Clock {
  /** Milliseconds on a monotonic scale; only differences mean anything. */
  now(): number;
  setTimeout(callback: () => void, delayMs: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** Opaque to callers: whatever the clock needs to cancel a timer. */
export type TimerHandle = unknown;

export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Lets a timer not keep the process alive by itself (a no-op for clocks whose timers are not Node's).
 * For deadlines of requests in flight: their socket already keeps the process alive while they wait.
 */
export function unrefTimer(handle: TimerHandle): void {
  (handle as { unref?: () => void } | undefined)?.unref?.();
}

/** Resolves after `delayMs` on `clock`; rejects with the signal's reason if it fires first. */
export function delay(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
