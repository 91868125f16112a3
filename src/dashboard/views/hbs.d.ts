// hbs ships no types; only what the dashboard uses.
declare module 'hbs' {
  interface HbsInstance {
    __express: (path: string, options: object, callback: (err: Error | null, html?: string) => void) => void;
    registerHelper(name: string, helper: (...args: never[]) => unknown): void;
    registerPartial(name: string, template: string): void;
  }
  const hbs: HbsInstance & { create(): HbsInstance };
  export default hbs;
}
