import { CanActivate, ExecutionContext, ForbiddenException, Injectable } from '@nestjs/common';
import { isAdmin, Principal } from '@chronicle/application';

/**
 * Admin-only routes. Runs after the global authentication guard and before any pipe, so a
 * non-admin learns nothing from validation errors: 403 whatever the query says.
 */
@Injectable()
export class AdminGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const principal = context.switchToHttp().getRequest<{ user?: Principal }>().user;
    if (principal && isAdmin(principal)) return true;
    throw new ForbiddenException({
      type: 'forbidden',
      title: 'Forbidden',
      detail: 'This resource is for administrators only.',
    });
  }
}
