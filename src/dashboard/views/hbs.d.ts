// hbs ships no types; only what the dashboard and mail/ use.
declare module 'hbs' {
  interface HbsInstance {
    __express: (path: string, options: object, callback: (err: Error | null, html?: string) => void) => void;
    registerHelper(name: string, helper: (...args: never[]) => unknown): void;
    registerPartial(name: string, template: string): void;
    handlebars: { compile(template: string, options?: { noEscape?: boolean; strict?: boolean }): (context: object) => string };
  }
  const hbs: HbsInstance & { create(): HbsInstance };
  export default hbs;
}
