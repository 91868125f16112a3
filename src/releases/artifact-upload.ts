import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import type { ArtifactUpload } from './releases.service';

/**
 * An artifact upload as both doors read it (docs/releases.md, Uploading artifacts), but for the filename the route
 * names in its path: the platform and arch of the query, the updater's signature header, the declared Content-Length
 * and the body, left unread for the service to stream.
 */
export const UploadedArtifact = createParamDecorator((_: unknown, ctx: ExecutionContext): Omit<ArtifactUpload, 'filename'> => {
  const req = ctx.switchToHttp().getRequest<Request>();
  const declared = req.headers['content-length'];
  return {
    platform: req.query.platform,
    arch: req.query.arch,
    signature: req.headers['x-artifact-signature'] as string | undefined,
    declaredLength: declared === undefined ? undefined : Number(declared),
    body: req,
  };
});
