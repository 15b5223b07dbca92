// Copies the charting library the report page loads into media/vendor/ (a build output,
// packaged into the .vsix): Apache ECharts' self-contained browser build and its licence
// and notice, as its Apache-2.0 licence asks of a redistribution, and the licences of what
// it embeds. The webview never loads anything from the network; its Content-Security-Policy
// would refuse it.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const from = path.dirname(require.resolve("echarts/package.json", { paths: [path.join(__dirname, "..")] }));
const to = path.join(__dirname, "..", "media", "vendor");
fs.mkdirSync(to, { recursive: true });
// The browser build embeds zrender (BSD-3-Clause) and parts of d3 (BSD-3-Clause, named in
// ECharts' LICENSE): their licences travel with it.
const zrender = path.dirname(require.resolve("zrender/package.json", { paths: [from] }));
for (const [dir, src, dst] of [
  [from, "dist/echarts.min.js", "echarts.min.js"],
  [from, "LICENSE", "echarts.LICENSE.txt"],
  [from, "NOTICE", "echarts.NOTICE.txt"],
  [from, "licenses/LICENSE-d3", "d3.LICENSE.txt"],
  [zrender, "LICENSE", "zrender.LICENSE.txt"],
]) {
  fs.copyFileSync(path.join(dir, src), path.join(to, dst));
}
const version = require(path.join(from, "package.json")).version;
console.log(`media/vendor: echarts ${version}`);
