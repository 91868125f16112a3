import type { Request, Response } from 'express';
import { AppError, FieldError } from '../../common/errors/app-error';
import { asFormBody, FormBody, formText } from '../../html/forms';
import { checkDto } from './check-dto';
import { setFlash } from './view-locals';

/** Field errors as one line of the page's message. */
export const describeErrors = (errors: FieldError[]) => errors.map((e) => e.message).join('; ');

/** The posted form of an action, read as the admin API reads its body (docs/dashboard.md, Forms). */
export class PostedForm {
  readonly body: FormBody;

  constructor(req: Request) {
    this.body = asFormBody(req.body);
  }

  /** One field, trimmed ('' when missing). */
  text(name: string): string {
    return formText(this.body, name);
  }

  /**
   * The named fields checked by the admin API's DTO: an optional field left empty is not sent (as the API's client
   * would leave it out), a `required` one always is, so its message is the API's own. A refusal is the page's message.
   */
  async checked<T>(dto: new () => T, names: readonly string[], required: readonly string[] = []): Promise<T> {
    const plain: Record<string, string> = {};
    for (const name of names) if (this.text(name) || required.includes(name)) plain[name] = this.text(name);
    const { value, errors } = await checkDto(dto, plain);
    if (!value) throw AppError.validation(errors);
    return value;
  }
}

/**
 * An action posted from a page (docs/dashboard.md, Messages after an action): post/redirect/get, the work's sentence (or
 * why the service refused) shown as the message on `back`, where the page script moves the focus to it. An unknown id
 * (404) or a server error stays an error page.
 */
export async function formAction(req: Request, res: Response, back: string, work: (form: PostedForm) => Promise<string>): Promise<void> {
  try {
    setFlash(req, 'success', await work(new PostedForm(req)));
  } catch (err) {
    if (!(err instanceof AppError) || err.status === 404 || err.status >= 500) throw err;
    const fields = err.details?.fields as FieldError[] | undefined;
    setFlash(req, 'error', fields?.length ? describeErrors(fields) : err.message);
  }
  res.redirect(303, back);
}
