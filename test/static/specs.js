/** The static checks' spec files: run by test/static/jest.config.js (`npm run lint:static`), left out of `npm test`. */
module.exports = ['src/boundaries\\.spec\\.ts$', 'src/events/recorded-writes\\.spec\\.ts$', 'src/docs-citations\\.spec\\.ts$'];
