// The extension README as an installed extension's details page can show it offline (scripts/package.mjs says why:
// no image source renders there without the network, not even data: URIs): every relative image is replaced by its
// alt text as an italic line, so the page shows words where it would show a broken image. Throws, naming each, on
// an image that is not a PNG file inside `repo` and on a relative link that is not an image (it would lead nowhere
// inside the .vsix); https images and links are kept as written.
import fs from 'node:fs';
import path from 'node:path';

/** README.extension.md with every relative image as its alt text; throws on anything else relative. */
export function imagesAsText(md, repo) {
  const bad = [];
  const check = (src) => {
    const file = path.resolve(repo, decodeURIComponent(src));
    if (!file.startsWith(repo + path.sep) || !/\.png$/i.test(file) || !fs.existsSync(file))
      bad.push(`image ${src}: not a PNG file of this checkout`);
  };
  let text = md.replace(/!\[([^\]]*)\]\(\s*([^)\s]+)\)/g, (all, alt, src) => (/^https:/.test(src) ? all : (check(src), `*${alt}*`)));
  text = text.replace(/<img\b[^>]*\bsrc\s*=\s*["']([^"']+)["'][^>]*>/gi, (all, src) => {
    if (/^https:/.test(src)) return all;
    check(src);
    return `*${/\balt\s*=\s*["']([^"']*)["']/i.exec(all)?.[1] ?? ''}*`;
  });
  for (const m of text.matchAll(/(?<!!)\[[^\]]*\]\(\s*([^)\s]+)/g))
    if (!/^(https?:|mailto:|#)/.test(m[1])) bad.push(`link ${m[1]}: relative, leads nowhere in the .vsix`);
  if (bad.length) throw new Error(`README.extension.md: ${bad.join('; ')}`);
  return text;
}
