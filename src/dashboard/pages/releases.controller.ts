import { createParamDecorator, type ExecutionContext, Get, HttpCode, Param, Post, Put, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Actor, actorFromRequest, CurrentActor, type RequestWithActor } from '../../common/auth/actor';
import { AppError, type FieldError } from '../../common/errors/app-error';
import { StreamedBodyRoute } from '../../common/http/raw-body';
import { CreateReleaseDto, ReleaseArtifactDto } from '../../releases/dto/release.dto';
import { ARCHES, PLATFORMS } from '../../releases/release-rules';
import { RELEASE_CHANNELS } from '../../releases/release.entities';
import { type ArtifactUpload, ReleasesService } from '../../releases/releases.service';
import { UploadedArtifact } from '../../releases/artifact-upload';
import { checkDto } from '../http/check-dto';
import { DashboardController } from '../http/dashboard-controller.decorator';
import { DashboardIdPipe } from '../http/id-param';
import { asFormBody, formText } from '../../html/forms';
import { setFlash } from '../http/view-locals';

/** What a form posted to one release works with: its product's code, its id (404 unless a positive 32-bit integer), who acts. */
interface ReleasePost {
  code: string;
  id: number;
  req: Request;
  actor: Actor;
}

const ReleasePosted = createParamDecorator((_: unknown, ctx: ExecutionContext): ReleasePost => {
  const req = ctx.switchToHttp().getRequest<RequestWithActor>();
  return { code: String(req.params.code), id: new DashboardIdPipe().transform(String(req.params.id)), req, actor: actorFromRequest(req) };
});

interface DraftForm {
  version: string;
  channel: string;
  notes: string;
  required_features: string;
}

/**
 * A product's releases (docs/dashboard.md, Releases): drafts, uploads with progress (the page script PUTs the file
 * as the request body, streamed like the admin API's upload), publish, yank, delete, downloads per release and day.
 * Every action is the admin API's use case in ReleasesService.
 */
@DashboardController('products/:code/releases')
export class ReleasesPageController {
  constructor(private readonly releases: ReleasesService) {}

  @Get()
  async list(@Param('code') code: string, @Res() res: Response): Promise<void> {
    await this.render(res, code, 200);
  }

  @Post()
  async create(@Param('code') code: string, @Req() req: Request, @Res() res: Response, @CurrentActor() actor: Actor): Promise<void> {
    const body = asFormBody(req.body);
    const form: DraftForm = {
      version: formText(body, 'version'),
      channel: formText(body, 'channel') || 'stable',
      notes: formText(body, 'notes'),
      required_features: formText(body, 'required_features'),
    };
    const features = form.required_features
      .split(/[\s,]+/)
      .map((f) => f.trim())
      .filter(Boolean);
    const { value, errors } = await checkDto(CreateReleaseDto, {
      version: form.version,
      channel: form.channel,
      notes: form.notes,
      required_features: features,
    });
    if (!value) return this.render(res, code, 400, { form, errors });
    let release;
    try {
      release = await this.releases.create(code, value, actor);
    } catch (err) {
      // A duplicate version is the form's error, shown beside the form (as the API's 409).
      if (err instanceof AppError && err.status === 409)
        return this.render(res, code, 409, { form, errors: [{ field: 'version', message: err.message }] });
      // A feature the product does not offer: beside the form too.
      if (err instanceof AppError && err.status === 400 && Array.isArray(err.details?.fields))
        return this.render(res, code, 400, { form, errors: err.details.fields as FieldError[] });
      throw err;
    }
    setFlash(req, 'success', `Draft ${release.version} created: upload its files, then publish it.`);
    res.redirect(303, `/products/${encodeURIComponent(code)}/releases`);
  }

  @Put(':id/artifacts/:filename')
  @StreamedBodyRoute()
  @HttpCode(201)
  async upload(
    @Param('code') code: string,
    @Param('id', DashboardIdPipe) id: number,
    @Param('filename') filename: string,
    @UploadedArtifact() upload: Omit<ArtifactUpload, 'filename'>,
    @CurrentActor() actor: Actor,
  ): Promise<ReleaseArtifactDto> {
    try {
      await this.releases.releaseOfProduct(code, id);
    } catch (err) {
      // Refused before the body is read: drain what the browser still sends, so it reads the answer.
      upload.body.resume();
      throw err;
    }
    return this.releases.upload(id, { ...upload, filename, signature: upload.signature || undefined }, actor);
  }

  @Post(':id/publish')
  publish(@ReleasePosted() posted: ReleasePost, @Res() res: Response) {
    return this.change(posted, res, async (id, actor) => `${(await this.releases.publish(id, actor)).version} is published.`);
  }

  @Post(':id/yank')
  yank(@ReleasePosted() posted: ReleasePost, @Res() res: Response) {
    return this.change(
      posted,
      res,
      async (id, actor) => `${(await this.releases.yank(id, actor)).version} is yanked: no check, feed or link offers it any more.`,
    );
  }

  @Post(':id/delete')
  remove(@ReleasePosted() posted: ReleasePost, @Res() res: Response) {
    return this.change(posted, res, async (id, actor) => {
      await this.releases.remove(id, actor);
      return 'The draft is deleted.';
    });
  }

  /** A change to one of the product's releases (404 for another product's), then the list with its sentence. */
  private async change(posted: ReleasePost, res: Response, work: (id: number, actor: Actor) => Promise<string>): Promise<void> {
    await this.releases.releaseOfProduct(posted.code, posted.id);
    this.backToList(posted.req, res, posted.code, await work(posted.id, posted.actor));
  }

  /** After a change: the product's releases again, with what happened in the flash. */
  private backToList(req: Request, res: Response, code: string, message: string): void {
    setFlash(req, 'success', message);
    res.redirect(303, `/products/${encodeURIComponent(code)}/releases`);
  }

  private async render(res: Response, code: string, status: number, failed?: { form: DraftForm; errors: FieldError[] }): Promise<void> {
    const product = await this.releases.productInScope(code, null);
    const releases = await this.releases.list(code);
    const withDays = await Promise.all(
      releases.map(async (r) => ({ ...r, days: r.state === 'draft' ? [] : (await this.releases.downloads(r.id)).days })),
    );
    res.status(status).render('products/releases', {
      title: `Releases of ${product.code}`,
      nav: 'products',
      product: { code: product.code, name: product.name, update_policy: product.updatePolicy },
      releases: withDays.map((r) => ({ ...r, isDraft: r.state === 'draft', isPublished: r.state === 'published' })),
      channels: RELEASE_CHANNELS,
      platforms: PLATFORMS,
      arches: ARCHES,
      form: failed?.form ?? { version: '', channel: 'stable', notes: '', required_features: '' },
      errors: failed?.errors ?? [],
    });
  }
}
