import { BadRequestException } from '@nestjs/common';
import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { ListAuditEventsQueryDto } from '../audit/list-audit-events.dto';
import { ListCustomersQueryDto } from '../customers/list-customers.dto';
import {
  PasswordResetCompletionDto,
  PasswordResetRequestDto,
} from '../account-password/account-password.dto';
import { GetUserQueryDto } from '../users/user.dto';
import { MERGE_PATCH_MEDIA_TYPE } from './edge';
import { bodyProblems, QueryValidationPipe, requireJsonObject } from './validation';

const pipe = new QueryValidationPipe();
const check = (query: Record<string, unknown>, metatype: new () => object = ListCustomersQueryDto) =>
  pipe.transform(query, { type: 'query', metatype });

function refusal(query: Record<string, unknown>, metatype?: new () => object) {
  try {
    check(query, metatype);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return (error as BadRequestException).getResponse() as { errors: { field: string; message: string }[] };
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
}

describe('QueryValidationPipe', () => {
  it.each([
    [{}, {}],
    [{ page: '1' }, { page: 1 }],
    [
      { page: '007', gt: '-5', maxpagesize: '5000' },
      { page: 7, gt: -5, maxpagesize: 5000 },
    ],
    [
      { lt: '99999999999999999999999', page: '9'.repeat(400) },
      { lt: Number.MAX_SAFE_INTEGER, page: Number.MAX_SAFE_INTEGER },
    ],
    [
      { gt: '-99999999999999999999999', access_token: 't' },
      { gt: -Number.MAX_SAFE_INTEGER, access_token: 't' },
    ],
  ])('types %j as %j', (query, typed) => {
    expect({ ...(check(query) as object) }).toEqual(typed);
  });

  it.each([
    [{ page: '0' }, 'page', 'page must be 1 or more'],
    [{ page: '1e3' }, 'page', 'page must be an integer'],
    [{ page: '1.5' }, 'page', 'page must be an integer'],
    [{ gt: ' 7' }, 'gt', 'gt must be an integer'],
    [{ lt: '0x10' }, 'lt', 'lt must be an integer'],
    [{ maxpagesize: '' }, 'maxpagesize', 'maxpagesize must be an integer'],
    [{ gt: ['1', '2'] }, 'gt', 'gt must be given once'],
    [{ sort: 'id' }, 'sort', 'sort is not a parameter of this endpoint'],
    [{ constructor: '1' }, 'constructor', 'constructor is not a parameter of this endpoint'],
    [
      JSON.parse('{"__proto__":"1"}') as Record<string, unknown>,
      '__proto__',
      '__proto__ is not a parameter of this endpoint',
    ],
  ])('refuses %j, naming %s with its declared message', (query, field, message) => {
    expect(refusal(query).errors).toEqual([{ field, message }]);
  });

  it('answers a refusal as invalid-parameters, with every field named', () => {
    expect(refusal({ page: '0' })).toEqual({
      type: 'invalid-parameters',
      title: 'Invalid query parameters',
      detail: 'One or more query parameters are invalid.',
      errors: [{ field: 'page', message: 'page must be 1 or more' }],
    });
  });

  it('leaves a single named query parameter alone: its own pipe checks it', () => {
    expect(pipe.transform('0', { type: 'query', metatype: ListCustomersQueryDto, data: 'page' })).toBe('0');
  });

  it('lists every invalid parameter', () => {
    expect(
      refusal({ page: 'x', lt: 'y' })
        .errors.map((error) => error.field)
        .sort(),
    ).toEqual(['lt', 'page']);
  });

  it('holds the audit limit to 1..1000', () => {
    expect({ ...(check({ limit: '1000' }, ListAuditEventsQueryDto) as object) }).toEqual({ limit: 1000 });
    for (const limit of ['0', '1001', '-1', '10000']) {
      expect(refusal({ limit }, ListAuditEventsQueryDto).errors).toEqual([
        { field: 'limit', message: 'limit must be from 1 to 1000' },
      ]);
    }
  });

  it('leaves parameters other than a query DTO alone', () => {
    expect(pipe.transform('x', { type: 'param', metatype: String, data: 'userId' })).toBe('x');
  });
});

describe('formats, as the document states them', () => {
  it('takes asOf as a date-time with its days counted, or a position below 2^63', () => {
    for (const asOf of [
      '2024-02-29T00:00:00Z',
      '0050-01-01t00:00:00+23:59',
      '42',
      '42:40',
      '9223372036854775807',
    ])
      expect({ ...(check({ asOf }, GetUserQueryDto) as object) }).toEqual({ asOf });
    for (const asOf of [
      '2026-02-29T00:00:00Z',
      '2026-11-31T00:00:00Z',
      '2026-01-01T24:00:00Z',
      '9223372036854775808',
    ])
      expect(refusal({ asOf }, GetUserQueryDto).errors).toEqual([
        { field: 'asOf', message: expect.stringContaining('asOf must be an RFC 3339 time') },
      ]);
  });
});

describe('bodyProblems', () => {
  it('is null for a body its DTO takes', () => {
    expect(bodyProblems(PasswordResetRequestDto, { email: 'ada@example.com' })).toBeNull();
  });

  it('tells a member of the wrong type (malformed) from a value that breaks a rule', () => {
    expect(bodyProblems(PasswordResetRequestDto, { email: 42 })).toMatchObject({ malformed: true });
    expect(bodyProblems(PasswordResetRequestDto, { email: '' })).toEqual({
      malformed: false,
      errors: [{ field: 'email', message: 'email must be an e-mail address' }],
    });
    expect(bodyProblems(PasswordResetCompletionDto, { token: 'x', new: 'short' })).toMatchObject({
      malformed: false,
      errors: [{ field: 'token' }, { field: 'new', message: 'new must be 8 to 256 characters long' }],
    });
  });

  it('calls a missing member malformed, also beside a value that breaks a rule', () => {
    expect(bodyProblems(PasswordResetCompletionDto, { new: 'short' })).toEqual({
      malformed: true,
      errors: [
        { field: 'token', message: 'token is required' },
        { field: 'new', message: 'new must be 8 to 256 characters long' },
      ],
    });
  });

  it('calls a member given as an array of the wrong type, not repeated as a query parameter would be', () => {
    const asNumber = bodyProblems(PasswordResetRequestDto, { email: 42 });
    expect(bodyProblems(PasswordResetRequestDto, { email: ['ada@example.com'] })).toEqual(asNumber);
    expect(asNumber?.errors).toEqual([
      { field: 'email', message: expect.not.stringContaining('given once') },
    ]);
  });

  it("explains a rule with no message of its own, or one made by a function, in the schema's words", () => {
    class Form {
      @IsString({ message: 'name must be text' })
      @MaxLength(3, { message: () => 'made by a function' })
      name!: string;

      @IsInt({ message: 'count must be an integer' })
      @Min(1)
      @Max(9, { message: 'count must be 9 at most' })
      count!: number;
    }
    expect(bodyProblems(Form, { name: 'long', count: 0 })?.errors).toEqual([
      { field: 'name', message: 'name must NOT have more than 3 characters' },
      { field: 'count', message: 'count must be >= 1' },
    ]);
    expect(bodyProblems(Form, { name: 7, count: 10 })?.errors).toEqual([
      { field: 'name', message: 'name must be text' },
      { field: 'count', message: 'count must be 9 at most' },
    ]);
  });

  it('refuses a body that is not an object without reading its members', () => {
    expect(bodyProblems(PasswordResetRequestDto, null)).toMatchObject({ malformed: true });
  });
});

describe('requireJsonObject', () => {
  it('takes a JSON object as it is', () => {
    const body = { name: 'Ada' };
    expect(requireJsonObject(body, 'application/json')).toBe(body);
  });

  it.each([
    [[], 'application/json', 'invalid-body', 'Invalid request body'],
    [null, 'application/json', 'invalid-body', 'Invalid request body'],
    ['text', MERGE_PATCH_MEDIA_TYPE, 'invalid-patch', 'Invalid merge patch'],
    [7, MERGE_PATCH_MEDIA_TYPE, 'invalid-patch', 'Invalid merge patch'],
  ])('refuses %j sent as %s: 400 %s', (body, mediaType, type, title) => {
    let thrown: unknown;
    try {
      requireJsonObject(body, mediaType);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BadRequestException);
    expect((thrown as BadRequestException).getResponse()).toEqual({
      type,
      title,
      detail: `The body must be a JSON object sent as ${mediaType}.`,
    });
  });
});
