export type paths = any;
