import { ApiProperty } from '@nestjs/swagger';
import { IsEmail, IsString, MaxLength } from 'class-validator';

/** Form 1: ask for a reset e-mail (no authentication). */
export class PasswordResetRequestDto {
  @ApiProperty({ example: 'ada@example.com' })
  @IsString()
  @MaxLength(254)
  @IsEmail({}, { message: 'email must be an e-mail address' })
  email!: string;
}

/** Form 2: complete a reset with the token from the e-mail (no authentication). */
export class PasswordResetCompletionDto {
  // No length rule here: a token of any other shape is an invalid-reset-token (400), decided
  // where tokens are parsed.
  @ApiProperty({ description: 'The token from the reset link.' })
  @IsString()
  token!: string;

  @ApiProperty({ minLength: 8, maxLength: 256 })
  @IsString()
  new!: string;
}

/** Form 3: change the password of the authenticated account. */
export class PasswordChangeDto {
  @ApiProperty()
  @IsString()
  old!: string;

  @ApiProperty({ minLength: 8, maxLength: 256 })
  @IsString()
  new!: string;
}

export type PasswordForm = 'request' | 'completion' | 'change';

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
