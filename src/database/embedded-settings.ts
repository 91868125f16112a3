import { totalmem } from 'node:os';

/**
 * shared_buffers of the embedded server: an eighth of the machine's memory, at least PostgreSQL's own default
 * (128 MB) and at most 1 GB. The default alone held under a tenth of the benchmark's 1M-licence tables, so every
 * validation read its rows through the kernel's page cache (docs/performance.md). Pages are only used once read.
 */
export function embeddedSharedBuffersMb(memoryBytes: number = totalmem()): number {
  return Math.min(1024, Math.max(128, Math.floor(memoryBytes / 8 / 2 ** 20)));
}
