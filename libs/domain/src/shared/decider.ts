import { DomainEvent } from './event';

/**
 * An aggregate as pure functions, in the style of emmett's deciders: `decide` turns a command and
 * the current state into the events that record it (none when nothing changes), `evolve` folds an
 * event into the state, starting from `initialState`. States are values: evolve returns a new
 * state and never changes the one it was given (the repository keeps states).
 */
export interface Decider<S, C, E extends DomainEvent> {
  initialState: S;
  decide(command: C, state: S): E[];
  evolve(state: S, event: E): S;
}
