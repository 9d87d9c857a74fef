import type { Server } from 'node:net';
import { ListenError } from './errors.js';

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
