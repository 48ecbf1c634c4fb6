import { DomainEvent } from './event';

interface Decider<S, C, E extends DomainEvent> {
  initialState: S;
  decide(command: C, state: S): E[];
  evolve(state: S, event: E): S;
}

/** given(events).when(command) then events or an error, in the style of emmett's DeciderSpecification. */
export function specFor<S, C, E extends DomainEvent>(decider: Decider<S, C, E>) {
  return (given: E[]) => {
    const state = given.reduce((current, event) => decider.evolve(current, event), decider.initialState);
    return {
      state,
      when: (command: C) => ({
        then: (expected: E[]) => expect(decider.decide(command, state)).toEqual(expected),
        thenThrows: (error: unknown) => expect(() => decider.decide(command, state)).toThrow(error as Error),
        /** The error's class and what a client is told of it: code, message, field errors. */
        thenFails: (type: new (...args: any[]) => Error, details: Record<string, unknown>) => {
          let thrown: unknown;
          try {
            decider.decide(command, state);
          } catch (error) {
            thrown = error;
          }
          expect(thrown).toBeInstanceOf(type);
          expect(thrown).toMatchObject(details);
        },
      }),
    };
  };
}
