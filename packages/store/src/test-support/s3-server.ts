import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { reservePorts } from '@booblik/testkit';

// The SDK warns once per process that its releases from 2027 on need Node 22; the tests know.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

const repoRoot = new URL('../../../../', import.meta.url).pathname;
const installer = path.join(repoRoot, 'scripts', 'install-versitygw.mjs');
const cachedBinary = path.join(repoRoot, '.cache', 'bin', 'versitygw');

/** Set to `off` on a machine without Go or the module proxy: the S3 tests are then skipped, saying so. */
export const S3_TESTS_ENV = 'BOOBLIK_TEST_S3';
/** A first build fetches and compiles about 80 modules: ~7 min measured on a busy 2-core machine. */
const INSTALL_TIMEOUT_MS = 20 * 60_000;
/** The gateway answers within ~100 ms of starting; generous for a loaded machine. */
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;

/** The test credentials the gateway is started with (its root account). */
export const TEST_CREDENTIALS = { accessKeyId: 'booblik-test', secretAccessKey: 'booblik-test-secret' };
export const TEST_REGION = 'us-east-1';

/** Why the S3 tests are skipped, or null when they must run (and fail if the server cannot start). */
export function s3TestsSkipped(): string | null {
  return process.env[S3_TESTS_ENV] === 'off'
    ? `${S3_TESTS_ENV}=off: no S3-compatible server on this machine`
    : null;
}

let installed: Promise<string> | undefined;

/** The gateway's binary, built once (scripts/install-versitygw.mjs) if it is not cached yet. */
export function versitygwBinary(): Promise<string> {
  installed ??= new Promise<string>((resolve, reject) => {
    if (fs.existsSync(cachedBinary)) return resolve(cachedBinary);
    const child = spawn(process.execPath, [installer], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), INSTALL_TIMEOUT_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0 && fs.existsSync(cachedBinary)) return resolve(cachedBinary);
      reject(
        new Error(
          `building the S3 test server failed (${signal ?? `exit ${code}`}; ${S3_TESTS_ENV}=off skips the S3 tests):\n${output}`,
        ),
      );
    });
  });
  return installed;
}

/** Resolves once a TCP connect to the port succeeds; rejects if `exited` settles first or time runs out. */
async function waitUntilListening(port: number, exited: Promise<string>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let failure: string | undefined;
  void exited.then((why) => {
    failure = why;
  });
  while (failure === undefined) {
    const connected = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (connected) return;
    if (performance.now() > deadline)
      throw new Error(`the S3 test server did not listen on ${port} in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the S3 test server exited before listening: ${failure}`);
}

/**
 * Versity's S3 gateway on a free loopback port, serving a temporary directory (posix backend),
 * with one bucket made. `stop()` ends the process (the data stays); `start()` brings it back on the
 * same port and directory. `close()` stops it and removes the directory.
 */
export class S3TestServer {
  private process: ChildProcess | undefined;
  private exited: Promise<string> = Promise.resolve('not started');
  private readonly killOnExit = () => this.process?.kill('SIGKILL');

  private constructor(
    private readonly binary: string,
    readonly dataDir: string,
    readonly port: number,
    readonly bucket: string,
  ) {}

  static async start(bucket = 'booblik-test'): Promise<S3TestServer> {
    const binary = await versitygwBinary();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-s3-'));
    fs.mkdirSync(path.join(dataDir, 'root'));
    // Taken and let go at once: the gateway binds it, again after each restart.
    const [reserved] = await reservePorts(1);
    await reserved!.release();
    const server = new S3TestServer(binary, dataDir, reserved!.port, bucket);
    try {
      await server.start();
      const client = server.client();
      await client.send(new CreateBucketCommand({ Bucket: bucket }));
      client.destroy();
    } catch (error) {
      await server.close();
      throw error;
    }
    return server;
  }

  /** The gateway's process id while it runs (to read its CPU time from /proc). */
  get pid(): number | undefined {
    return this.process?.pid;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The store URL of `prefix` in the bucket (through another endpoint, such as a fault proxy, if given). */
  url(prefix: string, endpoint = this.endpoint): string {
    return `s3://${this.bucket}/${prefix}?endpoint=${encodeURIComponent(endpoint)}&region=${TEST_REGION}&forcePathStyle=true`;
  }

  /** What a broker process needs in its environment to reach this server with the standard AWS sources. */
  get env(): Record<string, string> {
    return {
      AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
      AWS_REGION: TEST_REGION,
      AWS_EC2_METADATA_DISABLED: 'true',
    };
  }

  /** An SDK client for this server, for a test that looks behind the store. */
  client(): S3Client {
    return new S3Client({
      endpoint: this.endpoint,
      region: TEST_REGION,
      forcePathStyle: true,
      credentials: TEST_CREDENTIALS,
    });
  }

  /** Starts the gateway (again) and resolves once it accepts connections. */
  async start(): Promise<void> {
    if (this.process !== undefined) throw new Error('the S3 test server is running already');
    const child = spawn(
      this.binary,
      [
        '--access',
        TEST_CREDENTIALS.accessKeyId,
        '--secret',
        TEST_CREDENTIALS.secretAccessKey,
        '--region',
        TEST_REGION,
        '--port',
        `127.0.0.1:${this.port}`,
        '--quiet',
        'posix',
        // Object metadata in user xattrs, beside the data. Not --sidecar: its metadata files are
        // updated apart from the data, and a GET racing a PUT then got one version's checksum with
        // the other's bytes (the SDK's checksum check refused ~20% of such reads).
        path.join(this.dataDir, 'root'),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const keep = (d: Buffer) => {
      output = (output + d).slice(-4000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    this.process = child;
    this.exited = new Promise((resolve) => {
      child.on('error', (error) => resolve(String(error)));
      child.on('exit', (code, signal) => resolve(`${signal ?? `exit ${code}`}\n${output}`));
    });
    process.on('exit', this.killOnExit);
    try {
      await waitUntilListening(this.port, this.exited, START_TIMEOUT_MS);
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  /** A crash: SIGKILL to the gateway's pid, resolved once it has exited. `start()` brings it back. */
  kill(): Promise<void> {
    return this.stop('SIGKILL');
  }

  /** Ends the gateway by its pid (SIGTERM, then SIGKILL if it lingers) and waits for it to exit. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.process;
    if (child === undefined) return;
    this.process = undefined;
    process.off('exit', this.killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await this.exited;
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.stop();
    fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/**
 * One gateway for the tests of the `describe` this is called in: started before them, closed after.
 * If it cannot start (no Go, no module proxy, a build error), every test that asks for it fails
 * with that reason, rather than being counted as cancelled.
 */
export function s3ServerForSuite(): () => S3TestServer {
  let server: S3TestServer | undefined;
  let failure: unknown;
  before(async () => {
    try {
      server = await S3TestServer.start();
    } catch (error) {
      failure = error;
    }
  });
  after(() => server?.close());
  return () => {
    if (server === undefined) throw failure ?? new Error('the S3 test server was asked for outside a test');
    return server;
  };
}
