import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';
import { EXPORT_SESSION_LIMIT, EXPORT_SESSION_RECORD_LIMIT } from '@chronicle/application';
import { AuditRecordDto } from '../audit/list-audit-events.dto';

const DATE_TIME = { format: 'date-time' } as const;
const NULLABLE_DATE_TIME = { oneOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] };
/** A personal value: text (a name, an address) or a number (an age); null once the subject is erased. */
const PERSONAL_VALUE = { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] };
const changes = (what: string): ApiPropertyOptions => ({
  type: [PersonalValueChangeDto],
  description: `Every value ${what} held, oldest first: the first is the value registered.`,
});

export class PersonalValueChangeDto {
  @ApiProperty({ ...PERSONAL_VALUE, description: 'The value set (null once the subject is erased).' })
  value!: string | number | null;

  @ApiProperty({ ...DATE_TIME, description: 'When the writer decided the change.' })
  occurredAt!: string;

  @ApiProperty({ ...DATE_TIME, description: 'When the event store recorded it.' })
  recordedAt!: string;

  @ApiProperty({ description: 'Who made it: an account id, `cli:<OS user>` or `system`.' })
  actor!: string;

  @ApiProperty({
    example: '1042',
    description: "The change's position in the history (as the audit shows it).",
  })
  position!: string;
}

export class ExportedSessionDto {
  @ApiProperty()
  id!: string;

  @ApiProperty({ example: 'basic', description: 'How the session began: Basic credentials.' })
  method!: string;

  @ApiProperty(DATE_TIME)
  startedAt!: string;

  @ApiProperty({ ...DATE_TIME, description: 'No token of the session works after it.' })
  expiresAt!: string;

  @ApiProperty({ ...NULLABLE_DATE_TIME, description: 'When it was ended; null if it never was.' })
  endedAt!: string | null;

  @ApiProperty({ minimum: 1, description: 'Access tokens issued in it, its first included.' })
  tokens!: number;
}

export class SentEmailDto {
  @ApiProperty({ enum: ['invitation', 'password-reset', 'password-change'] })
  kind!: string;

  @ApiProperty({ ...PERSONAL_VALUE, description: "The address it went to: the account's then." })
  to!: string | null;

  @ApiProperty(DATE_TIME)
  sentAt!: string;

  @ApiProperty(DATE_TIME)
  recordedAt!: string;
}

class UserSubjectDto {
  @ApiProperty({ enum: ['user'] })
  kind!: 'user';

  @ApiProperty({ description: "The user's id." })
  id!: string;
}

class CustomerSubjectDto {
  @ApiProperty({ enum: ['customer'] })
  kind!: 'customer';

  @ApiProperty({ description: "The customer's number." })
  id!: number;
}

class UserPersonalDataDto {
  @ApiProperty(changes('the name'))
  name!: PersonalValueChangeDto[];

  @ApiProperty(changes('the age'))
  age!: PersonalValueChangeDto[];

  @ApiProperty(changes("the account's e-mail address (none for a user without an account)"))
  email!: PersonalValueChangeDto[];
}

class CustomerPersonalDataDto {
  @ApiProperty(changes('the name'))
  name!: PersonalValueChangeDto[];

  @ApiProperty(changes('the e-mail address'))
  email!: PersonalValueChangeDto[];
}

class OmittedDto {
  @ApiProperty({
    minimum: 0,
    description: `Older sessions left out beyond the newest ${EXPORT_SESSION_LIMIT}.`,
  })
  sessions!: number;
}

const AUDIT: ApiPropertyOptions = {
  type: [AuditRecordDto],
  description:
    "The audit records of the subject's streams, oldest first, as GET /api/v1/audit/events gives them " +
    '(password and token hashes redacted).',
};

export class UserExportDto {
  @ApiProperty({ type: UserSubjectDto })
  subject!: UserSubjectDto;

  @ApiProperty({ ...DATE_TIME, description: 'When the export was read from the history.' })
  exportedAt!: string;

  @ApiProperty({ oneOf: [{ type: 'string' }, { type: 'null' }], description: "The user's account, if any." })
  accountId!: string | null;

  @ApiProperty({ type: UserPersonalDataDto })
  personalData!: UserPersonalDataDto;

  @ApiProperty({
    type: [ExportedSessionDto],
    description:
      `The account's sessions, oldest first: the newest, at most ${EXPORT_SESSION_LIMIT} sessions ` +
      `whose streams hold at most ${EXPORT_SESSION_RECORD_LIMIT} records in all.`,
  })
  sessions!: ExportedSessionDto[];

  @ApiProperty({ type: [SentEmailDto], description: 'The e-mails sent to the account, oldest first.' })
  emails!: SentEmailDto[];

  @ApiProperty(AUDIT)
  audit!: AuditRecordDto[];

  @ApiProperty({ type: OmittedDto })
  omitted!: OmittedDto;
}

export class CustomerExportDto {
  @ApiProperty({ type: CustomerSubjectDto })
  subject!: CustomerSubjectDto;

  @ApiProperty({ ...DATE_TIME, description: 'When the export was read from the history.' })
  exportedAt!: string;

  @ApiProperty({ type: CustomerPersonalDataDto })
  personalData!: CustomerPersonalDataDto;

  @ApiProperty(AUDIT)
  audit!: AuditRecordDto[];
}
