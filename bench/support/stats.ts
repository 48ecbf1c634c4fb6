/** Median with the range it came from: one figure per benchmark round. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new RangeError('No values to summarise');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1] };
}

/** How far the rounds spread around their median: (max - min) / median. */
export function variation(value: Spread): number {
  return value.median === 0 ? 0 : (value.max - value.min) / value.median;
}

/** The value below which `fraction` of the samples fall (nearest rank). */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) throw new RangeError('No values to summarise');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank];
}

/** Rounds for display and for the JSON: figures are never more precise than the noise. */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const magnitude = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 1 ? 2 : digits;
  const factor = 10 ** magnitude;
  return Math.round(value * factor) / factor;
}
