// A process that dies the way a power cut or SIGKILL would kill a put: after the temporary file is
// written and fsynced, just before it is renamed (or linked) into place.
//   node crash-put-child.js ROOT KEY SIZE [ifAbsent]
import fs from 'node:fs';
import { FileStore } from '../file-store.js';

const [root, key, size, mode] = process.argv.slice(2);
const die = () => process.kill(process.pid, 'SIGKILL') as never;
fs.promises.rename = die;
fs.promises.link = die;
await new FileStore(root!).put(key!, Buffer.alloc(Number(size), 0x5a), { ifAbsent: mode === 'ifAbsent' });
console.log('put finished: the crash did not happen');
