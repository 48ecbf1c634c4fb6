import { BadRequestException } from '@nestjs/common';
import { ListAuditEventsQueryDto } from '../audit/list-audit-events.dto';
import { customerListParameters, ListCustomersQueryDto } from '../customers/list-customers.dto';
import { QueryValidationPipe } from './validation';

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
  it.each([{}, { page: '1' }, { page: '007', gt: '-5', lt: '99999999999999999999999', maxpagesize: '5000' }])(
    'lets %j through unchanged',
    (query) => {
      expect(check(query)).toBe(query);
    },
  );

  it.each([
    [{ page: '0' }, 'page', 'page must be an integer of 1 or more'],
    [{ page: '1e3' }, 'page', 'page must be an integer of 1 or more'],
    [{ gt: ' 7' }, 'gt', 'gt must be an integer'],
    [{ lt: '0x10' }, 'lt', 'lt must be an integer'],
    [{ maxpagesize: '' }, 'maxpagesize', 'maxpagesize must be an integer of 1 or more'],
    [{ gt: ['1', '2'] }, 'gt', 'gt must be given once, as a single value'],
    [{ sort: 'id' }, 'sort', 'sort is not a parameter of this endpoint'],
    [{ constructor: '1' }, 'constructor', 'constructor is not a parameter of this endpoint'],
  ])('refuses %j, naming %s with its declared message', (query, field, message) => {
    expect(refusal(query).errors).toEqual([{ field, message }]);
  });

  it('lists every invalid parameter', () => {
    expect(
      refusal({ page: 'x', lt: 'y' })
        .errors.map((error) => error.field)
        .sort(),
    ).toEqual(['lt', 'page']);
  });

  it('holds the audit limit to 1..1000', () => {
    expect(check({ limit: '1000' }, ListAuditEventsQueryDto)).toEqual({ limit: '1000' });
    expect(check({ limit: '1' }, ListAuditEventsQueryDto)).toEqual({ limit: '1' });
    for (const limit of ['0', '1001', '-1', '10000']) {
      expect(refusal({ limit }, ListAuditEventsQueryDto).errors).toEqual([
        { field: 'limit', message: 'limit must be an integer from 1 to 1000' },
      ]);
    }
  });

  it('leaves parameters other than a query DTO alone', () => {
    expect(pipe.transform('x', { type: 'param', metatype: String, data: 'userId' })).toBe('x');
  });
});

describe('customerListParameters', () => {
  it('types the checked strings, lowering the page size and holding huge numbers at a safe bound', () => {
    expect(customerListParameters({})).toEqual({ page: 1, pageSize: 100 });
    expect(customerListParameters({ page: '3', maxpagesize: '5000', gt: '-4', lt: '1'.repeat(30) })).toEqual({
      page: 3,
      pageSize: 1000,
      maxpagesize: 5000,
      gt: -4,
      lt: Number.MAX_SAFE_INTEGER,
    });
  });
});
