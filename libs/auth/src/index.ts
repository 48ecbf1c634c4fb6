export * from './account-sessions';
export * from './argon2-password-hasher';
export * from './auth.module';
export * from './chronicle-auth.guard';
export * from './credentials';
export * from './current-principal.decorator';
export * from './hmac-access-token-codec';
export * from './public.decorator';
