import {
  MongoClient,
  type MongoClientOptions,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerSelectionError,
  MongoWriteConcernError,
} from 'mongodb';
import { recognizeUnavailableErrors } from '../../store-unavailable';

/**
 * A MongoDB client for one of our adapters. Its errors of a server out of reach, frozen or
 * without a majority are then answered 503 by the API, like every store outage.
 */
export function mongoClient(uri: string, options: MongoClientOptions): MongoClient {
  recognizeUnavailableErrors([
    MongoNetworkError,
    MongoServerSelectionError,
    MongoOperationTimeoutError,
    MongoNotConnectedError,
    MongoWriteConcernError,
  ]);
  return new MongoClient(uri, options);
}
