import { cliContext, CommandContext, timeOrderedId } from '@chronicle/application';

/** CLI work is attributed to `cli:<OS user>`, with a fresh correlation id per invocation. */
export const cliRun = (): CommandContext => cliContext(`cli-${timeOrderedId()}`);
