import { Strategy } from 'passport';
import { Principal } from '@chronicle/application';
import { clientAddress } from './client-address';
import { CredentialVerifier } from './credential-verifier';
import { Credentials, credentialsOf } from './credentials';
import { TokenRejection } from './token-rejection';

type Verify = (credentials: Credentials, client: string) => Promise<Principal | TokenRejection | null> | null;

/**
 * A passport strategy that verifies the one credential `credentialsOf` read, and reads nothing of
 * the request itself (so a token in a body, say, is never a credential).
 */
export class CredentialStrategy extends Strategy {
  constructor(
    override readonly name: 'bearer' | 'basic',
    private readonly verify: Verify,
  ) {
    super();
  }

  /** A refused token fails with its TokenRejection as passport's challenge: the guard records it. */
  override authenticate(request: never): void {
    const verifying = this.verify(credentialsOf(request), clientAddress(request));
    if (verifying === null) return this.fail(401);
    verifying.then(
      (verdict) =>
        verdict instanceof TokenRejection
          ? this.fail(verdict, 401)
          : verdict
            ? this.success(verdict)
            : this.fail(401),
      (error: Error) => this.error(error),
    );
  }
}

/**
 * RFC 6750 Bearer (`Authorization: Bearer <token>` or `?access_token=<token>`) and RFC 7617 Basic
 * (`Authorization: Basic base64(email:password)`, what `email:password@host` sends).
 */
export function credentialStrategies(verifier: CredentialVerifier): CredentialStrategy[] {
  return [
    new CredentialStrategy('bearer', (credentials) =>
      credentials.kind === 'bearer' ? verifier.bearer(credentials.token) : null,
    ),
    new CredentialStrategy('basic', (credentials, client) =>
      credentials.kind === 'basic' ? verifier.basic(credentials.email, credentials.password, client) : null,
    ),
  ];
}
