/** Builds the security service from the configuration: refuses what cannot be used, at start. */
import type { Logger } from '@booblik/log';
import { type Clock, systemClock, TokenKeysError } from '@booblik/protocol';
import type { BrokerConfig } from '../config/keys.js';
import { ConfigError } from '../errors.js';
import type { BrokerMetrics } from '../metrics.js';
import { FailureLimiter } from './failure-limiter.js';
import { SecurityService } from './security-service.js';
import { TokenVerifier } from './token-verifier.js';
import { FileUserStore } from './user-store.js';

/** Time as security reads it; tests drive both. */
export interface SecurityTime {
  clock: Clock;
  /** Unix ms: token expiries are wall-clock times. */
  wallNowMs: () => number;
}

export const systemSecurityTime: SecurityTime = { clock: systemClock, wallNowMs: Date.now };

/** Reads the token keys file, if one is set; a missing or bad file stops the start with its reason. */
export async function openTokenVerifier(
  config: BrokerConfig,
  logger: Logger,
  time: SecurityTime,
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
  time: SecurityTime,
): SecurityService {
  if (config.auth === 'required' && config.clusterEtcd.length > 0) {
    // Brokers of a cluster proxy and replicate to each other; until they authenticate to each
    // other, auth would refuse the cluster's own traffic, so it is refused here instead.
    throw new ConfigError(
      'booblik.auth=required is not supported in a cluster yet (brokers do not authenticate to each other); use it on a single broker',
    );
  }
  const users = new FileUserStore(config.dataDir);
  users.load();
  const security = new SecurityService(
    {
      mode: config.auth,
      users,
      tokens,
      superusers: new Set(config.authSuperusers),
      logger,
      metrics,
      clock: time.clock,
      wallNowMs: time.wallNowMs,
    },
    new FailureLimiter(time.clock),
  );
  security.bootstrap(process.env.BOOBLIK_BOOTSTRAP_USER);
  if (config.auth === 'required' && users.size === 0 && tokens === null) {
    logger.warn(
      'booblik.auth=required with no user and no token keys: nobody can connect; add a user with BOOBLIK_BOOTSTRAP_USER=name:password, or set booblik.auth.token.keys.file',
    );
  }
  return security;
}
