// A jest transform for the ESM-only @nestjs/terminus-12 (a dev dependency): jest on Node 20
// cannot load ES modules, so its files are compiled to CommonJS here. `import.meta` becomes its
// CommonJS equivalent, and a module's own `const require = createRequire(…)` is dropped: in
// CommonJS jest's `require` is that function already.
const ts = require('typescript');

module.exports = {
  process(source, filename) {
    const cjs = source
      .replace(/^const require = createRequire\(import\.meta\.url\);$/m, '')
      .replaceAll('import.meta.url', '__filename')
      .replaceAll('import.meta.dirname', '__dirname')
      .replaceAll('import.meta.resolve(', 'require.resolve(');
    const { outputText } = ts.transpileModule(cjs, {
      fileName: filename,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 },
    });
    return { code: outputText };
  },
};
