import pino from 'pino';
import { formatLogLine, humanReadableLog } from './log-format';
import { logDestinationFor } from './logging';

describe('human-readable log lines (stdout is a terminal)', () => {
  const time = Date.UTC(2026, 10, 23, 14, 3, 7, 412);

  it('writes time, level, message and request id of a request line, without the fields the message already says', () => {
    const line = JSON.stringify({
      level: 30,
      time,
      pid: 1,
      hostname: 'h',
      req: { id: 'req-1', method: 'GET', url: '/api/v1/health', ip: '::1' },
      res: { statusCode: 200 },
      responseTime: 3,
      msg: 'GET /api/v1/health 200 3ms',
    });
    expect(formatLogLine(line)).toBe('14:03:07.412 INFO  GET /api/v1/health 200 3ms (req-1)\n');
  });

  it("names Nest's context, keeps other fields, colours the level and puts an error's stack below", () => {
    const line = JSON.stringify({ level: 50, time, context: 'Redis', msg: 'down', attempt: 3, err: { stack: 'Error: x\n    at y' } });
    expect(formatLogLine(line, true)).toBe('14:03:07.412 \x1b[31mERROR\x1b[0m [Redis] down {"attempt":3}\n  Error: x\n      at y\n');
  });

  it('passes a line that is not JSON through', () => {
    expect(formatLogLine('plain text')).toBe('plain text\n');
  });

  it('is a pino destination', () => {
    const written: string[] = [];
    pino({ level: 'info', base: undefined }, humanReadableLog({ write: (s: string) => written.push(s) }, false)).warn('careful');
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}careful\n$/);
  });

  it('is chosen when stdout is a terminal; otherwise pino writes JSON to stdout', () => {
    const written: string[] = [];
    const terminal = { isTTY: true, write: (s: string) => written.push(s) > 0 };
    expect(logDestinationFor(terminal)).toBeDefined();
    logDestinationFor(terminal)?.write(JSON.stringify({ level: 30, time, msg: 'hello' }));
    expect(written[0]).toContain('INFO');
    expect(logDestinationFor({ isTTY: false, write: () => true })).toBeUndefined();
  });
});
