import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import type { Logger } from '@booblik/log';
import { Broker } from '../broker.js';
import type { BrokerConfig } from '../config/keys.js';
import { loadConfig } from '../config/load.js';
import type { BrokerTime } from '../time.js';

export interface TestBroker {
  broker: Broker;
  host: string;
  port: number;
  dataDir: string;
  /** Every line the broker logged. */
  lines: string[];
}

/**
 * An in-process broker on a free port with a fresh data directory, stopped and removed when the test
 * ends. Settings are the real defaults except what `overrides` says (topics default to t:3).
 */
export async function startBroker(
  t: TestContext,
  overrides: Partial<BrokerConfig> = {},
  time?: BrokerTime,
): Promise<TestBroker> {
  const dataDir = overrides.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'booblik-broker-'));
  const lines: string[] = [];
  const logger: Logger = {
    info: (m) => lines.push(`INFO ${m}`),
    warn: (m) => lines.push(`WARN ${m}`),
    error: (m) => lines.push(`ERROR ${m}`),
  };
  const { config } = loadConfig({ argv: [], env: {} });
  const broker = await Broker.start(
    {
      ...config,
      port: 0,
      httpPort: -1,
      metricsIntervalMs: 0,
      topics: [{ name: 't', partitions: 3 }],
      ...overrides,
      dataDir,
    },
    { logger, ...(time ? { time } : {}) },
  );
  t.after(async () => {
    await broker.close();
    if (overrides.dataDir === undefined) fs.rmSync(dataDir, { recursive: true, force: true });
  });
  return { broker, host: broker.address.address, port: broker.address.port, dataDir, lines };
}
