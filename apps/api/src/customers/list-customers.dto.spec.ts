import { BadRequestException } from '@nestjs/common';
import { queryValidationPipe } from '../http/validation';
import { ListCustomersQueryDto, wellFormedListCustomersQuery } from './list-customers.dto';

const pipe = queryValidationPipe();

/** What the Nest route's validation pipe makes of a query string, or the error it raises. */
async function throughPipe(query: Record<string, unknown>): Promise<Record<string, unknown> | Error> {
  try {
    const dto = (await pipe.transform(
      { ...query },
      { type: 'query', metatype: ListCustomersQueryDto },
    )) as object;
    return { ...dto };
  } catch (error) {
    return error as Error;
  }
}

const VALUES: unknown[] = [
  '1',
  '2',
  '0',
  '-3',
  '1000',
  '1001',
  '999999999999999',
  '1.5',
  '1e3',
  ' 7',
  '',
  'x',
  ['1', '2'],
];

describe('wellFormedListCustomersQuery', () => {
  it('accepts only what the DTO accepts, with the same values', async () => {
    let accepted = 0;
    for (const name of ['page', 'gt', 'lt', 'maxpagesize', 'access_token', 'sort']) {
      for (const value of VALUES) {
        for (const others of [
          {},
          { page: '3', maxpagesize: '50' },
          { gt: '10', lt: '20', access_token: 't' },
        ]) {
          const query = { ...others, [name]: value };
          const fast = wellFormedListCustomersQuery(query);
          if (fast === null) continue;
          accepted++;
          expect(await throughPipe(query)).toEqual({ ...fast });
        }
      }
    }
    expect(accepted).toBeGreaterThan(60);
  });

  it('takes the usual queries itself and leaves every invalid one to the DTO', async () => {
    expect(wellFormedListCustomersQuery({})).toEqual({});
    expect(wellFormedListCustomersQuery({ maxpagesize: '100', page: '7', gt: '-5', lt: '90' })).toEqual({
      maxpagesize: 100,
      page: 7,
      gt: -5,
      lt: 90,
    });
    for (const query of [
      { page: '0' },
      { maxpagesize: '0' },
      { gt: '1.5' },
      { lt: ['1', '2'] },
      { sort: 'id' },
    ]) {
      expect(wellFormedListCustomersQuery(query)).toBeNull();
      expect(await throughPipe(query)).toBeInstanceOf(BadRequestException);
    }
  });
});
