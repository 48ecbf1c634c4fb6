import { Controller, Get } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiCredentials, ApiProblems } from '../http/openapi';
import { GetProjectionStatusQuery, ProjectionsStatus } from '@chronicle/application';
import { Allow } from '@chronicle/auth';
import { ProjectionsStatusDto } from './projections-status.dto';

@ApiTags('admin')
@ApiCredentials()
@Controller('api/v1/admin/projections')
@Allow()
export class ProjectionsController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @ApiOperation({ summary: "Each projection's checkpoint, the store's last position and the lag (admin)" })
  @ApiOkResponse({ type: ProjectionsStatusDto })
  @ApiProblems(400, 401, 403)
  status(): Promise<ProjectionsStatus> {
    return this.queries.execute(new GetProjectionStatusQuery());
  }
}
