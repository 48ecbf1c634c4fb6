// Preloaded (-r) into an API process to run its clock CLOCK_OFFSET_MS
// ahead: every Date.now() and `new Date()` without arguments, as a host whose clock is off gives them.
const offset = Number(process.env.CLOCK_OFFSET_MS ?? '0');
const RealDate = Date;

class SkewedDate extends RealDate {
  constructor(...args: ConstructorParameters<DateConstructor> | []) {
    if (args.length === 0) super(RealDate.now() + offset);
    else super(...args);
  }

  static override now(): number {
    return RealDate.now() + offset;
  }
}

globalThis.Date = SkewedDate as DateConstructor;
