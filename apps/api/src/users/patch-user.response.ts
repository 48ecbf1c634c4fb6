import { BadRequestException, NotAcceptableException, UnsupportedMediaTypeException } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PatchUserCommand, Principal } from '@chronicle/application';
import {
  etagOf,
  fullUser,
  MERGE_PATCH_MEDIA_TYPE,
  mediaTypeOf,
  negotiateUserRepresentation,
  parseIfMatch,
  SUPPORTED_MEDIA_TYPES,
  userFragment,
} from './user-representations';

/**
 * PATCH /users/{id} once the caller is known: checks the media types, runs the patch, sets the
 * representation's headers and returns its body. Shared by the Nest route and its hot path.
 */
export async function patchUserResponse(
  commands: CommandBus,
  userId: string,
  principal: Principal,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Buffer> {
  const contentType = request.headers['content-type']?.split(';')[0].trim().toLowerCase();
  if (contentType !== MERGE_PATCH_MEDIA_TYPE) {
    throw new UnsupportedMediaTypeException({
      type: 'unsupported-media-type',
      title: 'Unsupported Media Type',
      detail: `Send the patch as ${MERGE_PATCH_MEDIA_TYPE}.`,
    });
  }
  // Decided before anything changes: a request we cannot answer must change nothing.
  const representation = negotiateUserRepresentation(request.headers.accept);
  if (!representation) {
    throw new NotAcceptableException({
      type: 'not-acceptable',
      title: 'Not Acceptable',
      detail: `None of the media types in Accept is offered. Supported: ${SUPPORTED_MEDIA_TYPES.join(', ')}.`,
      supported: SUPPORTED_MEDIA_TYPES,
    });
  }
  const body = request.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new BadRequestException({
      type: 'invalid-patch',
      title: 'Invalid merge patch',
      detail: 'The merge patch must be a JSON object.',
    });
  }
  const ifMatch = request.headers['if-match'];
  const result = await commands.execute(
    new PatchUserCommand(
      userId,
      body as Record<string, unknown>,
      principal,
      { actor: principal.accountId, correlationId: request.id },
      parseIfMatch(typeof ifMatch === 'string' ? ifMatch : undefined),
    ),
  );
  void reply
    .header('content-type', mediaTypeOf(representation))
    .header('etag', etagOf(result.revision))
    .header('vary', 'Accept');
  const representationBody =
    representation === 'user' ? fullUser(result.user) : userFragment(result.user, result.patched);
  // A Buffer, so that Fastify sends the media type exactly as negotiated (it adds a charset to strings).
  return Buffer.from(JSON.stringify(representationBody));
}
