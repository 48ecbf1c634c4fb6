/** A domain event as decide() returns it: a stable, versioned type name and its data. */
export interface DomainEvent<T extends string = string, D extends object = object> {
  type: T;
  data: D;
}

/** The state of an aggregate that has no events yet. */
export interface Initial {
  exists: false;
}
