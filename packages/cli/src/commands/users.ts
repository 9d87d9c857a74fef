/**
 * booblik users add|list|remove: the SCRAM users of a broker (USERS). A new password is read from
 * stdin, never from argv; it is salted and hashed by the client, and only the keys are sent.
 */
import {
  type Connection,
  DEFAULT_SCRAM_ITERATIONS,
  SCRAM_ITERATIONS_MAX,
  type UserListing,
} from '@booblik/client';
import { type Args, brokerAddresses, integer, oneOf, parse, positionals } from '../args.js';
import { connectFirst } from '../connect.js';
import { ExitCode } from '../constants.js';
import { authOption } from '../credentials.js';
import { UsageError } from '../errors.js';
import { helpFor } from '../help.js';
import { type Io, Output } from '../io.js';
import { formatTable } from '../table.js';

/** A password line longer than this is not a typed password: a wrong file piped in. */
const PASSWORD_BYTES_MAX = 1024;

export async function usersCommand(args: string[], io: Io): Promise<number> {
  const parsed = parse(args, {
    'password-stdin': { type: 'boolean' },
    iterations: { type: 'string' },
    format: { type: 'string' },
  });
  const out = new Output(io.stdout);
  if (parsed.flag('help')) {
    await out.write(helpFor('users'));
    return ExitCode.OK;
  }
  const [sub, ...rest] = parsed.positionals;
  if (sub === 'list') {
    positionals(rest, []);
    const format = oneOf('--format', parsed.string('format') ?? 'table', ['table', 'json'] as const);
    const users = await withConnection(parsed, io, (c) => c.listUsers());
    await out.write(format === 'json' ? `${JSON.stringify(users)}\n` : table(users));
    return ExitCode.OK;
  }
  if (sub === 'add') {
    const [name] = positionals(rest, ['name']) as [string];
    if (!parsed.flag('password-stdin'))
      throw new UsageError(
        'users add: give the password on stdin with --password-stdin (never on the command line)',
      );
    const text = parsed.string('iterations');
    const iterations =
      text === undefined
        ? undefined
        : integer('--iterations', text, DEFAULT_SCRAM_ITERATIONS, SCRAM_ITERATIONS_MAX);
    const password = await readPasswordLine(io.stdin);
    const users = await withConnection(parsed, io, (c) =>
      c.upsertUser(name, password, iterations === undefined ? {} : { iterations }),
    );
    const added = users.find((u) => u.name === name);
    await out.write(
      `user ${name}: credentials set (${added?.mechanism ?? 'SCRAM-SHA-256'}, ${added?.iterations ?? '?'} iterations)\n`,
    );
    return ExitCode.OK;
  }
  if (sub === 'remove') {
    const [name] = positionals(rest, ['name']) as [string];
    const users = await withConnection(parsed, io, (c) => c.removeUser(name));
    await out.write(`user ${name}: removed (${users.length} left)\n`);
    return ExitCode.OK;
  }
  throw new UsageError(
    `users: expected add, list or remove, got ${sub === undefined ? 'nothing' : `"${sub}"`}`,
  );
}

async function withConnection<T>(parsed: Args, io: Io, work: (c: Connection) => Promise<T>): Promise<T> {
  const connection = await connectFirst(brokerAddresses(parsed.string('broker'), io.env), {
    signal: io.signal,
    ...authOption(parsed, io.env),
  });
  try {
    return await work(connection);
  } finally {
    connection.destroy();
  }
}

function table(users: readonly UserListing[]): string {
  if (users.length === 0) return 'no users\n';
  return formatTable([
    ['NAME', 'MECHANISM', 'ITERATIONS'],
    ...users.map((u) => [u.name, u.mechanism, String(u.iterations)]),
  ]);
}

/** The first line of stdin, without its line end; stops reading there. */
async function readPasswordLine(stdin: AsyncIterable<Buffer | string>): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += chunk.toString();
    if (/[\r\n]/.test(text) || Buffer.byteLength(text) > PASSWORD_BYTES_MAX) break;
  }
  const line = text.split(/\r?\n/, 1)[0]!;
  if (Buffer.byteLength(line) > PASSWORD_BYTES_MAX)
    throw new UsageError(`--password-stdin: the first line is over ${PASSWORD_BYTES_MAX} bytes`);
  if (line === '') throw new UsageError('--password-stdin: stdin has no password (its first line is empty)');
  return line;
}
