// Hostile strings for the trust panel's XSS test: markup, event handlers, javascript: URLs, CSS and template
// injection, attempts to close the panel's own elements, and the same hidden behind bidi, zero-width and control
// characters. If any ran it would log its marker ("XSS-<n>") or open a dialog; the test watches for both, for CSP
// violations and for any element the panel does not make itself.
export const PAYLOADS = [
  `<script>console.error('XSS-1')</script>`,
  `<img src=x onerror="console.error('XSS-2')">`,
  `<svg onload="console.error('XSS-3')"></svg>`,
  `"><img src=x onerror=console.error('XSS-4')>`,
  `'><script>console.error('XSS-5')</script>`,
  `javascript:console.error('XSS-6')`,
  `<iframe srcdoc="<script>parent.console.error('XSS-7')</script>"></iframe>`,
  `<a href="javascript:console.error('XSS-8')">click me</a>`,
  `<body onload=console.error('XSS-9')>`,
  `<details open ontoggle=console.error('XSS-10')>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=console.error('XSS-11')>`,
  `{{constructor.constructor('console.error("XSS-12")')()}}`,
  "${console.error('XSS-13')}",
  `<style>@import 'http://127.0.0.1:9/xss-14.css';</style>`,
  `<link rel=stylesheet href=http://127.0.0.1:9/xss-15.css>`,
  `<meta http-equiv="refresh" content="0;url=javascript:console.error('XSS-16')">`,
  `<object data="javascript:console.error('XSS-17')"></object>`,
  `<embed src="javascript:console.error('XSS-18')">`,
  `<input autofocus onfocus=console.error('XSS-19')>`,
  `<video><source onerror=console.error('XSS-20')></video>`,
  `<base href="javascript:console.error('XSS-21')//">`,
  `<form action="javascript:console.error('XSS-22')"><button>go</button></form>`,
  `\u202E<img src=x onerror=console.error('XSS-23')>\u202C`,
  `<scr\u200Bipt>console.error('XSS-24')</scr\u200Bipt>`,
  `</pre></code></div><img src=x onerror=console.error('XSS-25')>`,
  `<vscode-button onclick=console.error('XSS-26')>press</vscode-button>`,
  `&lt;img src=x onerror=console.error('XSS-27')&gt;`,
  `<img src=x onerror=alert('XSS-28')>`,
  `<svg><animate onbegin=console.error('XSS-29') attributeName=x dur=1s>`,
  `\u0000\u001B[31m<script>console.error('XSS-30')</script>\u{E0041}`,
];

export const MARKER = /XSS-\d+/;
