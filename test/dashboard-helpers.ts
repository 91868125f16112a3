import type { Server } from 'node:http';
import request from 'supertest';
import { createTestApp, type TestApp } from './support/test-app';

export const ADMIN = { username: 'admin', password: 'test-password-123' };

/** The CSRF token of the first form on a page. */
export function csrfFrom(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF token on the page');
  return match[1];
}

export type Agent = ReturnType<typeof request.agent>;

/** A cookie-keeping client that has logged in through the form; `token()` reads a fresh CSRF token. */
export async function loggedInAgent(t: TestApp, credentials = ADMIN): Promise<{ agent: Agent; token: (page?: string) => Promise<string> }> {
  const agent = request.agent(t.app.getHttpServer() as Server);
  const loginPage = await agent.get('/login').expect(200);
  await agent
    .post('/login')
    .type('form')
    .send({ ...credentials, _csrf: csrfFrom(loginPage.text) })
    .expect(303)
    .expect('Location', '/dashboard');
  const token = async (page = '/licenses/new') => csrfFrom((await agent.get(page).expect(200)).text);
  return { agent, token };
}

/** A test app with the admin logged in on the dashboard, and a CSRF token of that session. */
export async function openDashboard(): Promise<{ t: TestApp; agent: Agent; token: string }> {
  const t = await createTestApp();
  const session = await loggedInAgent(t);
  return { t, agent: session.agent, token: await session.token() };
}

/** Submits a dashboard form with the session's CSRF token. */
export function postForm(agent: Agent, token: string, url: string, fields: Record<string, string | string[]> = {}) {
  return agent
    .post(url)
    .type('form')
    .send({ ...fields, _csrf: token });
}

/** A form as a browser sends it: repeated fields repeated (`ids=1&ids=2`), with the CSRF token. */
export function postFields(agent: Agent, token: string, url: string, fields: [string, string][]) {
  return agent
    .post(url)
    .type('form')
    .send(new URLSearchParams([...fields, ['_csrf', token]]).toString());
}

/** The one-time message a page shows (type and text), read by loading it. */
export async function flashOf(agent: Agent, url: string): Promise<string[] | undefined> {
  return /class="flash flash-(\w+)" role="status">([^<]*)</.exec((await agent.get(url).expect(200)).text)?.slice(1);
}

/** Attribute values as a browser reads them (Handlebars also escapes `=` and quotes). */
export const unescape = (html: string) =>
  html
    .replace(/&#x3D;/g, '=')
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, '&');
