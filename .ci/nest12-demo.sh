#!/usr/bin/env bash
# Proves nestjs-redis-lock under Nest 12, the peer major the jest suite cannot load.
#
# Nest 12 ships ES modules only; jest on Node 20 cannot load them, so `npm test` runs on the
# Nest 11 devDependencies and this script covers Nest 12 the way a user would meet it:
#   1. build the library, `npm pack` it and build the sample app (compiled CommonJS);
#   2. in a temp project outside the repo, `npm install` Nest 12, ioredis 5 and the tarball;
#   3. typecheck the sample app's sources against Nest 12 and the packed library's .d.ts;
#   4. run the compiled sample app's demo there: Nest 12 is loaded through require(esm)
#      (Node >= 20.19), the library from node_modules/nestjs-redis-lock/dist;
#   5. import the library from an ES module and boot RedisLockModule in a Nest 12 context.
# Redis for the demo: REDIS_URL, else 127.0.0.1:6379, else a redis-server the demo starts.
# Set KEEP_NEST12_DIR=1 to keep the temp project for inspection.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

step() { printf '\n==> [nest12] %s\n' "$*"; }
fail() {
  printf '\n[nest12] FAILED: %s\n' "$*" >&2
  exit 1
}

node -e 'process.exit(process.features.require_module ? 0 : 1)' ||
  fail "Node $(node --version) cannot require() ES modules; Nest 12 needs Node >= 20.19 or >= 22.12."

WORK=$(mktemp -d "${TMPDIR:-/tmp}/nestjs-redis-lock-nest12.XXXXXX")
cleanup() {
  if [[ -n "${KEEP_NEST12_DIR:-}" ]]; then echo "[nest12] temp project kept in $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
APP="$WORK/app"
mkdir "$APP"

step "Build the library and the sample app, pack the library"
npm run build --silent
npx nest build sample-app
TARBALL=$(npm pack --ignore-scripts --silent --pack-destination "$WORK" | tail -n 1)
[[ -f "$WORK/$TARBALL" ]] || fail "npm pack did not produce a tarball (got '$TARBALL')"
echo "packed $TARBALL"

step "Install Nest 12, ioredis 5 and the packed library into $APP"
cat >"$APP/package.json" <<'EOF'
{ "name": "nestjs-redis-lock-nest12-check", "private": true, "type": "commonjs" }
EOF
(
  cd "$APP"
  npm install --no-audit --no-fund --loglevel=error \
    '@nestjs/common@^12' '@nestjs/core@^12' '@nestjs/platform-express@^12' '@nestjs/schedule@^12' \
    'ioredis@^5' 'rxjs@^7' 'reflect-metadata@^0.2' \
    'typescript@~5.9' '@types/node@^20' \
    "$WORK/$TARBALL"
)
cd "$APP"
node -e '
  const v = (name) => require(`${name}/package.json`).version;
  const nest = v("@nestjs/core");
  console.log(`@nestjs/core ${nest}, @nestjs/common ${v("@nestjs/common")}, ` +
    `@nestjs/platform-express ${v("@nestjs/platform-express")}, ioredis ${v("ioredis")}, ` +
    `nestjs-redis-lock ${v("nestjs-redis-lock")}`);
  if (!nest.startsWith("12.")) { console.error(`expected @nestjs/core 12, got ${nest}`); process.exit(1); }
  const lib = require.resolve("nestjs-redis-lock");
  if (!lib.startsWith(process.cwd() + "/node_modules/")) {
    console.error(`nestjs-redis-lock resolves to ${lib}, not to the installed tarball`); process.exit(1);
  }
' || fail "the temp project does not have Nest 12 and the packed library"

step "Typecheck the sample app against Nest 12 and the packed library's types"
# Same layout as the repo: the demo imports the shared redis-server helper from tools/redis,
# which uses tools/time.ts.
mkdir -p sample-app/src tools/redis
cp "$ROOT"/sample-app/src/*.ts sample-app/src/
cp "$ROOT"/tools/redis/*.ts tools/redis/
cp "$ROOT"/tools/time.ts tools/
cat >tsconfig.json <<'EOF'
{
  "compilerOptions": {
    "target": "ES2022",
    "lib": ["ES2022", "ESNext.Disposable"],
    "module": "node20",
    "moduleResolution": "nodenext",
    "strict": true,
    "experimentalDecorators": true,
    "emitDecoratorMetadata": true,
    "esModuleInterop": true,
    "skipLibCheck": false,
    "noEmit": true,
    "types": ["node"]
  },
  "include": ["sample-app/src", "tools/redis", "tools/time.ts"]
}
EOF
npx --no-install tsc -p tsconfig.json || fail "the sample app does not typecheck against Nest 12"
echo "typecheck OK (module node20: CommonJS code importing ESM-only Nest 12)"

step "Run the sample app's demo on Nest 12 (compiled CommonJS, Nest loaded by require(esm))"
cp -R "$ROOT/dist-sample" dist-sample
node dist-sample/sample-app/src/demo.js || fail "the demo failed on Nest 12"

step "Use the library from an ES module (named imports, RedisLockModule in a Nest 12 context)"
cat >esm-consumer.mjs <<'EOF'
import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { LockError, LockService, Locked, RedisLockModule } from 'nestjs-redis-lock';

for (const [name, value] of Object.entries({ LockError, LockService, Locked, RedisLockModule })) {
  if (typeof value !== 'function') throw new Error(`named import ${name} is ${typeof value}`);
}
// lazyConnect: the context boots and closes without talking to Redis.
const app = await NestFactory.createApplicationContext(
  RedisLockModule.forRoot({ redis: { lazyConnect: true } }),
  { logger: ['warn', 'error'] },
);
const locks = app.get(LockService);
if (!(locks instanceof LockService)) throw new Error('LockService did not resolve');
await app.close();
console.log('ESM consumer OK: named imports, RedisLockModule.forRoot, LockService, app.close()');
EOF
node esm-consumer.mjs || fail "the library does not work from an ES module under Nest 12"

printf '\n[nest12] OK: nestjs-redis-lock works under Nest %s\n' \
  "$(node -p 'require("@nestjs/core/package.json").version')"
