import Database from 'better-sqlite3';
import { prepareSchema, SCHEMA_VERSION } from './events-schema';

describe('prepareSchema', () => {
  it('refuses a store of a newer schema itself, for a caller that did not check first', () => {
    const db = new Database(':memory:');
    try {
      db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
      expect(() => prepareSchema(db, 'events.db')).toThrow(
        new Error(`events.db has schema version ${SCHEMA_VERSION + 1}; this build knows ${SCHEMA_VERSION}`),
      );
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION + 1);
    } finally {
      db.close();
    }
  });

  it('creates the current schema in an empty database, and leaves it as it is when opened again', () => {
    const db = new Database(':memory:');
    try {
      prepareSchema(db, 'events.db');
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      const tables = () =>
        db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
      const before = tables();
      expect(before).toContain('events');
      prepareSchema(db, 'events.db');
      expect(tables()).toEqual(before);
    } finally {
      db.close();
    }
  });
});
