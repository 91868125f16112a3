import { Body, Controller, Param, Post, Query } from '@nestjs/common';
import { takesBody } from './empty-body';

// The seam into Nest's route-argument metadata (docs/performance.md, Framework seams): fails when Nest changes how it records @Body.
@Controller('probe')
class ProbeController {
  @Post('with-body')
  withBody(@Param('id') _id: string, @Body() _body: object) {}

  @Post('without-body')
  withoutBody(@Param('id') _id: string, @Query() _query: object) {}

  @Post('nothing')
  nothing() {}
}

describe('takesBody (which admin routes take a body)', () => {
  it('sees a @Body parameter beside others', () => expect(takesBody(ProbeController, 'withBody')).toBe(true));
  it('sees none on a handler with only @Param and @Query', () => expect(takesBody(ProbeController, 'withoutBody')).toBe(false));
  it('sees none on a handler without parameters', () => expect(takesBody(ProbeController, 'nothing')).toBe(false));
});
