/** How long a wait gives up after unless told otherwise: long enough for a loaded 2-core machine. */
export const WAIT_TIMEOUT_MS_DEFAULT = 10_000;

/**
 * Resolves once `condition()` holds, looking again every `everyMs`; fails after `timeoutMs` naming
 * what it waited for; `everyMs` 0 looks once per turn of the event loop. For states only visible by
 * asking (a counter, a metric, a file another process writes): wait on an event wherever there is one.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = WAIT_TIMEOUT_MS_DEFAULT,
  everyMs = 1,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => (everyMs === 0 ? setImmediate(resolve) : setTimeout(resolve, everyMs)));
  }
}

/** `promise`, or a failure naming `what` if it has not settled within `timeoutMs`. */
export function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)),
      timeoutMs,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
