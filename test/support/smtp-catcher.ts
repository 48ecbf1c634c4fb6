import { AddressInfo } from 'node:net';
import { ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer, SMTPServerDataStream } from 'smtp-server';

export interface SmtpCatcher {
  /** `smtp://127.0.0.1:<port>`, for SMTP_URL. */
  url: string;
  /** Every accepted message, in order of arrival. */
  messages: ParsedMail[];
  /** The first message, received or still to come, that matches; rejects after `timeoutMs`. */
  waitFor(predicate: (message: ParsedMail) => boolean, timeoutMs?: number): Promise<ParsedMail>;
  /** Rejects the next `count` messages with a 451 (transient), so a sender's retries can be tested. */
  failNext(count: number): void;
  /**
   * Keeps the messages that come from now on (waitFor sees them) but never answers their DATA
   * with a 250: the sender cannot know they arrived, as when it dies mid-send.
   */
  holdReplies(): void;
  /** Refuses `address` as a recipient for good (550), as a bouncing mailbox does; false: accepts it again. */
  rejectRecipient(address: string, rejecting?: boolean): void;
  stop(): Promise<void>;
}

/** An SMTP server on loopback (no auth, no TLS) that keeps what it receives, parsed by mailparser. */
export async function startSmtpCatcher(): Promise<SmtpCatcher> {
  const messages: ParsedMail[] = [];
  const waiters = new Set<(message: ParsedMail) => void>();
  let failures = 0;
  let holding = false;
  const rejected = new Set<string>();

  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    // A client's pooled connections must not hold stop() up for smtp-server's default 30 seconds.
    closeTimeout: 100,
    onRcptTo(address, _session, callback) {
      if (rejected.has(address.address.toLowerCase())) {
        callback(Object.assign(new Error('5.1.1 Mailbox unavailable'), { responseCode: 550 }));
      } else {
        callback();
      }
    },
    onData(stream: SMTPServerDataStream, _session, callback) {
      if (failures > 0) {
        failures -= 1;
        // The whole message has to be read before the reply, or the client never gets it.
        stream.on('end', () => callback(Object.assign(new Error('Try again later'), { responseCode: 451 })));
        stream.resume();
        return;
      }
      simpleParser(stream).then(
        (message) => {
          messages.push(message);
          waiters.forEach((notify) => notify(message));
          if (!holding) callback();
        },
        (error: Error) => callback(error),
      );
    },
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.server.address() as AddressInfo;

  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    waitFor(predicate, timeoutMs = 5_000) {
      const received = messages.find(predicate);
      if (received) return Promise.resolve(received);
      return new Promise((resolve, reject) => {
        const settle = (outcome: () => void) => {
          clearTimeout(timer);
          waiters.delete(notify);
          outcome();
        };
        const notify = (message: ParsedMail) => {
          try {
            if (predicate(message)) settle(() => resolve(message));
          } catch (error) {
            settle(() => reject(error instanceof Error ? error : new Error(String(error))));
          }
        };
        const timer = setTimeout(
          () =>
            settle(() =>
              reject(new Error(`No matching e-mail within ${timeoutMs} ms (${messages.length} received)`)),
            ),
          timeoutMs,
        );
        waiters.add(notify);
      });
    },
    failNext(count) {
      failures = count;
    },
    holdReplies() {
      holding = true;
    },
    rejectRecipient(address, rejecting = true) {
      if (rejecting) rejected.add(address.toLowerCase());
      else rejected.delete(address.toLowerCase());
    },
    stop: () => new Promise<void>((resolve) => server.close(resolve)),
  };
}

/** The first recipient's address of a message. */
export const recipientOf = (mail: ParsedMail): string =>
  (Array.isArray(mail.to) ? mail.to[0] : mail.to)?.value[0]?.address ?? '';

/** The token of the password link (reset or invitation) a message carries. */
export function linkTokenIn(mail: ParsedMail): string {
  const match = /reset-password\?token=([A-Za-z0-9_-]+)/.exec(mail.text ?? '');
  if (!match) throw new Error('no password link in the e-mail');
  return match[1];
}
