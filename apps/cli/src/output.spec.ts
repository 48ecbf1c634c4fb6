import { jsonLine } from './output';

describe('jsonLine', () => {
  it('escapes what could steer a terminal, and keeps the same value', () => {
    const value = { name: 'A\u009b2J \u202eevil\u2066 caf\u00e9 \u{1F600}', n: 1 };
    const line = jsonLine(value);
    expect(line.endsWith('\n')).toBe(true);
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect(line.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(line).toContain('\\u009b');
    expect(line).toContain('caf\u00e9 \u{1F600}');
    expect(JSON.parse(line)).toEqual(value);
  });
});
