import { AuditRecord } from '@chronicle/application';
import { auditTable, outputWidth } from './audit-table';

const record = (position: number): AuditRecord =>
  ({
    position: String(position),
    occurredAt: '2026-11-24T00:00:00.000Z',
    stream: 'user-0b7c1f6e-1111-2222-3333-444455556666',
    revision: position,
    type: 'UserPatched.v1',
    actor: '0b7c1f6e-1111-2222-3333-444455556666',
    correlationId: 'cli-0b7c1f6e-1111-2222-3333-444455556666',
    data: { name: 'x'.repeat(100) },
  }) as unknown as AuditRecord;

const widest = (table: string) => Math.max(...table.split('\n').map((line) => line.length));

describe('auditTable', () => {
  const records = [record(1), record(22), record(333)];

  it.each([60, 80, 120, 160])('fits a terminal %i columns wide', (width) => {
    const table = auditTable(records, width);
    expect(widest(table)).toBeLessThanOrEqual(width);
    // It uses the room it has rather than cutting everything to the minimum.
    expect(widest(table)).toBeGreaterThan(width - 8);
    expect(table).toMatch(/^3 records$/m);
  });

  it('keeps whole values that fit, cutting long ones with an ellipsis', () => {
    const table = auditTable(records, 200);
    expect(table).toContain('UserPatched.v1');
    expect(table).toContain('2026-11-24T00:00:00.000Z');
    expect(table).toContain('…');
  });

  it('prints no character that could steer the terminal: C1 and bidirectional controls are escaped', () => {
    const hostile = {
      ...record(4),
      actor: 'evil\u202e\u009b2J',
      data: { userAgent: 'A\u009b2J\u001b[31m' },
    } as unknown as AuditRecord;
    const table = auditTable([hostile], null);
    // eslint-disable-next-line no-control-regex -- control characters are what it looks for
    expect(table).not.toMatch(/[\u0080-\u009f\u202e\u001b]/);
    expect(table).toContain('A\\u009b2J');
  });

  it('without a width, keeps each column to its cap', () => {
    expect(widest(auditTable(records, null))).toBe(247);
  });

  it('takes the width from a terminal, else COLUMNS, else none', () => {
    expect(outputWidth({ isTTY: true, columns: 91 }, { COLUMNS: '70' })).toBe(91);
    expect(outputWidth({ isTTY: false }, { COLUMNS: '70' })).toBe(70);
    expect(outputWidth({}, { COLUMNS: 'wide' })).toBeNull();
    expect(outputWidth({}, {})).toBeNull();
  });
});
