// The e2e-doubles-quirks jest project: the doubles backend, the EventStoreDB double with every
// checkpoint quirk of real servers (see E2E_ESDB_QUIRKS in backend.ts).
process.env.E2E_BACKEND = 'doubles';
process.env.E2E_ESDB_QUIRKS ??= 'all';
