/** The text armor of licence files and activation requests (docs/licences.md, Offline use and air-gapped machines): base64 in 64-character lines between two markers. */
export const LICENSE_FILE_LABEL = 'LICENSE FILE';
export const ACTIVATION_REQUEST_LABEL = 'ACTIVATION REQUEST';
const MAX_ARMOR_LENGTH = 256 * 1024;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function armor(label: string, json: unknown): string {
  const base64 = Buffer.from(JSON.stringify(json), 'utf8').toString('base64');
  const lines = base64.match(/.{1,64}/g) ?? [];
  return [`-----BEGIN ${label}-----`, ...lines, `-----END ${label}-----`, ''].join('\n');
}

/** Parses an armor strictly: the markers, base64 only between them, then JSON. Returns undefined when any part is wrong. */
export function dearmor(label: string, text: unknown): unknown {
  if (typeof text !== 'string' || text.length > MAX_ARMOR_LENGTH) return undefined;
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  if (lines[0] !== `-----BEGIN ${label}-----` || lines[lines.length - 1] !== `-----END ${label}-----`) return undefined;
  const base64 = lines.slice(1, -1).join('');
  if (base64 === '' || !BASE64.test(base64)) return undefined;
  try {
    return JSON.parse(Buffer.from(base64, 'base64').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}
