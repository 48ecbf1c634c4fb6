export * from './history-chain';
export * from './chain-verifier';
