import { applyDecorators, Delete, HttpCode } from '@nestjs/common';
import { ApiNoContentResponse, ApiNotFoundResponse, type ApiResponseOptions } from '@nestjs/swagger';

/** An admin API route that deletes: 204 without a body once deleted, else the 404 `notFound` describes. */
export const DeleteRoute = (path: string, notFound: ApiResponseOptions) =>
  applyDecorators(Delete(path), HttpCode(204), ApiNoContentResponse({ description: 'Deleted' }), ApiNotFoundResponse(notFound));
