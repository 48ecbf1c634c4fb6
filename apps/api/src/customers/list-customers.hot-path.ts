import { Injectable } from '@nestjs/common';
import { QueryBus } from '@nestjs/cqrs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CredentialVerifier } from '@chronicle/auth';
import type { HotPath } from '../http/hot-path';
import { customerPage } from './customer-page';
import { wellFormedListCustomersQuery } from './list-customers.dto';

/** GET /customers, the service's busiest request, without the layers it does not need (see HotPath). */
@Injectable()
export class ListCustomersHotPath implements HotPath {
  constructor(
    private readonly queries: QueryBus,
    private readonly credentials: CredentialVerifier,
  ) {}

  async serve(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const query = wellFormedListCustomersQuery(request.query);
    if (query === null || (await this.credentials.withoutHashing(request)) === null) return false;
    void reply.send(await customerPage(this.queries, query, reply));
    return true;
  }
}
