import { unsupportedRuntime } from './supported-runtime';

describe('unsupportedRuntime', () => {
  it.each(['22.0.0', '22.23.3', '24.21.0', 'v24.1.0', '26.10.0'])('runs on %s', (version) => {
    expect(unsupportedRuntime(version)).toBeNull();
  });

  it.each(['20.20.2', 'v21.7.3', '18.0.0', 'not a version'])(
    'refuses %s, naming it and the way out',
    (version) => {
      expect(unsupportedRuntime(version)).toBe(
        `Chronicle runs on Node.js 22 or 24, not ${version}: start it through npm (npm start, npm run cli), ` +
          'which runs the Node.js 24 that npm ci installs, or install Node.js 24',
      );
    },
  );
});
