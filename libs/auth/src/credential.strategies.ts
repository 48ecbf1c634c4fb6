import { Strategy } from 'passport';
import { Strategy as BearerStrategy, type VerifyFunctionWithRequest } from 'passport-http-bearer';
import { clientAddress } from './client-address';
import { CredentialVerifier } from './credential-verifier';
import { credentialsOf } from './credentials';
import { TokenRejection } from './token-rejection';

/**
 * What passport-http-bearer is handed instead of the request: the one token `credentialsOf` found,
 * where that strategy looks for a token, and nothing else of the request (so it never reads a
 * token from a body, nor parses a header a second time).
 */
export interface BearerView {
  readonly query: { readonly access_token: string };
  /** Why the verifier refused the token, for its security event (the strategy keeps only a string). */
  rejection?: TokenRejection;
}

export const bearerView = (token: string): BearerView => ({ query: { access_token: token } });

/**
 * RFC 7617 Basic (`Authorization: Basic base64(email:password)`, what `email:password@host`
 * sends): verifies the one credential `credentialsOf` read, and reads nothing else of the request.
 */
class BasicStrategy extends Strategy {
  override readonly name = 'basic';

  constructor(private readonly verifier: CredentialVerifier) {
    super();
  }

  override authenticate(request: never): void {
    const credentials = credentialsOf(request);
    if (credentials.kind !== 'basic') return this.fail(401);
    this.verifier.basic(credentials.email, credentials.password, clientAddress(request)).then(
      (principal) => (principal ? this.success(principal) : this.fail(401)),
      (error: Error) => this.error(error),
    );
  }
}

/**
 * RFC 6750 Bearer (`Authorization: Bearer <token>` or `?access_token=<token>`), verified by
 * passport-http-bearer's strategy over a BearerView; and Basic.
 */
export function credentialStrategies(verifier: CredentialVerifier): Strategy[] {
  // Typed for Express requests: what it is handed here is the guard's BearerView.
  const bearer = new BearerStrategy<VerifyFunctionWithRequest>(
    { passReqToCallback: true },
    (request, token, done) => {
      const view = request as unknown as BearerView;
      verifier.bearer(token).then(
        (verdict) => {
          if (verdict instanceof TokenRejection) {
            view.rejection = verdict;
            done(null, false);
          } else done(null, verdict);
        },
        (error: unknown) => done(error),
      );
    },
  );
  return [bearer, new BasicStrategy(verifier)];
}
