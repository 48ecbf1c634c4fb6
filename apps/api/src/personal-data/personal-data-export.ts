import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, getSchemaPath } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { exportFileName, PersonalDataExport } from '@chronicle/application';
import { AuditRecordDto } from '../audit/list-audit-events.dto';
import { RepresentationOffers } from '../http/representation-offers';
import { ExportedSessionDto, PersonalValueChangeDto, SentEmailDto } from './personal-data-export.dto';

/** An export is JSON (for application/json, any type, or no Accept); anything else is a 406. */
export const EXPORT_REPRESENTATIONS = new RepresentationOffers<'json'>([['application/json', 'json']]);

/** The 200 of an export route, with the document's schema and its download name. */
export const ApiExportResponse = (document: Type, what: string) =>
  applyDecorators(
    ApiExtraModels(document, PersonalValueChangeDto, ExportedSessionDto, SentEmailDto, AuditRecordDto),
    ApiOkResponse({
      description: `${what}, built from the history (docs/personal-data-export.md describes the document).`,
      content: { 'application/json': { schema: { $ref: getSchemaPath(document) } } },
      headers: {
        'Content-Disposition': {
          description:
            'attachment, with a file name naming the subject, e.g. chronicle-user-<id>-export.json.',
          schema: { type: 'string' },
        },
      },
    }),
  );

/** The export as a JSON download. */
export function sendExport(reply: FastifyReply, document: PersonalDataExport): Buffer {
  void reply
    .type('application/json; charset=utf-8')
    .header('content-disposition', `attachment; filename="${exportFileName(document.subject)}"`);
  return Buffer.from(JSON.stringify(document));
}
