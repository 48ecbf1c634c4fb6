import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { printError } from './output';
import { CommandFailedError } from './commands/command-failed.error';

export interface PasswordOptions {
  password?: string;
  passwordStdin?: boolean;
}

/**
 * The password for `accounts create`: from standard input with --password-stdin (it never shows
 * in the process list), from --password (kept for scripts, discouraged), or asked for without
 * echo on a terminal. Exactly one way; anything else is a usage error (exit 2).
 */
export async function readPassword(
  options: PasswordOptions,
  stdin: NodeJS.ReadStream = process.stdin,
): Promise<string> {
  if (options.passwordStdin && options.password !== undefined) {
    usageError('Give the password one way: --password-stdin or --password, not both.');
  }
  if (options.password !== undefined) return options.password;
  if (options.passwordStdin) return withoutLineEnd(await readAll(stdin));
  if (!stdin.isTTY)
    usageError('Give the password with --password-stdin (or --password), or run on a terminal to be asked.');
  return prompt(stdin);
}

function usageError(message: string): never {
  printError({ error: 'usage', message });
  throw new CommandFailedError(2);
}

async function readAll(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** `echo pw | …` and here-strings end the password with a newline that is not part of it. */
const withoutLineEnd = (text: string): string => text.replace(/\r?\n$/, '');

/** Asks on the terminal (stderr, so stdout stays JSON), echoing nothing of what is typed. */
function prompt(stdin: NodeJS.ReadStream): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const terminal = createInterface({ input: stdin, output, terminal: true });
  return new Promise((resolve) => {
    terminal.question('Password: ', (answer) => {
      terminal.close();
      process.stderr.write('\n');
      resolve(answer);
    });
    muted = true;
  });
}
