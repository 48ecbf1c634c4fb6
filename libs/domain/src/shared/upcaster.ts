/**
 * Maps the data of a stored event of type `from` to the data of type `to`. Upcasters are pure
 * and total: the history cannot be rewritten, so every stored event must upcast.
 */
export interface EventUpcaster {
  readonly from: string;
  readonly to: string;
  upcast(data: Record<string, unknown>): Record<string, unknown>;
}
