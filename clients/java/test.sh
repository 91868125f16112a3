#!/usr/bin/env bash
# Builds the client and its tests with javac and runs them with java: JDK 17 or later, nothing else (no Maven, no JUnit).
# The online tests need the server built at the repository root (npm run build) and PostgreSQL at TEST_DATABASE_URL
# (default postgres://postgres@127.0.0.1:5432/postgres) with createdb/dropdb on PATH.
set -euo pipefail
cd "$(dirname "$0")"
rm -rf out
javac -Xlint:all -Werror --release 17 -d out/main $(find src/main -name '*.java')
javac -Xlint:all -Werror --release 17 -cp out/main -d out/test $(find src/test -name '*.java')
java -cp out/main example.licenceserver.client.Conformance ../../docs/test-vectors/conformance.json
java -cp out/main:out/test example.licenceserver.client.TestMain "$@"
