// The JavaScript and TypeScript parser the closure reads files with (@babel/parser), in one module that
// ./loads.ts loads at its first parse, never at start: the bundles carry it as a file of its own (dist/parser.js,
// scripts/build-options.mjs).
export { parse } from '@babel/parser';
