import { ExecutionContext, HttpException, Inject, Injectable } from '@nestjs/common';
import { ChronicleMetrics } from '@chronicle/metrics';
import { ThrottlerGuard, ThrottlerLimitDetail } from '@nestjs/throttler';
import { passwordFormOf } from './account-password.dto';

export const RESET_WINDOW_MS = 15 * 60 * 1000;

/** Rate limits only the reset-request form of PUT /api/v1/account/password. */
@Injectable()
export class ResetRequestThrottlerGuard extends ThrottlerGuard {
  @Inject(ChronicleMetrics) private readonly metrics!: ChronicleMetrics;

  protected override shouldSkip(context: ExecutionContext): Promise<boolean> {
    const body = context.switchToHttp().getRequest<{ body?: unknown }>().body;
    return Promise.resolve(passwordFormOf(body) !== 'request');
  }

  protected override throwThrottlingException(
    _context: ExecutionContext,
    limit: ThrottlerLimitDetail,
  ): Promise<void> {
    this.metrics.rateLimitRejections.inc({ limit: 'password-reset' });
    throw new HttpException(
      {
        type: 'too-many-requests',
        title: 'Too Many Requests',
        detail: 'Too many password reset requests; try again later.',
        retryAfter: Math.max(1, Math.ceil(limit.timeToBlockExpire)),
      },
      429,
    );
  }
}
