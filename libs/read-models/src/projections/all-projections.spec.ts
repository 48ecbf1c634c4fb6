import { EVENT_SCHEMAS } from '@chronicle/domain';
import { position } from '@chronicle/event-store';
import { ALL_PROJECTIONS } from './all-projections';

describe('ALL_PROJECTIONS', () => {
  it.each(ALL_PROJECTIONS.map((projection) => [projection.name, projection] as const))(
    '%s declares known event types and makes no change of any other',
    (_name, projection) => {
      for (const type of projection.eventTypes) expect(Object.keys(EVENT_SCHEMAS)).toContain(type);
      for (const type of Object.keys(EVENT_SCHEMAS).filter(
        (known) => !projection.eventTypes.includes(known),
      )) {
        const event = {
          id: 'e',
          type,
          stream: 's',
          revision: 0,
          position: position(1),
          data: {},
          metadata: {},
        };
        expect(projection.project(event as never)).toEqual([]);
      }
    },
  );
});
