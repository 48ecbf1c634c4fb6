import { AUDIT_CSV_HEADER, auditCsvLine, csvField } from './audit-csv';
import { AuditRecord } from './audit-record';

describe('audit CSV', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\rlf', '"cr\rlf"'],
    ['', ''],
  ])('quotes %j as RFC 4180 wants', (value, field) => {
    expect(csvField(value)).toBe(field);
  });

  it.each([
    ['=HYPERLINK("http://evil")', `"'=HYPERLINK(""http://evil"")"`],
    ['+1+2', "'+1+2"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tcmd', "'\tcmd"],
  ])('neutralises the formula %j', (value, field) => {
    expect(csvField(value)).toBe(field);
  });

  it('writes null as an empty field and numbers as they are', () => {
    expect(csvField(null)).toBe('');
    expect(csvField(42)).toBe('42');
  });

  it('writes a header and one CRLF-terminated line per record, data as JSON', () => {
    const record: AuditRecord = {
      id: 'e-1',
      position: '17',
      stream: 'user-u-1',
      revision: 0,
      type: 'UserPatched.v1',
      occurredAt: '2026-11-24T03:00:00.000Z',
      recordedAt: '2026-11-24T03:00:00.001Z',
      actor: 'a-1',
      correlationId: 'c-1',
      causationId: null,
      clientRequestId: '=cmd',
      auth: { method: 'bearer', tokenId: 't-1' },
      data: { changes: { name: 'Ada, "the first"' } },
      hash: 'ab'.repeat(32),
    };
    expect(AUDIT_CSV_HEADER).toBe(
      'id,position,stream,revision,type,occurredAt,recordedAt,actor,correlationId,causationId,clientRequestId,' +
        'authMethod,authTokenId,data,hash,erased\r\n',
    );
    expect(auditCsvLine(record)).toBe(
      `e-1,17,user-u-1,0,UserPatched.v1,2026-11-24T03:00:00.000Z,2026-11-24T03:00:00.001Z,a-1,c-1,,'=cmd,` +
        `bearer,t-1,"{""changes"":{""name"":""Ada, \\""the first\\""""}}",${'ab'.repeat(32)},\r\n`,
    );
    expect(auditCsvLine({ ...record, erased: true, auth: null })).toMatch(/,,,"\{.*\}",(ab){32},true\r\n$/);
  });
});
