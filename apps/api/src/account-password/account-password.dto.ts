import { IsEmail, IsString, Length, Matches, MaxLength } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema';
import { RESET_TOKEN_PATTERN } from '@chronicle/application';
import {
  EMAIL_MAX_LENGTH,
  PASSWORD_CHARACTERS,
  PASSWORD_MAX_LENGTH,
  PASSWORD_MIN_LENGTH,
} from '@chronicle/domain';

// Each form is checked against the JSON schema derived from these rules (dtoSchemaOf), and the
// document states that same schema: the one declaration of what each form takes.

const NEW_PASSWORD_RULE = `new must be ${PASSWORD_MIN_LENGTH} to ${PASSWORD_MAX_LENGTH} characters long`;
const NEW_PASSWORD = {
  description: 'Counted in characters; neither the e-mail address nor a common password.',
};

/** Form 1: ask for a reset e-mail (no authentication). */
export class PasswordResetRequestDto {
  @IsString()
  @MaxLength(EMAIL_MAX_LENGTH, { message: `email must be at most ${EMAIL_MAX_LENGTH} characters long` })
  @IsEmail({}, { message: 'email must be an e-mail address' })
  @JSONSchema({ examples: ['ada@example.com'] })
  email!: string;
}

/** Form 2: complete a reset with the token from the e-mail (no authentication). */
export class PasswordResetCompletionDto {
  // A token of any other shape is no token of ours: the controller answers it as invalid-reset-token.
  @IsString()
  @Matches(RESET_TOKEN_PATTERN)
  @JSONSchema({ description: 'The token from the reset link.' })
  token!: string;

  @IsString()
  @Length(PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH, { message: NEW_PASSWORD_RULE })
  @Matches(PASSWORD_CHARACTERS, { message: 'new must not contain control characters' })
  @JSONSchema(NEW_PASSWORD)
  new!: string;
}

/** Form 3: change the password of the authenticated account. */
export class PasswordChangeDto {
  @IsString()
  old!: string;

  @IsString()
  @Length(PASSWORD_MIN_LENGTH, PASSWORD_MAX_LENGTH, { message: NEW_PASSWORD_RULE })
  @Matches(PASSWORD_CHARACTERS, { message: 'new must not contain control characters' })
  @JSONSchema(NEW_PASSWORD)
  new!: string;
}

/** Every form, in the order of PasswordForm. */
export const PASSWORD_FORMS = {
  request: PasswordResetRequestDto,
  completion: PasswordResetCompletionDto,
  change: PasswordChangeDto,
} as const;

export type PasswordForm = keyof typeof PASSWORD_FORMS;

/** A Map, not an object: a body's member names must never find inherited ones (`constructor`). */
const FORMS = new Map<string, PasswordForm>([
  ['email', 'request'],
  ['new,token', 'completion'],
  ['new,old', 'change'],
]);

/** The form a body is, by its exact set of own members; null for anything else. */
export function passwordFormOf(body: unknown): PasswordForm | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  return FORMS.get(Object.keys(body).sort().join(',')) ?? null;
}
