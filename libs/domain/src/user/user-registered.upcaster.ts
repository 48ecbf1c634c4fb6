import { EventUpcaster } from '../shared/upcaster';

/**
 * UserRegistered.v1 → v2: `createdon` normalised to RFC 3339 UTC with milliseconds, so that users
 * registered by older writers (`2026-03-01T10:00:00Z`, `2026-03-01T11:00:00+01:00`) compare, sort
 * and display like everyone else. A value no date parser understands is kept as it was: the
 * history cannot be corrected, only read.
 */
export const userRegisteredV1ToV2: EventUpcaster = {
  from: 'UserRegistered.v1',
  to: 'UserRegistered.v2',
  upcast(data) {
    const createdon = data.createdon;
    if (typeof createdon !== 'string') return data;
    const ms = Date.parse(createdon);
    return Number.isNaN(ms) ? data : { ...data, createdon: new Date(ms).toISOString() };
  },
};
