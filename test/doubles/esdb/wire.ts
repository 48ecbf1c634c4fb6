/**
 * Conversions between the double's log and EventStoreDB's protobuf messages. The message classes
 * are the client's own generated ones: its serialisers reject any other instance.
 */
import { ReadResp } from '@eventstore/db-client/generated/streams_pb';
import { StreamIdentifier, UUID } from '@eventstore/db-client/generated/shared_pb';
import { LogPosition, StoredEvent } from './esdb-log';

export function streamName(identifier: StreamIdentifier | undefined): string {
  if (!identifier) throw new Error('stream_identifier is required');
  return Buffer.from(identifier.getStreamName_asU8()).toString('utf8');
}

export function streamIdentifier(name: string): StreamIdentifier {
  return new StreamIdentifier().setStreamName(Buffer.from(name, 'utf8'));
}

/** Accepts both UUID encodings the protocol allows; returns the canonical lower-case text. */
export function parseUuid(uuid: UUID | undefined): string {
  if (!uuid) throw new Error('id is required');
  if (uuid.hasStructured()) {
    const structured = uuid.getStructured()!;
    const hex =
      BigInt.asUintN(64, BigInt(structured.getMostSignificantBits())).toString(16).padStart(16, '0') +
      BigInt.asUintN(64, BigInt(structured.getLeastSignificantBits())).toString(16).padStart(16, '0');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  return uuid.getString().toLowerCase();
}

export function formatUuid(id: string, structured: boolean): UUID {
  if (!structured) return new UUID().setString(id);
  const hex = id.replace(/-/g, '');
  return new UUID().setStructured(
    new UUID.Structured()
      .setMostSignificantBits(BigInt.asIntN(64, BigInt(`0x${hex.slice(0, 16)}`)).toString())
      .setLeastSignificantBits(BigInt.asIntN(64, BigInt(`0x${hex.slice(16)}`)).toString()),
  );
}

export function parsePosition(commit: string, prepare: string): LogPosition {
  return { commit: BigInt(commit), prepare: BigInt(prepare) };
}

export function readEvent(event: StoredEvent, structuredIds: boolean): ReadResp {
  const recorded = new ReadResp.ReadEvent.RecordedEvent()
    .setId(formatUuid(event.id, structuredIds))
    .setStreamIdentifier(streamIdentifier(event.stream))
    .setStreamRevision(event.revision.toString())
    .setCommitPosition(event.position.commit.toString())
    .setPreparePosition(event.position.prepare.toString())
    .setData(event.data)
    .setCustomMetadata(event.customMetadata);
  recorded
    .getMetadataMap()
    .set('type', event.type)
    .set('content-type', event.contentType)
    .set('created', event.created.toString());
  const wrapper = new ReadResp.ReadEvent()
    .setEvent(recorded)
    .setCommitPosition(event.position.commit.toString());
  return new ReadResp().setEvent(wrapper);
}
