import { Injectable } from '@nestjs/common';

/** Seat (activation record) use cases the client API builds on: bind, release and check machines. */
@Injectable()
export class SeatsService {}
