// The extension README as an installed extension's details page can show it offline (scripts/package.mjs says why):
// every relative image becomes a data:image/png URI of the PNG file it names in `repo`. Throws, naming each, on an
// image that is not a PNG file inside `repo` and on a relative link that is not an image (it would lead nowhere
// inside the .vsix); https and data:image/png sources are kept as written.
import fs from 'node:fs';
import path from 'node:path';

/** README.extension.md with every relative image as a data: URI of the committed PNG; throws on anything else relative. */
export function inlineImages(md, repo) {
  const bad = [];
  const inline = (src) => {
    if (/^(https:|data:image\/png;)/.test(src)) return src;
    const file = path.resolve(repo, decodeURIComponent(src));
    if (!file.startsWith(repo + path.sep) || !/\.png$/i.test(file) || !fs.existsSync(file)) { bad.push(`image ${src}: not a PNG file of this checkout`); return src; }
    return `data:image/png;base64,${fs.readFileSync(file).toString('base64')}`;
  };
  let text = md.replace(/(!\[[^\]]*\]\(\s*)([^)\s]+)/g, (_, pre, src) => pre + inline(src));
  text = text.replace(/(<img\b[^>]*\bsrc\s*=\s*["'])([^"']+)/gi, (_, pre, src) => pre + inline(src));
  // a relative link that is not an image would be relative to nothing in the installed extension
  for (const m of text.matchAll(/(?<!!)\[[^\]]*\]\(\s*([^)\s]+)/g)) if (!/^(https?:|mailto:|#)/.test(m[1])) bad.push(`link ${m[1]}: relative, leads nowhere in the .vsix`);
  if (bad.length) throw new Error(`README.extension.md: ${bad.join('; ')}`);
  return text;
}

