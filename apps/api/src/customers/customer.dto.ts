import { ApiProperty } from '@nestjs/swagger';

export class CustomerDto {
  @ApiProperty({ example: 42 })
  id!: number;

  @ApiProperty({ example: 'Ada Lovelace' })
  name!: string;

  @ApiProperty({ example: 'ada@example.com' })
  email!: string;

  @ApiProperty({ example: '2026-11-22T09:15:00.000Z', format: 'date-time' })
  createdon!: string;
}

/** GET /customers' 200 body for Fastify: serialised by a compiled stringifier, not JSON.stringify. */
export const CUSTOMER_PAGE_SCHEMA = {
  type: 'array',
  items: {
    type: 'object',
    properties: {
      id: { type: 'integer' },
      name: { type: 'string' },
      email: { type: 'string' },
      createdon: { type: 'string' },
    },
  },
} as const;
