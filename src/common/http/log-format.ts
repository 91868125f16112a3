import type { DestinationStream } from 'pino';

const LEVELS: Record<number, { name: string; color: number }> = {
  10: { name: 'TRACE', color: 90 },
  20: { name: 'DEBUG', color: 90 },
  30: { name: 'INFO', color: 32 },
  40: { name: 'WARN', color: 33 },
  50: { name: 'ERROR', color: 31 },
  60: { name: 'FATAL', color: 35 },
};

// Said by every line or by the message itself.
const SHOWN = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'context', 'req', 'res', 'responseTime', 'err']);

interface LogEntry {
  level?: number;
  time?: number;
  msg?: string;
  context?: string;
  req?: { id?: string };
  err?: { stack?: string; message?: string };
  [field: string]: unknown;
}

/**
 * One pino JSON line as a line for a person: `14:03:07.412 INFO  [NestApplication] message (request id) {other fields}`,
 * the level coloured when `color`, an error's stack below it. A line that is not JSON passes through unchanged.
 */
export function formatLogLine(json: string, color = false): string {
  let entry: LogEntry;
  try {
    entry = JSON.parse(json) as LogEntry;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = LEVELS[entry.level ?? 30] ?? { name: String(entry.level), color: 0 };
  const time = new Date(entry.time ?? Date.now()).toISOString().slice(11, 23);
  const name = level.name.padEnd(5);
  const rest = Object.fromEntries(Object.entries(entry).filter(([key]) => !SHOWN.has(key)));
  const parts = [
    time,
    color ? `\x1b[${level.color}m${name}\x1b[0m` : name,
    entry.context ? `[${entry.context}]` : '',
    entry.msg ?? '',
    entry.req?.id ? `(${entry.req.id})` : '',
    Object.keys(rest).length ? JSON.stringify(rest) : '',
  ];
  const stack = entry.err?.stack ?? entry.err?.message;
  return parts.filter(Boolean).join(' ') + (stack ? `\n  ${stack.replace(/\n/g, '\n  ')}` : '') + '\n';
}

/** A pino destination that writes human-readable lines to `out` (a terminal), in colour unless NO_COLOR is set. */
export function humanReadableLog(out: { write(text: string): unknown }, color = !process.env.NO_COLOR): DestinationStream {
  return { write: (line: string) => void out.write(formatLogLine(line, color)) };
}
