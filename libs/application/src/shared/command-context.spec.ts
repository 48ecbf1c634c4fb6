import { RecordedEvent } from '@chronicle/event-store';
import { cliContext, followUpContext, SYSTEM_AUTH } from './command-context';
import { authOf, isAdmin, Principal, requestContext } from './principal';

const mockUserInfo = jest.fn();
jest.mock('node:os', () => ({
  ...jest.requireActual<typeof import('node:os')>('node:os'),
  userInfo: () => mockUserInfo() as unknown,
}));

describe('command contexts', () => {
  afterEach(() => {
    jest.restoreAllMocks();
    mockUserInfo.mockReset();
  });

  it('attribute CLI work to the operating-system user, with the run’s correlation id', () => {
    mockUserInfo.mockReturnValue({ username: 'ada' });
    expect(cliContext('run-1')).toEqual({
      actor: 'cli:ada',
      correlationId: 'run-1',
      auth: { method: 'cli', tokenId: null },
    });
  });

  it('attribute CLI work to the uid when the system has no name for it', () => {
    mockUserInfo.mockImplementation(() => {
      throw new Error('no passwd entry');
    });
    jest.spyOn(process, 'getuid').mockReturnValue(1234);
    expect(cliContext('run-1').actor).toBe('cli:uid-1234');
  });

  it("attribute a saga step to the service, within its cause's correlation, caused by it", () => {
    const cause = { id: 'e-1', metadata: { correlationId: 'c-1', actor: 'a-1' } } as unknown as RecordedEvent;
    expect(followUpContext(cause)).toEqual({
      actor: 'system',
      correlationId: 'c-1',
      causationId: 'e-1',
      auth: SYSTEM_AUTH,
    });
    expect(SYSTEM_AUTH).toEqual({ method: 'system', tokenId: null });
  });

  describe('of a request', () => {
    const principal: Principal = {
      accountId: 'a-1',
      userId: 'u-1',
      roles: ['user'],
      method: 'bearer',
      tokenId: 't-1',
      credentialsVersion: 0,
    };
    const ids = { correlationId: 'c-1', clientRequestId: 'r-1' };

    it('attribute it to the account, with the token it authenticated with', () => {
      expect(requestContext(principal, ids)).toEqual({
        actor: 'a-1',
        correlationId: 'c-1',
        clientRequestId: 'r-1',
        auth: { method: 'bearer', tokenId: 't-1' },
      });
      expect(authOf({ ...principal, method: 'basic', tokenId: undefined })).toEqual({
        method: 'basic',
        tokenId: null,
      });
    });

    it('attribute it to anonymous without a principal', () => {
      expect(requestContext(null, { correlationId: 'c-1', clientRequestId: null })).toEqual({
        actor: 'anonymous',
        correlationId: 'c-1',
        clientRequestId: null,
        auth: { method: 'none', tokenId: null },
      });
    });

    it('know an admin by the role', () => {
      expect(isAdmin(principal)).toBe(false);
      expect(isAdmin({ ...principal, roles: ['user', 'admin'] })).toBe(true);
    });
  });
});
