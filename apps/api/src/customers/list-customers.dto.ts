import { IsInt, IsOptional } from 'class-validator';
import { PageQueryDto } from '../http/paging';

/** GET /customers' parameters; QueryValidationPipe checks them against these rules. */
export class ListCustomersQueryDto extends PageQueryDto {
  @IsOptional()
  @IsInt({ message: 'gt must be an integer' })
  gt?: number;

  @IsOptional()
  @IsInt({ message: 'lt must be an integer' })
  lt?: number;
}
