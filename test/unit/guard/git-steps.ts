// The git steps both guards' "git after taking in" tests run (node-strings.test.ts, python-guard.test.ts): a server
// reads steps.json and runs `git <step>` for each, `@S@` its scratch folder, `@O@` a folder outside the workspace
// and scratch folders, `@W@` the workspace. EVERYDAY is what servers do with a repository they made.
export const R = ['-C', '@S@/r'];
export const INIT = [
  ['init', '-q', '@S@/r'],
  [...R, 'config', 'user.name', 'a'],
  [...R, 'config', 'user.email', 'a@b'],
];
export const EVERYDAY = [
  ...INIT,
  [...R, 'commit', '-q', '--allow-empty', '-m', 'x'],
  [...R, 'switch', '-q', '-c', 'b2'],
  [...R, 'status', '-uno', '--short'],
  [...R, 'log', '--oneline'],
];
