import { Controller, Get, UseGuards } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import { ApiBasicAuth, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { GetProjectionStatusQuery, ProjectionsStatus } from '@chronicle/application';
import { AdminGuard } from './admin.guard';
import { ProjectionsStatusDto } from './projections-status.dto';

@ApiTags('admin')
@ApiBearerAuth()
@ApiBasicAuth()
@Controller('api/v1/admin/projections')
@UseGuards(AdminGuard)
export class ProjectionsController {
  constructor(private readonly queries: QueryBus) {}

  @Get()
  @ApiOperation({ summary: "Each projection's checkpoint, the store's last position and the lag (admin)" })
  @ApiOkResponse({ type: ProjectionsStatusDto })
  status(): Promise<ProjectionsStatus> {
    return this.queries.execute(new GetProjectionStatusQuery());
  }
}
