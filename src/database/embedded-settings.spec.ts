import { embeddedSharedBuffersMb } from './embedded-settings';

describe('embedded PostgreSQL shared_buffers', () => {
  const GiB = 2 ** 30;
  it('is an eighth of the memory between 128 MB and 1 GB', () => {
    expect(embeddedSharedBuffersMb(4 * GiB)).toBe(512);
    expect(embeddedSharedBuffersMb(2 * GiB)).toBe(256);
  });
  it('never goes below PostgreSQL default nor above 1 GB', () => {
    expect(embeddedSharedBuffersMb(512 * 2 ** 20)).toBe(128);
    expect(embeddedSharedBuffersMb(64 * GiB)).toBe(1024);
  });
});
