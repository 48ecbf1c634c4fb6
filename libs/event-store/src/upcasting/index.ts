export * from './upcaster-registry';
export * from './upcasting-event-store';
