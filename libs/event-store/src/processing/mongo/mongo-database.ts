/** The database named in a connection string's path (`mongodb://host/name?...`), if any. */
export function databaseFromUri(uri: string): string | undefined {
  const match = /^mongodb(?:\+srv)?:\/\/[^/?]*\/([^?]+)/.exec(uri);
  return match ? decodeURIComponent(match[1]) : undefined;
}
