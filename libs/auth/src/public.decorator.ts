import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = 'chronicle:public';

/** The route needs no credentials (health, the unauthenticated password forms). */
export const Public = () => SetMetadata(IS_PUBLIC, true);
