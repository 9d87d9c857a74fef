/** The `booblik` command without the process around it: argv and an Io in, an exit status out. */
import { InvalidArgumentError } from '@booblik/client';
import { splitVerb } from './args.js';
import { brokersCommand } from './commands/brokers.js';
import { conformanceCommand } from './commands/conformance.js';
import { consumeCommand } from './commands/consume.js';
import { fragmentsCommand } from './commands/fragments.js';
import { healthCommand } from './commands/health.js';
import { metadataCommand } from './commands/metadata.js';
import { partitionsCommand } from './commands/partitions.js';
import { produceCommand } from './commands/produce.js';
import { tokensCommand } from './commands/tokens.js';
import { topicsCommand } from './commands/topics.js';
import { usersCommand } from './commands/users.js';
import { ExitCode } from './constants.js';
import { UsageError } from './errors.js';
import { mainHelp } from './help.js';
import type { Io } from './io.js';
import { cliVersion } from './versions.js';

const commands: Record<string, (args: string[], io: Io) => Promise<number>> = {
  metadata: metadataCommand,
  produce: produceCommand,
  consume: consumeCommand,
  health: healthCommand,
  conformance: conformanceCommand,
  topics: topicsCommand,
  fragments: fragmentsCommand,
  partitions: partitionsCommand,
  brokers: brokersCommand,
  users: usersCommand,
  tokens: tokensCommand,
};

export async function run(argv: string[], io: Io): Promise<number> {
  try {
    const { verb, rest } = splitVerb(argv);
    if (verb === undefined && rest.includes('--version')) {
      io.stdout.write(`booblik ${cliVersion()}\n`);
      return ExitCode.OK;
    }
    if (verb === undefined || verb === 'help') {
      if (verb === 'help' || rest.includes('--help') || rest.includes('-h')) {
        io.stdout.write(mainHelp);
        return ExitCode.OK;
      }
      throw new UsageError('no command given');
    }
    const command = commands[verb];
    if (!command) throw new UsageError(`unknown command "${verb}"`);
    return await command(rest, io);
  } catch (error) {
    return report(error, io);
  }
}

/** One line on stderr saying what went wrong (and why, when the error carries a cause), and the status. */
function report(error: unknown, io: Io): number {
  if (error instanceof UsageError || error instanceof InvalidArgumentError) {
    io.stderr.write(`booblik: ${error.message}\nRun 'booblik --help' for usage.\n`);
    return ExitCode.USAGE;
  }
  if (io.signal.aborted) return ExitCode.OK; // interrupted on purpose: whatever failed, it was asked to stop
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : undefined;
  io.stderr.write(`booblik: ${message}${cause && !message.includes(cause) ? ` (${cause})` : ''}\n`);
  return ExitCode.FAILURE;
}
