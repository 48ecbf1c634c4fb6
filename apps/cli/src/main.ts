import 'reflect-metadata';
import { unsupportedRuntime } from '@chronicle/config';
import { printError } from './output';
import { runCli } from './run-cli';

const refusal = unsupportedRuntime(process.versions.node);
if (refusal !== null) {
  printError({ error: 'unsupported-runtime', message: refusal });
  process.exitCode = 78;
} else {
  void runCli(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
