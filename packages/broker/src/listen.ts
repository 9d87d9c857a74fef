import type { Server } from 'node:net';

/** A port the broker could not bind: refused at startup, naming the key that sets it. */
export class ListenError extends Error {
  override name = 'ListenError';
  constructor(
    readonly key: string,
    readonly port: number,
    readonly host: string,
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    const why =
      code === 'EADDRINUSE' ? 'is in use' : code === 'EACCES' ? 'is not allowed' : 'cannot be bound';
    super(`${key} ${port}: ${host}:${port} ${why} (${code ?? String(options?.cause)})`, options);
  }
}

/** Binds `server` to host:port; a failure names `key` (`booblik.port`, `booblik.http.port`). */
export function listen(server: Server, port: number, host: string, key: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) =>
      reject(new ListenError(key, port, host, error.code, { cause: error }));
    server.once('error', failed);
    server.listen(port, host, () => {
      server.off('error', failed);
      resolve();
    });
  });
}
