export * from './history-chain';
export * from './chain-verifier';
export * from './history-rewrite';
export * from './history-copy';
