import { passwordResetRequestedV1ToV2 } from './account/password-reset-requested.upcaster';
import { EventUpcaster } from './shared/upcaster';
import { userRegisteredV1ToV2 } from './user/user-registered.upcaster';

/** Every upcaster, applied wherever stored events are read (the event store decorates its reads). */
export const EVENT_UPCASTERS: readonly EventUpcaster[] = [userRegisteredV1ToV2, passwordResetRequestedV1ToV2];
