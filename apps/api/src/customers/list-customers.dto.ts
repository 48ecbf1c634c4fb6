import { ApiHideProperty } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Min } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** Query DTOs of authenticated routes: `access_token` is a credential (read by the guard), not a filter. */
export class AuthenticatedQueryDto {
  @ApiHideProperty()
  @IsOptional()
  @IsString()
  access_token?: string;
}

/** GET /customers' parameters; QueryValidationPipe checks them against these rules. */
export class ListCustomersQueryDto extends AuthenticatedQueryDto {
  @IsOptional()
  @IsInt({ message: 'page must be an integer' })
  @Min(1, { message: 'page must be 1 or more' })
  page?: number;

  @IsOptional()
  @IsInt({ message: 'gt must be an integer' })
  gt?: number;

  @IsOptional()
  @IsInt({ message: 'lt must be an integer' })
  lt?: number;

  @IsOptional()
  @IsInt({ message: 'maxpagesize must be an integer' })
  @Min(1, { message: 'maxpagesize must be 1 or more' })
  maxpagesize?: number;
}
