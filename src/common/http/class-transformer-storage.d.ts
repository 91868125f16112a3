// class-transformer's metadata storage (its decorators' registry) has no typed entry point of its own.
declare module 'class-transformer/cjs/storage' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage';
}
