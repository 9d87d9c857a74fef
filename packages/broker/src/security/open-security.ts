/** Builds the security service from the configuration: refuses what cannot be used, at start. */
import type { Logger } from '@booblik/log';
import { TokenKeysError } from '@booblik/protocol';
import type { BrokerConfig } from '../config/keys.js';
import { ConfigError } from '../errors.js';
import type { BrokerMetrics } from '../metrics.js';
import type { BrokerTime } from '../time.js';
import { FailureLimiter } from './failure-limiter.js';
import { SecurityService } from './security-service.js';
import { TokenVerifier } from './token-verifier.js';
import { FileUserStore, type UserStore } from './user-store.js';

/** Reads the token keys file, if one is set; a missing or bad file stops the start with its reason. */
export async function openTokenVerifier(
  config: BrokerConfig,
  logger: Logger,
  time: BrokerTime,
): Promise<TokenVerifier | null> {
  if (config.authTokenKeysFile === '') return null;
  try {
    return await TokenVerifier.open(config.authTokenKeysFile, logger, time.clock, time.wallNowMs);
  } catch (error) {
    if (error instanceof TokenKeysError)
      throw new ConfigError(`booblik.auth.token.keys.file: ${error.message}`);
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(
      `booblik.auth.token.keys.file: ${config.authTokenKeysFile} cannot be read (${code})`,
    );
  }
}

export function createSecurity(
  config: BrokerConfig,
  logger: Logger,
  metrics: BrokerMetrics,
  tokens: TokenVerifier | null,
  time: BrokerTime,
  /** The cluster's store once this broker has joined one; the data directory's until then and on one node. */
  clusterUsers: () => UserStore | undefined,
): SecurityService {
  if (config.auth === 'required' && config.clusterEtcd.length > 0 && tokens === null) {
    // Brokers of a cluster proxy and replicate to each other, each proving it is one of them with
    // a token signed by the cluster's keys: without keys they could not, and auth would refuse them.
    throw new ConfigError(
      'booblik.auth=required in a cluster needs booblik.auth.token.keys.file (the same keys on every broker): brokers authenticate to each other with tokens',
    );
  }
  const fileUsers = new FileUserStore(config.dataDir);
  if (config.clusterEtcd.length === 0) fileUsers.load();
  const security = new SecurityService(
    {
      mode: config.auth,
      users: () => clusterUsers() ?? fileUsers,
      tokens,
      superusers: new Set(config.authSuperusers),
      logger,
      metrics,
      clock: time.clock,
      wallNowMs: time.wallNowMs,
    },
    new FailureLimiter(time.clock),
  );
  return security;
}
