import { Controller, Delete, Get, Module, Patch, Post, Put } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { ApiResponse, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { InvalidResetTokenError, WrongPasswordError } from '@chronicle/domain';
import { ApiProblems, completeDocument, refusal } from './openapi';
import { PROBLEM_CONTENT_TYPE } from './problem-details';

const wrongPassword = refusal(new WrongPasswordError(), 'the current password is not the one given.');
const unknownToken = refusal(new InvalidResetTokenError(), 'the token is unknown or spent.');

@Controller('things')
class ThingsController {
  @Get()
  @ApiProblems(401, 404, 429)
  list() {}

  @Post()
  @ApiProblems(415, 422, wrongPassword, unknownToken)
  create() {}

  @Patch()
  @ApiProblems(409)
  patch() {}

  @Put()
  @ApiProblems(400)
  put() {}

  @Delete()
  @ApiResponse({ status: 204, description: 'Gone.' })
  @ApiResponse({ status: 'default', description: 'Its own default.' })
  remove() {}
}

@Module({ controllers: [ThingsController] })
class ThingsModule {}

type Response = {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<
    string,
    { schema: unknown; examples?: Record<string, { summary: string; value: unknown }> }
  >;
};
type Operation = { parameters?: { name: string; in: string }[]; responses: Record<string, Response> };

/**
 * The document of ThingsController, built in the test that reads it (not in a beforeAll): Stryker
 * switches a mutant on per test, so code run before the tests would never run mutated.
 */
async function documented() {
  const app = await NestFactory.create(ThingsModule, new FastifyAdapter(), { logger: false });
  try {
    const document = completeDocument(
      SwaggerModule.createDocument(app, new DocumentBuilder().build()),
      'https://api.example',
    );
    return {
      operations: document.paths['/things'] as unknown as Record<
        'get' | 'post' | 'patch' | 'put' | 'delete',
        Operation
      >,
      servers: document.servers,
    };
  } finally {
    await app.close();
  }
}

describe('the document of problem details', () => {
  const problemSchema = { schema: { $ref: '#/components/schemas/ProblemDto' } };
  const requestId = { description: expect.stringContaining("request's id"), schema: { type: 'string' } };

  it('lists the server the document came from first, then the public address', async () => {
    expect((await documented()).servers).toEqual([
      { url: '/', description: 'The server that serves this document' },
      { url: 'https://api.example', description: 'PUBLIC_BASE_URL' },
    ]);
  });

  it('describes each status in problem details, with the headers that status carries', async () => {
    const { operations } = await documented();
    const { responses } = operations.get;
    expect(responses['401']).toEqual({
      description: 'Missing or invalid credentials.',
      content: { [PROBLEM_CONTENT_TYPE]: problemSchema },
      headers: {
        'X-Request-Id': requestId,
        'WWW-Authenticate': {
          description: expect.stringContaining('Bearer realm="api"'),
          schema: { type: 'string' },
        },
      },
    });
    expect(responses['404']).toEqual({
      description: 'No such resource.',
      content: { [PROBLEM_CONTENT_TYPE]: problemSchema },
      headers: { 'X-Request-Id': requestId },
    });
    expect(responses['429'].headers).toEqual({
      'X-Request-Id': requestId,
      'Retry-After': {
        description: 'Seconds to wait before trying again.',
        schema: { type: 'integer', minimum: 1 },
      },
    });
    expect(operations.post.responses['415'].headers).toEqual({
      'X-Request-Id': requestId,
      'Accept-Patch': {
        description: 'The patch format this resource takes.',
        schema: { type: 'string', const: 'application/merge-patch+json' },
      },
    });
  });

  it('declares each refusal under its status, described and as an example named by its problem type', async () => {
    const { operations } = await documented();
    const { responses } = operations.post;
    expect(wrongPassword.rendered).toMatchObject({ status: 400, type: 'wrong-password' });
    expect(unknownToken.rendered).toMatchObject({ status: 400, type: 'invalid-reset-token' });
    expect(responses['400']).toEqual({
      description:
        'Malformed request: a parameter or body of the wrong type or shape, or more than one set of credentials. ' +
        '`wrong-password`: the current password is not the one given. ' +
        '`invalid-reset-token`: the token is unknown or spent.',
      content: {
        [PROBLEM_CONTENT_TYPE]: {
          ...problemSchema,
          examples: {
            'wrong-password': { summary: wrongPassword.why, value: wrongPassword.rendered },
            'invalid-reset-token': { summary: unknownToken.why, value: unknownToken.rendered },
          },
        },
      },
      headers: { 'X-Request-Id': requestId },
    });
  });

  it("adds Idempotency-Key and its refusals to every POST and PATCH, beside the operation's own", async () => {
    const { operations } = await documented();
    for (const method of ['post', 'patch'] as const) {
      const { parameters, responses } = operations[method];
      expect(parameters).toEqual([
        expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false }),
      ]);
      const conflict = responses['409'];
      expect(Object.keys(conflict.content![PROBLEM_CONTENT_TYPE].examples!)).toEqual([
        'idempotency-key-in-flight',
        'idempotency-key-answer-lost',
      ]);
      expect(conflict.description).toMatch(/`idempotency-key-in-flight`: .*`idempotency-key-answer-lost`: /);
      expect(conflict.headers).toEqual({ 'X-Request-Id': requestId });
      const reused = responses['422'].content![PROBLEM_CONTENT_TYPE].examples!['idempotency-key-reused'];
      expect(reused).toEqual({
        summary: expect.stringContaining('another request'),
        value: expect.objectContaining({ status: 422, type: 'idempotency-key-reused' }),
      });
    }
    // A status the operation declared keeps its own description first, and gets the refusal after it.
    expect(operations.post.responses['422'].description).toMatch(
      /^Well-formed, but a value breaks a rule\. `idempotency-key-reused`: /,
    );
    expect(operations.patch.responses['409'].description).toMatch(
      /^The request conflicts with the current state or with another request\. `idempotency-key-in-flight`: /,
    );
    // POST had no 409 of its own: the one added has the status's description first too.
    expect(operations.post.responses['409'].description).toMatch(/^The request conflicts/);
    for (const method of ['get', 'put', 'delete'] as const) {
      expect(operations[method].parameters ?? []).not.toContainEqual(
        expect.objectContaining({ name: 'Idempotency-Key' }),
      );
      expect(operations[method].responses['409']).toBeUndefined();
    }
  });

  it('gives every operation a default response, and keeps one it declared', async () => {
    const { operations } = await documented();
    for (const method of ['get', 'post', 'patch', 'put'] as const) {
      expect(operations[method].responses.default).toEqual({
        description: 'Any other error (a timeout, an unavailable store), as problem details.',
        content: { [PROBLEM_CONTENT_TYPE]: problemSchema },
        headers: { 'X-Request-Id': requestId },
      });
    }
    expect(operations.delete.responses.default.description).toBe('Its own default.');
    expect(operations.delete.responses['204']).toEqual({
      description: 'Gone.',
      headers: { 'X-Request-Id': requestId },
    });
  });
});
