import { customerStreamName, MAX_CUSTOMER_NUMBER, parseCustomerNumber } from './customer.events';

describe('parseCustomerNumber', () => {
  it('reads 1 to MAX_CUSTOMER_NUMBER written in decimal without a leading zero', () => {
    expect(parseCustomerNumber('1')).toBe(1);
    expect(parseCustomerNumber('9')).toBe(9);
    expect(parseCustomerNumber('10')).toBe(10);
    expect(parseCustomerNumber('999999999999999')).toBe(999_999_999_999_999);
    expect(parseCustomerNumber(String(MAX_CUSTOMER_NUMBER))).toBe(MAX_CUSTOMER_NUMBER);
  });

  it('keeps the bound the API publishes (fifteen digits), within the safe integers', () => {
    expect(MAX_CUSTOMER_NUMBER).toBe(999_999_999_999_999);
    expect(Number.isSafeInteger(MAX_CUSTOMER_NUMBER)).toBe(true);
  });

  it.each([
    ['zero', '0'],
    ['a leading zero', '07'],
    ['one past the bound', '1000000000000000'],
    ['the largest safe integer', String(Number.MAX_SAFE_INTEGER)],
    ['one past the safe integers', '9007199254740993'],
    ['hundreds of digits', '9'.repeat(400)],
    ['a sign', '+7'],
    ['a negative number', '-7'],
    ['a fraction', '7.0'],
    ['an exponent', '1e3'],
    ['hexadecimal', '0x1f'],
    ['white space', ' 7'],
    ['a trailing newline', '7\n'],
    ['non-ASCII digits', '٧'],
    ['nothing', ''],
    ['a stream name', 'customer-7'],
  ])('names no customer with %s (%p)', (_what, text) => {
    expect(parseCustomerNumber(text)).toBeUndefined();
  });

  it('reads back the number of every customer stream name', () => {
    for (const customerId of [1, 42, MAX_CUSTOMER_NUMBER]) {
      expect(parseCustomerNumber(customerStreamName(customerId).slice('customer-'.length))).toBe(customerId);
    }
  });
});
