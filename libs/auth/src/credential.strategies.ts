import { Injectable } from '@nestjs/common';
import { Strategy } from 'passport';
import { Principal } from '@chronicle/application';
import { CredentialVerifier } from './credential-verifier';
import { credentialsOf, RequestLike } from './credentials';

/**
 * The passport strategies: each verifies the one credential that `credentialsOf` read, and reads
 * nothing of the request itself (so a token in a body, say, is never a credential).
 */
abstract class CredentialStrategy extends Strategy {
  protected abstract verify(request: RequestLike): Promise<Principal | null> | null;

  override authenticate(request: never): void {
    const verifying = this.verify(request);
    if (verifying === null) return this.fail(401);
    verifying.then(
      (principal) => (principal ? this.success(principal) : this.fail(401)),
      (error: Error) => this.error(error),
    );
  }
}

/** RFC 6750: `Authorization: Bearer <token>` or `?access_token=<token>`. */
@Injectable()
export class BearerStrategy extends CredentialStrategy {
  override name = 'bearer';

  constructor(private readonly verifier: CredentialVerifier) {
    super();
  }

  protected verify(request: RequestLike): Promise<Principal | null> | null {
    const credentials = credentialsOf(request);
    return credentials.kind === 'bearer' ? this.verifier.bearer(credentials.token) : null;
  }
}

/** RFC 7617: `Authorization: Basic base64(email:password)`, what `email:password@host` sends. */
@Injectable()
export class BasicStrategy extends CredentialStrategy {
  override name = 'basic';

  constructor(private readonly verifier: CredentialVerifier) {
    super();
  }

  protected verify(request: RequestLike): Promise<Principal | null> | null {
    const credentials = credentialsOf(request);
    return credentials.kind === 'basic' ? this.verifier.basic(credentials.email, credentials.password) : null;
  }
}
