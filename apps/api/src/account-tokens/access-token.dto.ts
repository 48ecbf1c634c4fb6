import { ApiProperty } from '@nestjs/swagger';

export class AccessTokenDto {
  @ApiProperty({ description: 'Opaque to clients.' })
  access_token!: string;

  @ApiProperty({ enum: ['Bearer'] })
  token_type!: 'Bearer';

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: 'Seconds until the token expires.',
    example: 3600,
  })
  expires_in!: number;
}
