import { customersProjection } from './customers.projection';
import { Projection } from './projection';
import { usersProjection } from './users.projection';

/** Every projection the read models are built from, fed by one subscription. */
export const ALL_PROJECTIONS: readonly Projection[] = [customersProjection, usersProjection];
