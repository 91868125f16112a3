import { Controller, Get, Post } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { parseLimit, RawBodyRoute, rawBodyParsers } from './raw-body';

@Controller('api/v1/things')
class ThingsController {
  @Post('inbound/events')
  @RawBodyRoute({ limit: '1mb' })
  inbound(): void {}

  @Post('json')
  json(): void {}

  @Get('inbound/events')
  read(): void {}
}

@Controller('api/v1/params')
class ParamsController {
  @Post(':id/events')
  @RawBodyRoute({ limit: '1kb' })
  inbound(): void {}
}

/**
 * The seam into Nest's route metadata (docs/stores.md, Raw bodies): if Nest moves the controller or method path,
 * these fail instead of a store's events silently falling back to the 64 KiB JSON parser.
 */
describe('rawBodyParsers', () => {
  const parsersOf = async (...controllers: (new () => unknown)[]) => {
    const moduleRef = await Test.createTestingModule({ controllers }).compile();
    return rawBodyParsers(moduleRef.createNestApplication({ logger: false }));
  };

  it('finds a declared route by method and full path, as Express matches it (case, trailing slash)', async () => {
    const parsers = await parsersOf(ThingsController);
    expect(parsers.parserFor('POST', '/api/v1/things/inbound/events')).toBeInstanceOf(Function);
    expect(parsers.parserFor('post', '/API/v1/things/inbound/events/')).toBeInstanceOf(Function);
  });

  it('leaves every other route, and other methods on the same path, to the JSON parser', async () => {
    const parsers = await parsersOf(ThingsController);
    expect(parsers.parserFor('POST', '/api/v1/things/json')).toBeUndefined();
    expect(parsers.parserFor('GET', '/api/v1/things/inbound/events')).toBeUndefined();
    expect(parsers.parserFor('POST', '/api/v1/things/inbound')).toBeUndefined();
  });

  it('refuses a route with parameters at start (an exact path lookup could not match it)', async () => {
    await expect(parsersOf(ParamsController)).rejects.toThrow(/routes with parameters are not supported/);
  });

  it('reads limits as body-parser does', () => {
    expect(parseLimit('1mb')).toBe(1024 * 1024);
    expect(parseLimit('64kb')).toBe(64 * 1024);
    expect(parseLimit('10b')).toBe(10);
    expect(() => parseLimit('lots')).toThrow(/give bytes/);
  });
});
