import { CredentialsRevokedError, NotFoundError, sessionStreamName } from '@chronicle/domain';
import { Principal } from '../../shared/principal';
import { AccessTokenClaims, AccessTokenCodec } from '../../shared/security.ports';
import { EndSessionCommand } from '../end-session/end-session.command';
import { EndSessionHandler } from '../end-session/end-session.handler';
import {
  ACCOUNTS_NOW,
  AccountsWorld,
  accountsContext,
  accountsWorld,
  basicPrincipal,
} from '../accounts-world.spec-helper';
import { IssueAccessTokenCommand } from './issue-access-token.command';
import { IssueAccessTokenHandler } from './issue-access-token.handler';

/** Signs claims as their JSON: the spec reads back what a token would carry. */
class JsonCodec extends AccessTokenCodec {
  sign(claims: AccessTokenClaims): string {
    return JSON.stringify(claims);
  }
  verify(token: string): AccessTokenClaims | null {
    return JSON.parse(token) as AccessTokenClaims;
  }
}

describe('IssueAccessTokenHandler and EndSessionHandler', () => {
  let world: AccountsWorld;
  let issue: IssueAccessTokenHandler;
  let end: EndSessionHandler;
  const codec = new JsonCodec();
  const basic = basicPrincipal;

  beforeEach(async () => {
    world = accountsWorld();
    issue = new IssueAccessTokenHandler(world.repository, codec);
    end = new EndSessionHandler(world.repository);
    await world.openAccount('a-1', 'ada@example.com', 'first secret words');
  });
  afterEach(() => world.close());

  const token = async (principal: Principal, ttlSeconds = 3600) => {
    const issued = await issue.execute(new IssueAccessTokenCommand(principal, ttlSeconds, accountsContext));
    return { ...issued, claims: codec.verify(issued.accessToken)! };
  };
  const bearerOf = (claims: AccessTokenClaims): Principal => ({
    ...basic,
    method: 'bearer',
    tokenId: claims.tokenId,
    sessionId: claims.sessionId,
  });

  describe('given Basic credentials', () => {
    it('starts a session of its own with a token of the lifetime asked for', async () => {
      const { claims, expiresIn } = await token(basic, 3600);
      expect(claims).toEqual({
        accountId: 'a-1',
        tokenId: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        sessionId: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
        credentialsVersion: 0,
        issuedAt: ACCOUNTS_NOW,
        expiresAt: ACCOUNTS_NOW + 3600_000,
      });
      expect(expiresIn).toBe(3600);
      const events = await world.store.readStream(sessionStreamName(claims.sessionId));
      expect(events.map((event) => [event.type, event.data.issuedWith])).toEqual([
        ['SessionStarted.v1', undefined],
        ['SessionTokenIssued.v1', null],
      ]);
      expect(events[1].data.tokenId).toBe(claims.tokenId);
      expect(claims.tokenId).not.toBe(claims.sessionId);
    });

    it('starts a new session each time, even when the principal names one', async () => {
      const first = await token(basic);
      const second = await token({
        ...basic,
        sessionId: first.claims.sessionId,
        tokenId: first.claims.tokenId,
      });
      expect(second.claims.sessionId).not.toBe(first.claims.sessionId);
      expect(second.claims.tokenId).not.toBe(first.claims.tokenId);
    });

    it('answers a lifetime of zero, never less, for a token that expires before it is issued', async () => {
      expect((await token(basic, -10)).expiresIn).toBe(0);
    });

    it('issues nothing for credentials older than the account’s', async () => {
      await world.write('a-1', [
        {
          type: 'PasswordChanged.v1',
          data: { accountId: 'a-1', passwordHash: 'hash:x', changedAt: 'x', credentialsVersion: 1 },
        },
      ]);
      await expect(token(basic)).rejects.toBeInstanceOf(CredentialsRevokedError);
      expect((await token({ ...basic, credentialsVersion: 1 })).claims.credentialsVersion).toBe(1);
    });

    it('issues nothing for an account that does not exist', async () => {
      await expect(token({ ...basic, accountId: 'gone' })).rejects.toBeInstanceOf(CredentialsRevokedError);
    });
  });

  describe('given a bearer token', () => {
    it('mints another token of its session, issued with it, expiring no later than the session', async () => {
      const first = await token(basic, 2);
      world.clock.time = ACCOUNTS_NOW + 500;
      const second = await token(bearerOf(first.claims), 3600);
      expect(second.claims).toMatchObject({
        sessionId: first.claims.sessionId,
        issuedAt: ACCOUNTS_NOW + 500,
        expiresAt: ACCOUNTS_NOW + 2000,
      });
      expect(second.claims.tokenId).not.toBe(first.claims.tokenId);
      // 1.5 s left, in whole seconds.
      expect(second.expiresIn).toBe(1);
      const [, , minted] = await world.store.readStream(sessionStreamName(first.claims.sessionId));
      expect(minted.data).toMatchObject({ issuedWith: first.claims.tokenId, tokenId: second.claims.tokenId });
    });

    it('issues nothing on a session the token does not name', async () => {
      const first = await token(basic);
      await expect(token({ ...bearerOf(first.claims), sessionId: undefined })).rejects.toBeInstanceOf(
        CredentialsRevokedError,
      );
      await expect(token({ ...bearerOf(first.claims), tokenId: undefined })).rejects.toBeInstanceOf(
        CredentialsRevokedError,
      );
    });

    it('issues nothing once its session has ended, and ending it answers the session’s expiry', async () => {
      const first = await token(basic, 60);
      const ended = await end.execute(
        new EndSessionCommand('a-1', first.claims.sessionId, first.claims.tokenId, accountsContext),
      );
      expect(ended).toEqual({ sessionExpiresAt: ACCOUNTS_NOW + 60_000 });
      const [, , recorded] = await world.store.readStream(sessionStreamName(first.claims.sessionId));
      expect(recorded).toMatchObject({ type: 'SessionEnded.v1', data: { endedWith: first.claims.tokenId } });
      await expect(token(bearerOf(first.claims))).rejects.toBeInstanceOf(CredentialsRevokedError);
    });
  });

  describe('ending a session', () => {
    it("answers not found for a session that is not the account's, or none", async () => {
      const first = await token(basic);
      await expect(
        end.execute(
          new EndSessionCommand('a-2', first.claims.sessionId, first.claims.tokenId, accountsContext),
        ),
      ).rejects.toEqual(new NotFoundError('Session'));
      // Refused before anything is written: the session goes on.
      const events = await world.store.readStream(sessionStreamName(first.claims.sessionId));
      expect(events.map((event) => event.type)).not.toContain('SessionEnded.v1');
      await expect(token(bearerOf(first.claims))).resolves.toBeDefined();
      await expect(
        end.execute(new EndSessionCommand('a-1', 'no-such-session', 't', accountsContext)),
      ).rejects.toBeInstanceOf(NotFoundError);
    });
  });
});
