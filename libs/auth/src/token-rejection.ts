import type { AccessTokenRejectionReason } from '@chronicle/domain';

/** Why a Bearer token was refused, as its security event records it: never the token. */
export class TokenRejection {
  constructor(
    readonly reason: AccessTokenRejectionReason,
    /** The token's id when its signature verified, else null. */
    readonly tokenId: string | null,
  ) {}
}
