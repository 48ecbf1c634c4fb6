// Selects the production shape for the e2e harness (test-app.ts) in the e2e-doubles jest project.
process.env.E2E_BACKEND = 'doubles';
