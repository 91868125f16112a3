import { ApiBadRequestResponse } from '@nestjs/swagger';
import { ErrorResponseDto } from '../common/errors/error-response.dto';

/**
 * The 400 of a route that takes an armored request (docs/licences.md, Offline use and air-gapped machines; docs/relay.md,
 * Issuing a pool): the request is malformed (its markers, base64 or JSON, or `fields` as `request.<field>`), or the first
 * of `checks` fails.
 */
export const ApiArmoredRequestRefusal = (fields: string, checks: string) =>
  ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: `VALIDATION_ERROR (malformed request: markers, base64, JSON, or ${fields} as request.<field>), or first failing of ${checks}`,
  });
