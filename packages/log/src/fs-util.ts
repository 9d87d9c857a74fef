import fs from 'node:fs';

/** fsync a directory, so a segment file created or removed in it survives a crash. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** pwrite until every byte is written (a short write is retried, an error thrown). */
export function pwriteFully(fd: number, buf: Buffer, position: number): void {
  let done = 0;
  while (done < buf.length) {
    done += fs.writeSync(fd, buf, done, buf.length - done, position + done);
  }
}

/** pread up to `length` bytes into buf[0...]; fewer when the file ends first. Resolves with the count. */
export function preadInto(fd: number, buf: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const step = (got: number) => {
      if (got === length) return resolve(got);
      fs.read(fd, buf, got, length - got, position + got, (err, n) => {
        if (err) return reject(err);
        if (n === 0) return resolve(got);
        step(got + n);
      });
    };
    step(0);
  });
}

export function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}
