import { INestApplicationContext } from '@nestjs/common';
import { cliContext, CommandContext, timeOrderedId } from '@chronicle/application';
import { ChronicleConfig } from '@chronicle/config';

/** CLI work is attributed to `cli:<OS user>`, with a fresh correlation id per invocation. */
export const cliRun = (): CommandContext => cliContext(`cli-${timeOrderedId()}`);

/** Runs `work` in an application context of the write side on `config`, closed after it. */
export type WithApp = <T>(
  config: ChronicleConfig,
  work: (app: INestApplicationContext) => Promise<T>,
) => Promise<T>;
