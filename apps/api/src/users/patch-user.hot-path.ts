import { Injectable } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CredentialVerifier } from '@chronicle/auth';
import type { HotPath } from '../http/hot-path';
import { patchUserResponse } from './patch-user.response';

/** PATCH /users/{id} for a caller known without hashing (see HotPath); the rest goes to the route. */
@Injectable()
export class PatchUserHotPath implements HotPath {
  constructor(
    private readonly commands: CommandBus,
    private readonly credentials: CredentialVerifier,
  ) {}

  async serve(request: FastifyRequest, reply: FastifyReply): Promise<boolean> {
    const { userId } = request.params as { userId?: unknown };
    if (typeof userId !== 'string') return false;
    const principal = await this.credentials.withoutHashing(request);
    if (principal === null) return false;
    void reply.send(await patchUserResponse(this.commands, userId, principal, request, reply));
    return true;
  }
}
