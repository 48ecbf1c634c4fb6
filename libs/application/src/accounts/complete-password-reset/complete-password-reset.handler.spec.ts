import { randomUUID } from 'node:crypto';
import {
  accountDecider,
  accountStreamName,
  InvalidResetTokenError,
  passwordResetStreamName,
  ResetTokenIssued,
  ValidationError,
} from '@chronicle/domain';
import { Clock } from '../../shared/clock';
import { EventSourcedRepository, toNewEvent } from '../../shared/event-sourced-repository';
import { ACCOUNTS_NOW, AccountsWorld, accountsContext, accountsWorld } from '../accounts-world.spec-helper';
import { parseResetToken, resetTokenFor } from '../reset-token';
import { CompletePasswordResetCommand } from './complete-password-reset.command';
import { CompletePasswordResetHandler } from './complete-password-reset.handler';

const MINUTE = 60_000;

describe('CompletePasswordResetHandler', () => {
  let world: AccountsWorld;
  let handler: CompletePasswordResetHandler;

  beforeEach(async () => {
    world = accountsWorld();
    handler = new CompletePasswordResetHandler(world.repository, world.hasher, world.clock);
    await world.openAccount('a-1', 'ada@example.com', 'first secret words');
  });
  afterEach(() => world.close());

  /** A reset request of `accountId` whose token was issued now, for 30 minutes, at `credentialsVersion`. */
  const issued = async (accountId = 'a-1', credentialsVersion = 0): Promise<string> => {
    const requestId = randomUUID();
    const { token, tokenHash } = resetTokenFor(requestId, world.config.tokenSecret);
    const event: ResetTokenIssued = {
      type: 'ResetTokenIssued.v1',
      data: {
        accountId,
        requestId,
        tokenId: requestId,
        tokenHash,
        issuedAt: new Date(ACCOUNTS_NOW).toISOString(),
        expiresAt: new Date(ACCOUNTS_NOW + 30 * MINUTE).toISOString(),
        credentialsVersion,
      },
    };
    await world.store.append(
      passwordResetStreamName(requestId),
      [toNewEvent(event, accountsContext, world.clock.now())],
      'no_stream',
    );
    return token;
  };
  const reset = (token: string, password = 'second secret words', on = handler) =>
    on.execute(new CompletePasswordResetCommand(token, password, accountsContext));
  const passwordHash = async (accountId = 'a-1') =>
    (
      (await world.repository.load(accountDecider, accountStreamName(accountId))).state as {
        passwordHash: string;
      }
    ).passwordHash;

  it('given a token just issued, when used, then sets the password, records the reset and answers the next credentials version', async () => {
    const token = await issued();
    const result = await reset(token);
    expect(result).toEqual({ accountId: 'a-1', credentialsVersion: 1, position: expect.anything() });
    expect(await passwordHash()).toBe('hash:second secret words');
    const [, recorded] = await world.store.readStream(accountStreamName('a-1'));
    expect(recorded).toMatchObject({
      type: 'PasswordReset.v1',
      position: result.position,
      data: { accountId: 'a-1', passwordHash: 'hash:second secret words', credentialsVersion: 1 },
      metadata: { correlationId: 'accounts-spec' },
    });
  });

  it('refuses a token used once already', async () => {
    const token = await issued();
    await reset(token);
    await expect(reset(token, 'third secret words')).rejects.toBeInstanceOf(InvalidResetTokenError);
    expect(await passwordHash()).toBe('hash:second secret words');
  });

  it('refuses a token issued before a change of the credentials', async () => {
    const old = await issued();
    await reset(await issued());
    await expect(reset(old, 'third secret words')).rejects.toBeInstanceOf(InvalidResetTokenError);
  });

  it('refuses a token once its 30 minutes are over, and takes it the instant before', async () => {
    const token = await issued();
    world.clock.time = ACCOUNTS_NOW + 30 * MINUTE;
    await expect(reset(token)).rejects.toBeInstanceOf(InvalidResetTokenError);
    world.clock.time = ACCOUNTS_NOW + 30 * MINUTE - 1;
    await expect(reset(token)).resolves.toMatchObject({ credentialsVersion: 1 });
  });

  it('refuses a token that expires while the new password is hashed: checked again when appending', async () => {
    const token = await issued();
    // Each look at the clock is a minute later: the token's last minute runs out after the first one.
    let time = ACCOUNTS_NOW + 29 * MINUTE;
    const ticking = new (class extends Clock {
      now(): Date {
        const now = new Date(time);
        time += MINUTE;
        return now;
      }
    })();
    const late = new CompletePasswordResetHandler(
      new EventSourcedRepository(world.store, ticking),
      world.hasher,
      ticking,
    );
    await expect(reset(token, 'second secret words', late)).rejects.toBeInstanceOf(InvalidResetTokenError);
    expect(await passwordHash()).toBe('hash:first secret words');
  });

  it.each([
    ['not shaped like a token', 'nonsense'],
    ['of no request', resetTokenFor(randomUUID(), Buffer.alloc(32, 7)).token],
  ])('refuses a token %s', async (_case, token) => {
    await expect(reset(token)).rejects.toBeInstanceOf(InvalidResetTokenError);
  });

  it("refuses a token of this request's id made with another secret", async () => {
    const { requestId } = parseResetToken(await issued())!;
    await expect(reset(resetTokenFor(requestId, Buffer.alloc(32, 8)).token)).rejects.toBeInstanceOf(
      InvalidResetTokenError,
    );
  });

  it('refuses a token of an account closed since', async () => {
    const token = await issued();
    await world.write('a-1', [
      { type: 'AccountClosed.v1', data: { accountId: 'a-1', userId: 'u-a-1', closedAt: 'x' } },
    ]);
    await expect(reset(token)).rejects.toBeInstanceOf(InvalidResetTokenError);
  });

  it('given a password the policy refuses, refuses it and leaves the token usable for a better one', async () => {
    const token = await issued();
    await expect(reset(token, 'ada@example.com')).rejects.toBeInstanceOf(ValidationError);
    expect(await passwordHash()).toBe('hash:first secret words');
    await expect(reset(token)).resolves.toMatchObject({ accountId: 'a-1' });
  });

  it('given a token of a used one, refuses it before judging the new password', async () => {
    const token = await issued();
    await reset(token);
    await expect(reset(token, 'ada@example.com')).rejects.toBeInstanceOf(InvalidResetTokenError);
  });
});
